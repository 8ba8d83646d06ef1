import { api, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { button, field } from '../ui/form.js';
import { webhookForm } from '../ui/webhook-form.js';
import type { TestSent, Webhook, WebhookWithSecret } from '../types.js';
import { badge, card, loading, pageHeader } from './common.js';
import { healthCard, recoverReplayCard } from './webhook-health.js';
import { receiverCard, signingMaterialPanel } from './webhook-receiver.js';
import { subscriptionCard } from './webhook-subscription.js';

/*
 * A secret arrives in exactly one answer (create, rotate, a PATCH that changed the algorithm). The create
 * answer is handed to the target's page in memory only, shown once, and then forgotten: never stored,
 * never in the URL.
 */
let fresh: WebhookWithSecret | null = null;

export function webhookNewPage(): HTMLElement {
  const form = webhookForm({
    draftKey: 'webhook-create',
    submitLabel: 'Create webhook',
    onSubmit: async (input) => {
      const created = await api.post<WebhookWithSecret>('/webhooks', input);
      fresh = created;
      navigate(`/webhooks/${encodeURIComponent(created.id)}`);
    },
  });
  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/webhooks' }, 'Webhooks'), ' / '),
    pageHeader('New webhook', { subtitle: 'Deliveries are signed with a secret (or an Ed25519 key pair) generated for this target.' }),
    card(null, form));
}

export function webhookPage(ctx: PageContext): HTMLElement {
  const id = ctx.params.id ?? '';
  const banner = bannerSlot();
  const secretSlot = h('div');
  const header = h('div', null, pageHeader(id, { testid: 'webhook-title' }));
  const body = h('div', { class: 'stack-lg' }, loading());

  const created = fresh && fresh.id === id ? fresh : null;
  fresh = null;
  if (created) {
    replace(secretSlot, signingMaterialPanel(created, { secret: 'Webhook created — signing secret', publicKey: 'Webhook created — public key' }, true));
  }

  const load = async () => {
    let target: Webhook;
    try {
      target = await api.get<Webhook>(`/webhooks/${seg(id)}`);
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
      return;
    }
    if (!ctx.alive()) return;
    replace(header, headerFor(target));
    replace(body,
      healthCard(id, ctx.alive, target.createdAt),
      recoverReplayCard(id, (node) => banner.show(node), target.enabled),
      h('div', { class: 'grid-2 grid-cards' }, subscriptionCard(target), receiverCard(target)),
      card('Settings', webhookForm({
        initial: target,
        draftKey: `webhook-edit-${id}`,
        submitLabel: 'Save changes',
        onSubmit: async (input) => {
          const saved = await api.patch<WebhookWithSecret>(`/webhooks/${seg(id)}`, input);
          // A new algorithm made new signing material: a secret shown this once, or a new public key.
          const newKey = saved.signatureAlgorithm === 'ed25519' && target.signatureAlgorithm !== 'ed25519';
          const material = signingMaterialPanel(saved, { secret: 'New signing secret', publicKey: 'New public key' }, newKey);
          if (material) replace(secretSlot, material);
          banner.show(notice('Webhook saved.', 'webhook-saved'));
          await load();
        },
      })),
      h('p', { class: 'muted small' }, 'Created ', time(target.createdAt), ' · updated ', time(target.updatedAt), ' · ', h('code', null, target.id)));
  };

  const headerFor = (target: Webhook) => {
    const toggle = button(target.enabled ? 'Disable' : 'Enable', { testid: 'toggle-webhook', id: 'toggle-webhook' });
    toggle.addEventListener('click', async () => {
      toggle.disabled = true;
      try {
        await api.patch(`/webhooks/${seg(id)}`, { enabled: !target.enabled });
        banner.show(notice(`Webhook ${target.enabled ? 'disabled' : 'enabled'}.`, 'webhook-saved'));
        await load();
      } catch (err) {
        banner.show(errorBanner(err));
        toggle.disabled = false;
      }
    });
    const test = button('Send test', { testid: 'send-test', id: 'send-test' });
    test.addEventListener('click', async () => {
      test.disabled = true;
      try {
        const { deliveryId } = await api.post<TestSent>(`/webhooks/${seg(id)}/test`);
        banner.show(h('div', { class: 'banner banner-ok', role: 'status', testid: 'test-sent' },
          'Test event queued: ', h('a', { href: href(`/deliveries/${encodeURIComponent(deliveryId)}`), testid: 'test-delivery-link' }, deliveryId)));
      } catch (err) {
        banner.show(errorBanner(err));
      } finally {
        test.disabled = false;
      }
    });
    const keyPair = target.signatureAlgorithm === 'ed25519';
    const rotate = button(keyPair ? 'Rotate key pair' : 'Rotate secret', { testid: 'rotate-secret', id: 'rotate-secret' });
    rotate.addEventListener('click', () => void rotateSecret(id, keyPair, banner, secretSlot).then((done) => (done ? load() : undefined)));
    const del = button('Delete', { class: 'btn btn-danger', testid: 'delete-webhook', id: 'delete-webhook' });
    del.addEventListener('click', async () => {
      const ok = await confirmDialog({
        title: 'Delete webhook?',
        message: h('p', null, 'Delete ', h('strong', null, target.name), '? Its pending deliveries end as dead. This cannot be undone.'),
        confirmLabel: 'Delete webhook', danger: true,
      });
      if (!ok) return;
      try {
        await api.del(`/webhooks/${seg(id)}`);
        navigate('/webhooks');
      } catch (err) {
        banner.show(errorBanner(err));
      }
    });
    return pageHeader(h('span', null, target.name, ' ', target.enabled ? badge('enabled', 'ok', 'webhook-state') : badge(target.disabledReason && target.disabledReason !== 'manual' ? `disabled: ${target.disabledReason}` : 'disabled', 'muted', 'webhook-state')), {
      testid: 'webhook-title',
      subtitle: h('span', { class: 'mono small' }, target.url),
      actions: [
        h('a', { href: href('/deliveries', { webhookId: id }), class: 'btn btn-ghost', testid: 'webhook-deliveries-link' }, 'Deliveries'),
        test, toggle, rotate, del,
      ],
    });
  };

  // A target just created is known already: its header shows at once, with the secret, not after a reload.
  if (created) replace(header, headerFor(created));
  void load();
  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/webhooks' }, 'Webhooks'), ' / '),
    header, banner, secretSlot, body);
}

