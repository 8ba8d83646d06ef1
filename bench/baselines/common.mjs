// What the baselines share with svc's wire format: ULID-style prefixed ids, RFC 3339 times, the list JSON.
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

export function newId(prefix, ms = Date.now()) {
  let time = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const r = randomBytes(16);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[r[i] % 32];
  return `${prefix}_${time}${rand}`;
}

export const sha256Hex = (s) => createHash('sha256').update(s).digest('hex');
export const iso = (ms) => new Date(ms).toISOString();

export function bearer(header) {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m ? m[1] : null;
}

export function recordListJson(rows, nextCursor) {
  const items = rows.map(
    (r) =>
      `{"id":"${r.id}","collection":"${r.collection}","version":${r.version},"createdAt":"${iso(r.created_at)}","updatedAt":"${iso(r.updated_at)}","data":${r.data}}`,
  );
  return `{"items":[${items.join(',')}],"nextCursor":${nextCursor === null ? 'null' : JSON.stringify(nextCursor)}}`;
}

export const encodeCursor = (id) => Buffer.from(JSON.stringify({ after: id })).toString('base64url');

export function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function readBody(req, max = 1 << 20) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => {
      n += c.length;
      if (n > max) reject(new Error('too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
