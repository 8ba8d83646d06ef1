import dgram from 'node:dgram';
import net from 'node:net';

/**
 * A tiny authoritative DNS server on loopback UDP, for tests that need real resolution without the network: A and
 * AAAA answers for the names it is given, NXDOMAIN for the rest, and a silent mode (per name or for everything)
 * that reads the question and never answers, like a lame authoritative server.
 */

export type NameBehaviour = { a?: string[]; aaaa?: string[]; ttl?: number } | 'nxdomain' | 'silent';

export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as `dns.Resolver#setServers` takes it. */
  readonly address: string;
  set(name: string, behaviour: NameBehaviour): void;
  /** Everything unanswered from now on (true), or answered as set (false). */
  silence(on: boolean): void;
  /** Questions received for `name` (A and AAAA count separately), answered or not. */
  queries(name: string): number;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

export async function startDnsServer(names: Record<string, NameBehaviour> = {}): Promise<TestDnsServer> {
  const table = new Map(Object.entries(names).map(([k, v]) => [k.toLowerCase(), v]));
  const counts = new Map<string, number>();
  let silent = false;
  const socket = dgram.createSocket('udp4');

  socket.on('message', (msg, from) => {
    const question = parseQuestion(msg);
    if (!question) return;
    counts.set(question.name, (counts.get(question.name) ?? 0) + 1);
    const behaviour = table.get(question.name) ?? 'nxdomain';
    if (silent || behaviour === 'silent') return;
    socket.send(answer(msg, question, behaviour), from.port, from.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });

  return {
    address: `127.0.0.1:${socket.address().port}`,
    set: (name, behaviour) => void table.set(name.toLowerCase(), behaviour),
    silence: (on) => void (silent = on),
    queries: (name) => counts.get(name.toLowerCase()) ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

interface Question {
  name: string;
  type: number;
  /** Byte offset just past the question section. */
  end: number;
}

function parseQuestion(msg: Buffer): Question | null {
  if (msg.length < 12 || msg.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let at = 12;
  while (at < msg.length && msg[at] !== 0) {
    const len = msg[at]!;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += 1 + len;
  }
  if (at + 5 > msg.length) return null;
  return { name: labels.join('.').toLowerCase(), type: msg.readUInt16BE(at + 1), end: at + 5 };
}

function answer(query: Buffer, q: Question, behaviour: Exclude<NameBehaviour, 'silent'>): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  const rd = query[2]! & 0x01;
  const records = behaviour === 'nxdomain' ? [] : q.type === TYPE_A ? (behaviour.a ?? []) : q.type === TYPE_AAAA ? (behaviour.aaaa ?? []) : [];
  // QR + AA + RD as asked; RA; RCODE 3 (NXDOMAIN) or 0 (an empty answer is NODATA).
  header[2] = 0x84 | rd;
  header[3] = 0x80 | (behaviour === 'nxdomain' ? 3 : 0);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  const ttl = behaviour === 'nxdomain' ? 0 : (behaviour.ttl ?? 300);
  const rrs = records.map((address) => {
    const rdata = q.type === TYPE_A ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // a pointer to the question's name
    rr.writeUInt16BE(q.type, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(ttl, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, q.end), ...rrs]);
}

function ipv6Bytes(address: string): Buffer {
  if (net.isIPv6(address) === false) throw new Error(`not IPv6: ${address}`);
  const [head = '', tail = ''] = address.split('::');
  const words = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const h = words(head);
  const t = address.includes('::') ? words(tail) : [];
  const all = [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, i * 2));
  return out;
}
