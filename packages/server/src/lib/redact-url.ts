/**
 * A request URL as it may appear in a log line (SPEC §11: no token or secret in a log line, query strings
 * redacted): every query value is replaced, since any of them may carry a secret (`/admin/setup?token=…`); a name is
 * kept when it reads like a parameter name, which keeps `limit`/`cursor`/`state` visible for debugging, and redacted
 * with its value when it could itself be a secret (svc's own secret prefixes, or anything long or unusual).
 */
const REDACTED = '[redacted]';
const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;
const SECRET_PREFIX = /^(svc_|whsec_)/;

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const hash = url.indexOf('#', q);
  const end = hash === -1 ? url.length : hash;
  // One pass over the pairs, appending as it goes (every request's log line runs it: split/map/join cost ~4x more).
  let out = url.slice(0, q + 1);
  for (let start = q + 1; start <= end; ) {
    let amp = url.indexOf('&', start);
    if (amp === -1 || amp > end) amp = end;
    if (start > q + 1) out += '&';
    if (amp > start) {
      const eq = url.indexOf('=', start);
      const name = url.slice(start, eq === -1 || eq > amp ? amp : eq);
      out += PLAIN_NAME.test(name) && !SECRET_PREFIX.test(name) ? `${name}=${REDACTED}` : REDACTED;
    }
    start = amp + 1;
  }
  return out;
}
