/**
 * Places per owner (an API token, an admin session) in this process: its open event streams
 * (SVC_STREAMS_PER_TOKEN), its waiting long-polls (SVC_LONG_POLLS_PER_TOKEN).
 */
export class OwnerSlots {
  private readonly held = new Map<string, number>();
  private taken = 0;

  constructor(private readonly max: number) {}

  /** Whether the owner has a place left. */
  free(owner: string): boolean {
    return (this.held.get(owner) ?? 0) < this.max;
  }

  /** Places taken, over every owner. */
  get total(): number {
    return this.taken;
  }

  /** Takes a place and returns its release (idempotent), or null when the owner holds `max` already. */
  take(owner: string): (() => void) | null {
    if (!this.free(owner)) return null;
    this.held.set(owner, (this.held.get(owner) ?? 0) + 1);
    this.taken += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.taken -= 1;
      const left = (this.held.get(owner) ?? 1) - 1;
      if (left > 0) this.held.set(owner, left);
      else this.held.delete(owner);
    };
  }
}
