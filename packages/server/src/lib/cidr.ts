import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** Address ranges, as `SVC_WEBHOOK_ALLOW_CIDRS` names them. */
export type CidrList = ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

/** "127.0.0.0/8, ::1/128"; a bare address means that one host. Empty text is an empty list. */
export function parseCidrList(text: string): CidrList {
  const list: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const [addr = '', bits, ...rest] = entry.split('/');
    // net.isIP refuses the shorthand IPv4 forms ipaddr.js would accept ("127.1", "0x7f.1"), which nobody means here.
    const family = net.isIP(addr);
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (family === 0 || addr.includes('%') || rest.length > 0 || !(prefix >= 0 && prefix <= (family === 6 ? 128 : 32))) {
      throw new Error(`"${entry}" is not an address or an address/prefix`);
    }
    list.push([ipaddr.parse(addr), prefix]);
  }
  return list;
}

