import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

// A random per-process prefix and a counter: unique across processes and restarts, without a CSPRNG call per
// request. Request ids are for correlation, not secrets.
const PREFIX = `req_${randomBytes(9).toString('base64url')}`;
let counter = 0;
export const newRequestId = (): string => `${PREFIX}${(counter++).toString(36)}`;

/** The caller's X-Request-ID when it is sane (so its logs and ours correlate), else a fresh one. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE.test(given) ? given : newRequestId();
}
