import pg from 'pg';

export interface Listener {
  /**
   * The notifications heard so far (channel and payload), once a marker sent after them has arrived: PostgreSQL
   * delivers a connection's notifications in commit order, so everything committed before the marker is in.
   */
  heardSoFar(): Promise<Array<{ channel: string; payload: string }>>;
  close(): Promise<void>;
}

/** A connection of its own LISTENing on `channels` of the database at `url`. */
export async function listenTo(url: string, channels: readonly string[]): Promise<Listener> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const heard: Array<{ channel: string; payload: string }> = [];
  const markers = new Map<string, () => void>();
  client.on('notification', (n) => {
    const marker = markers.get(n.payload ?? '');
    if (marker) marker();
    else heard.push({ channel: n.channel, payload: n.payload ?? '' });
  });
  for (const channel of channels) await client.query(`listen ${channel}`);
  return {
    async heardSoFar() {
      const payload = `marker-${markers.size}`;
      const arrived = new Promise<void>((resolve) => markers.set(payload, resolve));
      await client.query('select pg_notify($1, $2)', [channels[0], payload]);
      await arrived;
      return [...heard];
    },
    close: () => client.end(),
  };
}
