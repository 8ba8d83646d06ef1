import { api, seg } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, navigate, type PageContext } from '../router.js';
import { confirmDialog } from '../ui/dialog.js';
import { bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { button, field } from '../ui/form.js';
import { oneTimeSecret } from '../ui/secret.js';
import { webhookForm } from '../ui/webhook-form.js';
import type { Webhook } from '../types.js';
import { badge, card, loading, pageHeader } from './common.js';
import { healthCard, recoverReplayCard } from './webhook-health.js';

/*
 * A secret arrives in exactly one answer (create, rotate). It is handed from the create page to the
 * target's page in memory only, shown once, and then forgotten: never stored, never in the URL.
 */
let fresh: { target: Webhook; secret: string } | null = null;

const SECRET_WARNING = 'Copy this signing secret into your receiver’s secret store now. It will never be shown again — if it is lost, rotate the secret.';

export function webhookNewPage(): HTMLElement {
  const form = webhookForm({
    draftKey: 'webhook-create',
    submitLabel: 'Create webhook',
    onSubmit: async (input) => {
      const created = await api.post<Webhook>('/webhooks', input);
      fresh = created.secret ? { target: created, secret: created.secret } : null;
      navigate(`/webhooks/${encodeURIComponent(created.id)}`);
    },
  });
  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/webhooks' }, 'Webhooks'), ' / '),
    pageHeader('New webhook', { subtitle: 'Deliveries are signed with a secret generated for this target.' }),
    card(null, form));
}

export function webhookPage(ctx: PageContext): HTMLElement {
  const id = ctx.params.id ?? '';
  const banner = bannerSlot();
  const secretSlot = h('div');
  const header = h('div', null, pageHeader(id, { testid: 'webhook-title' }));
  const body = h('div', { class: 'stack-lg' }, loading());

  const created = fresh && fresh.target.id === id ? fresh : null;
  fresh = null;
  if (created) {
    replace(secretSlot, oneTimeSecret({ title: 'Webhook created — signing secret', value: created.secret, testid: 'webhook-secret', copyTestid: 'copy-secret', warning: SECRET_WARNING }));
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
      healthCard(id, ctx.alive),
      recoverReplayCard(id, (node) => banner.show(node), target.enabled),
      card('Settings', webhookForm({
        initial: target,
        draftKey: `webhook-edit-${id}`,
        submitLabel: 'Save changes',
        onSubmit: async (input) => {
          await api.patch(`/webhooks/${seg(id)}`, input);
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
        const { deliveryId } = await api.post<{ deliveryId: string }>(`/webhooks/${seg(id)}/test`);
        banner.show(h('div', { class: 'banner banner-ok', role: 'status', testid: 'test-sent' },
          'Test event queued: ', h('a', { href: href(`/deliveries/${encodeURIComponent(deliveryId)}`), testid: 'test-delivery-link' }, deliveryId)));
      } catch (err) {
        banner.show(errorBanner(err));
      } finally {
        test.disabled = false;
      }
    });
    const rotate = button('Rotate secret', { testid: 'rotate-secret', id: 'rotate-secret' });
    rotate.addEventListener('click', () => void rotateSecret(id, banner, secretSlot));
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
  if (created) replace(header, headerFor(created.target));
  void load();
  return h('div', { class: 'page' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/webhooks' }, 'Webhooks'), ' / '),
    header, banner, secretSlot, body);
}

async function rotateSecret(id: string, banner: ReturnType<typeof bannerSlot>, slot: HTMLElement): Promise<void> {
  const overlap = h('input', { type: 'number', min: '0', max: '604800', step: '1', value: '86400', required: true, testid: 'rotate-overlap' });
  const ok = await confirmDialog({
    title: 'Rotate signing secret?',
    message: h('p', null, 'A new secret is generated. During the overlap, deliveries carry signatures with both the new and the old secret, so receivers can switch without losing events.'),
    body: field({ label: 'Overlap (seconds)', id: 'rotate-overlap', path: '/overlapSeconds', hint: '0 … 604800; 86400 is one day.' }, overlap),
    confirmLabel: 'Rotate secret',
  });
  if (!ok) return;
  try {
    const rotated = await api.post<Webhook>(`/webhooks/${seg(id)}/rotate-secret`, { overlapSeconds: Number(overlap.value) });
    replace(slot, oneTimeSecret({ title: 'New signing secret', value: rotated.secret ?? '', testid: 'webhook-secret', copyTestid: 'copy-secret', warning: SECRET_WARNING }));
    banner.show(notice('Secret rotated.', 'secret-rotated'));
    (slot.querySelector('button') as HTMLButtonElement | null)?.focus();
  } catch (err) {
    banner.show(errorBanner(err));
  }
}
