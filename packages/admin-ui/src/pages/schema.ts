import { api } from '../api.js';
import { h, replace, time } from '../dom.js';
import type { PageContext } from '../router.js';
import { errorBanner } from '../ui/feedback.js';
import type { Collection } from '../types.js';
import { badge, card, jsonBlock, loading, pageHeader, table } from './common.js';

/** GET /admin/v1/api/schema: the fields of every collection, never record data or credentials. */
export function schemaPage(ctx: PageContext): HTMLElement {
  const body = h('div', { class: 'stack-lg' }, loading());
  void (async () => {
    try {
      const schema = await api.get<{ collections: Collection[] }>('/api/schema');
      if (!ctx.alive()) return;
      replace(body,
        schema.collections.length === 0 ? h('p', { class: 'empty' }, 'No collections yet.') : null,
        schema.collections.map((c) => card(h('span', null, h('code', null, c.name), ' ', h('span', { class: 'muted small' }, 'updated ', time(c.updatedAt))),
          table(['Field', 'Type', 'Required', 'Indexed'], c.fields.map((f) => h('tr', null,
            h('td', null, h('code', null, f.name)), h('td', null, badge(f.type, 'neutral')), h('td', null, f.required ? 'yes' : 'no'),
            h('td', null, f.indexed ? 'yes' : 'no'))),
          { testid: 'schema-fields', caption: `Fields of ${c.name}`, empty: 'No fields.' }))),
        h('details', { class: 'card' }, h('summary', null, 'Raw JSON'), jsonBlock(schema, 'schema-json')));
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
    }
  })();
  return h('div', { class: 'page' },
    pageHeader('API schema', { subtitle: 'What API clients see: collections and their fields.' }),
    body);
}
