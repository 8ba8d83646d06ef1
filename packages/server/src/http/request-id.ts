import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export const newRequestId = (): string => `req_${randomBytes(12).toString('base64url')}`;

/** The caller's X-Request-ID when it is sane (so its logs and ours correlate), else a fresh one. */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE.test(given) ? given : newRequestId();
}
