import type { HrTime } from '@opentelemetry/api';

/** A hex digit's value (0-9, a-f, A-F). */
const nibble = (c: number): number => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);

/** A growable buffer with protobuf's wire types (varints, fixed64, length-delimited). */
export class ProtoWriter {
  buf: Buffer;
  pos = 0;
  constructor(size = 4096) {
    this.buf = Buffer.allocUnsafe(size);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  tag(field: number, wire: number): void {
    this.varint((field << 3) | wire);
  }

  /** An unsigned or signed integer; a negative one as its 64-bit two's complement (ten bytes), as protobuf's int64. */
  varint(value: number): void {
    this.room(10);
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0;
      while (v > 0x7f) {
        this.buf[this.pos++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      this.buf[this.pos++] = v;
      return;
    }
    let low: number;
    let high: number;
    const abs = Math.abs(value);
    low = abs >>> 0;
    high = Math.floor(abs / 0x100000000) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 0x7f) {
      this.buf[this.pos++] = (low & 0x7f) | 0x80;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    this.buf[this.pos++] = low;
  }

  fixed32(value: number): void {
    this.room(4);
    this.pos = this.buf.writeUInt32LE(value >>> 0, this.pos);
  }

  double(value: number): void {
    this.room(8);
    this.pos = this.buf.writeDoubleLE(value, this.pos);
  }

  /**
   * An HrTime as nanoseconds since the epoch, fixed64. Seconds × 1e9 is past a double's exact integers, so the seconds
   * are split at 2^16 and each part's product (below 2^53) is carried into the low and high 32 bits.
   */
  time(t: HrTime): void {
    this.room(8);
    const seconds = Math.trunc(t[0]);
    const lowPart = (seconds & 0xffff) * 1e9;
    const highPart = Math.floor(seconds / 0x10000) * 1e9;
    const low = (lowPart % 0x100000000) + (highPart % 0x10000) * 0x10000 + Math.trunc(t[1]);
    const high = Math.floor(lowPart / 0x100000000) + Math.floor(highPart / 0x10000) + Math.floor(low / 0x100000000);
    this.buf.writeUInt32LE(low >>> 0, this.pos);
    this.buf.writeUInt32LE(high >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** UTF-8 with its length. Short ASCII strings (names, ids, addresses: nearly all of a span) byte by byte in JS. */
  string(s: string): void {
    const n = s.length;
    if (n < 256) {
      let ascii = true;
      for (let i = 0; i < n; i++) {
        if (s.charCodeAt(i) > 0x7f) {
          ascii = false;
          break;
        }
      }
      if (ascii) {
        this.varint(n);
        this.room(n);
        const buf = this.buf;
        let p = this.pos;
        for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
        this.pos = p;
        return;
      }
    }
    const size = Buffer.byteLength(s, 'utf8');
    this.varint(size);
    this.room(size);
    this.pos += this.buf.write(s, this.pos, size, 'utf8');
  }

  /** A trace or span id (hex, as the SDK makes them), written as its bytes. */
  hexBytes(hex: string): void {
    const n = hex.length >>> 1;
    this.varint(n);
    this.room(n);
    const buf = this.buf;
    let p = this.pos;
    // n whole bytes, as the length says (an odd last digit is dropped, as the SDK's hexToBinary drops it).
    for (let i = 0; i < n * 2; i += 2) buf[p++] = (nibble(hex.charCodeAt(i)) << 4) | nibble(hex.charCodeAt(i + 1));
    this.pos = p;
  }

  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Opens a length-delimited field: one byte is kept for the length, and end() moves the body when it needs more. */
  begin(field: number): number {
    this.tag(field, 2);
    this.room(1);
    return this.pos++;
  }

  end(at: number): void {
    const length = this.pos - at - 1;
    let size = 1;
    for (let v = length >>> 7; v > 0; v >>>= 7) size++;
    if (size > 1) {
      this.room(size - 1);
      this.buf.copyWithin(at + size, at + 1, this.pos);
      this.pos += size - 1;
    }
    let v = length;
    let p = at;
    while (v > 0x7f) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
