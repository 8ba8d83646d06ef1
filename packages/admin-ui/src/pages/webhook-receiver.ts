/**
 * The receiver's side of a target on its page (SPEC §13): how deliveries are signed, the public key of an
 * ed25519 target (not secret, so always shown, with a copy button), the static headers as the server masks
 * them, and the rate limit. And the panel for the signing material an answer carries once.
 */
import { h } from '../dom.js';
import { copyableValue, oneTimeSecret } from '../ui/secret.js';
import type { SignatureAlgorithm, SignatureScheme, Webhook, WebhookWithSecret } from '../types.js';
import { card } from './common.js';

const SCHEME_LABELS: Record<SignatureScheme, string> = {
  svc: 'svc (Svc-Signature)',
  standard: 'Standard Webhooks (webhook-signature)',
  both: 'Both (Svc-Signature and webhook-signature)',
};
const ALGORITHM_LABELS: Record<SignatureAlgorithm, string> = { 'hmac-sha256': 'HMAC-SHA256', ed25519: 'Ed25519' };

const SECRET_WARNING = 'Copy this signing secret into your receiver’s secret store now. It will never be shown again — if it is lost, rotate the secret.';
const PUBLIC_KEY_NOTE = 'Give this public key to your receiver: it verifies the v1a signatures with it. It is not secret and stays on this page; the private key never leaves svc.';

export function receiverCard(target: Webhook): HTMLElement {
  const headers = Object.entries(target.headers ?? {});
  const facts: [string, Node | string][] = [
    ['Signature scheme', h('span', { testid: 'receiver-scheme' }, SCHEME_LABELS[target.signatureScheme] ?? target.signatureScheme)],
    ['Algorithm', h('span', { testid: 'receiver-algorithm' }, ALGORITHM_LABELS[target.signatureAlgorithm] ?? target.signatureAlgorithm)],
  ];
  if (target.publicKey) {
    const key = copyableValue({
      id: 'webhook-public-key', value: target.publicKey, label: 'Public key', testid: 'webhook-public-key',
      copyTestid: 'copy-public-key', statusTestid: 'copy-public-key-status',
    });
    facts.push(['Public key', h('div', null, key.row, key.status)]);
  }
  facts.push(
    ['Headers', headers.length === 0 ? h('span', { class: 'muted', testid: 'receiver-headers-none' }, 'None')
      : h('ul', { class: 'header-list', testid: 'receiver-headers' }, headers.map(([name, masked]) =>
        h('li', { testid: 'receiver-header' }, h('code', null, name), ': ', h('code', { class: 'muted', title: 'Only the last four characters are shown' }, masked))))],
    ['Rate limit', h('span', { testid: 'receiver-rate-limit' }, target.rateLimit ? `${target.rateLimit.perSecond} attempts per second` : 'No limit')],
  );
  return card('Receiver', h('dl', { class: 'facts', testid: 'receiver-facts' }, facts.map(([term, value]) => [h('dt', null, term), h('dd', null, value)])));
}

/**
 * The signing material an answer shows this once: an HMAC target's secret, or (with `newKey`, when the key pair
 * was made by this request) an ed25519 target's public key. Null when the answer carries neither.
 */
export function signingMaterialPanel(answer: WebhookWithSecret, titles: { secret: string; publicKey: string }, newKey: boolean): HTMLElement | null {
  if (answer.secret) {
    return oneTimeSecret({ title: titles.secret, value: answer.secret, testid: 'webhook-secret', copyTestid: 'copy-secret', warning: SECRET_WARNING });
  }
  if (newKey && answer.publicKey) {
    return oneTimeSecret({ title: titles.publicKey, value: answer.publicKey, testid: 'webhook-new-public-key', copyTestid: 'copy-new-public-key', warning: PUBLIC_KEY_NOTE });
  }
  return null;
}