/** True once rotated, so the page reloads the target (an ed25519 target's card shows the new public key). */
async function rotateSecret(id: string, keyPair: boolean, banner: ReturnType<typeof bannerSlot>, slot: HTMLElement): Promise<boolean> {
  const what = keyPair ? 'key pair' : 'secret';
  const overlap = h('input', { type: 'number', min: '0', max: '604800', step: '1', value: '86400', required: true, testid: 'rotate-overlap' });
  const ok = await confirmDialog({
    title: `Rotate signing ${what}?`,
    message: h('p', null, `A new ${what} is generated. During the overlap, deliveries carry signatures with both the new and the old ${what}, so receivers can switch without losing events.`),
    body: field({ label: 'Overlap (seconds)', id: 'rotate-overlap', path: '/overlapSeconds', hint: '0 … 604800; 86400 is one day.' }, overlap),
    confirmLabel: `Rotate ${what}`,
  });
  if (!ok) return false;
  try {
    const rotated = await api.post<WebhookWithSecret>(`/webhooks/${seg(id)}/rotate-secret`, { overlapSeconds: Number(overlap.value) });
    replace(slot, signingMaterialPanel(rotated, { secret: 'New signing secret', publicKey: 'New public key' }, true));
    banner.show(notice(keyPair ? 'Key pair rotated.' : 'Secret rotated.', 'secret-rotated'));
    (slot.querySelector('button') as HTMLButtonElement | null)?.focus();
    return true;
  } catch (err) {
    banner.show(errorBanner(err));
    return false;
  }
}
