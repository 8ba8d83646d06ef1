import net from 'node:net';

/**
 * Destination names (SPEC §12): URLs that never lead to a public receiver, whatever their name resolves to today.
 * An address check alone lets them through while a resolver happens to answer with a public address (a split-horizon
 * DNS, a search domain, a squatted name), and the next look-up from another network or another day may lead inside.
 * The guard (destination-guard.ts) refuses them unless every address the host resolves to is in the operator's
 * `SVC_WEBHOOK_ALLOW_CIDRS`: the one way an operator says "these private places are mine".
 */

/**
 * Special-use names that public DNS never serves: `.local` (mDNS, RFC 6762), `.localhost` (RFC 6761), `.internal`
 * (ICANN's private-use TLD, 2024), `.home.arpa` (home networks, RFC 8375) and `.onion` (Tor, RFC 7686: never to be
 * asked of DNS at all). Compared by label, so `notlocal` is not `.local`.
 */
export const LOCAL_ONLY_SUFFIXES: readonly string[] = ['local', 'localhost', 'internal', 'home.arpa', 'onion'];

/** A host name as compared: lower case (WHATWG lowers ASCII already; a resolver's caller may not), no trailing dots. */
const bareName = (host: string): string => host.toLowerCase().replace(/\.+$/, '');

/**
 * Why a host name is refused by itself, or null. IP literals are judged by address alone (destination-guard.ts);
 * a single label (`intranet`) is completed by the resolver's search list, so it means a different host on each
 * network svc runs in.
 */
export function hostNameProblem(host: string): string | null {
  if (net.isIP(host) !== 0) return null;
  const name = bareName(host);
  if (!name.includes('.')) return `"${name}" is a single-label name, which public DNS does not serve`;
  const suffix = LOCAL_ONLY_SUFFIXES.find((s) => name === s || name.endsWith(`.${s}`));
  return suffix === undefined ? null : `${name} is under .${suffix}, a name for local networks only`;
}

/** ASCII whitespace and control characters (C0, space, DEL). */
const WHITESPACE_OR_CONTROL = /[\u0000-\u0020\u007f]/;

/**
 * Why a URL's text is refused, or null: whitespace or a control character anywhere in it, or port 0. The text is
 * read before parsing because the WHATWG parser silently drops tabs and newlines (`https://exa<TAB>mple.com/` is
 * `example.com` to it): what an admin saved and what svc dials must not differ by invisible characters. The
 * message names the character's position, never the URL's text (its path or query may hold a secret).
 */
export function urlTextProblem(url: string): string | null {
  const at = url.search(WHITESPACE_OR_CONTROL);
  if (at >= 0) {
    const code = url.charCodeAt(at);
    const what = code === 0x20 ? 'a space' : code === 0x09 ? 'a tab' : code === 0x0a || code === 0x0d ? 'a line break' : 'a control character';
    return `holds ${what} (U+${code.toString(16).toUpperCase().padStart(4, '0')}) at position ${at}`;
  }
  // Port 0 means "any port" to a socket's bind and nothing to a connect: no receiver listens there.
  return URL.canParse(url) && new URL(url).port === '0' ? 'names port 0' : null;
}
