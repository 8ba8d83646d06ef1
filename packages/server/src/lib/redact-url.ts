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
  const query = url.slice(q + 1, hash === -1 ? undefined : hash);
  if (query === '') return url.slice(0, q + 1);
  const pairs = query.split('&').map((pair) => {
    if (pair === '') return pair;
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    return PLAIN_NAME.test(name) && !SECRET_PREFIX.test(name) ? `${name}=${REDACTED}` : REDACTED;
  });
  return `${url.slice(0, q)}?${pairs.join('&')}`;
}
