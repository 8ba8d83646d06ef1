/**
 * Issue 24 item 7: a target URL refused because it names this machine or its private network is, nearly always, a
 * developer's receiver on localhost. Under the URL's error, the two ways svc offers: `svc listen` (follows the event
 * feed and forwards each event, signed like a delivery, to a local URL: no target at all) and the operator's allow
 * list SVC_WEBHOOK_ALLOW_CIDRS, with the value in force as the server's problem detail states it ("now: …"; the
 * capabilities do not list it). A refusal of anything else (a public name that does not resolve, a metadata address)
 * gets no hint: neither way is the answer there.
 */
import { ApiError } from '../api.js';
import { h } from '../dom.js';

/** The reasons destination-guard.ts gives for places a developer may own. */
const OWN_PLACE = /loopback|private|link-local|unique local|site-local|shared \(CGNAT\)/i;
const IN_FORCE = /SVC_WEBHOOK_ALLOW_CIDRS[^(]*\(now:\s*([^)]*)\)/;
const IPV4 = /\b(\d{1,3}(?:\.\d{1,3}){3})\b/;

/** Null unless `err` refused the URL as a local or private destination. Classed as an error so the next submit clears it. */
export function localDevHint(err: unknown, typedUrl: string): HTMLElement | null {
  if (!(err instanceof ApiError) || err.code !== 'destination_refused') return null;
  // The URL's own message is the reason ("10.1.2.3 is a private address"); the detail adds the server's advice, which
  // names private addresses whatever the reason, and the allow list in force.
  const reason = err.problem.errors?.find((e) => e.path === '/url')?.message ?? err.problem.detail;
  if (!OWN_PLACE.test(reason)) return null;
  const inForce = IN_FORCE.exec(err.problem.detail)?.[1]?.trim() ?? null;
  const allowed = inForce === null || inForce === '' || /^(none|empty)$/i.test(inForce) ? null : inForce;
  const address = refusedAddress(reason, typedUrl);
  const example = address ? [allowed, address].filter(Boolean).join(',') : null;
  const setting = inForce === null ? 'its value in force is not in this answer'
    : allowed === null ? 'now empty: no private address is allowed' : `now ${allowed}`;
  return h('div', { class: 'field-error local-dev-hint', testid: 'local-dev-hint' },
    h('p', { class: 'local-dev-title' }, 'Receiving webhooks on your machine?'),
    h('ul', null,
      h('li', null, h('strong', null, 'svc listen'), ' follows the event feed and forwards every event to your local URL, signed like a delivery; no target is needed: ',
        h('code', { class: 'local-dev-command', testid: 'local-dev-listen' },
          `svc listen --url ${location.origin} --token <token with events:read> --forward-to ${typedUrl || 'http://localhost:3000/webhooks'}`)),
      h('li', { testid: 'local-dev-allow' }, 'Or let svc deliver there: the operator’s setting ', h('code', null, 'SVC_WEBHOOK_ALLOW_CIDRS'), ` (${setting})`,
        example ? [' must include the address, for example ', h('code', { testid: 'local-dev-example' }, `SVC_WEBHOOK_ALLOW_CIDRS=${example}`)] : ' must include the address',
        '. Only for addresses that are yours: every target may then reach them.')),
    h('p', null, 'Both are walked through in ', h('code', null, 'docs/local-development.md'), ' (“Receiving webhooks on your machine”) in svc’s repository.'));
}

/** The refused address as a one-address range: from the reason ("… resolves to 127.0.0.1 …"), else an IP literal URL. */
function refusedAddress(reason: string, typedUrl: string): string | null {
  const v4 = IPV4.exec(reason)?.[1];
  if (v4) return `${v4}/32`;
  try {
    const host = new URL(typedUrl).hostname;
    if (host.startsWith('[')) return `${host.slice(1, -1)}/128`;
  } catch {
    // Not a URL: the field's own error says so.
  }
  return null;
}
