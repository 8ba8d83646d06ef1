/**
 * The API as a client sees it, one collection at a time: its fields (`GET /admin/v1/api/schema`, never record data
 * or credentials) and the public API's operations on its records, from svc's own OpenAPI document, each with a
 * curl command to copy.
 */
import { api, discovery } from '../api.js';
import { h, replace, time } from '../dom.js';
import { href, type PageContext } from '../router.js';
import { copyToClipboard } from '../ui/clipboard.js';
import { errorBanner } from '../ui/feedback.js';
import { select } from '../ui/form.js';
import { recordOperations, type OpenApi, type RecordOperation } from '../ui/record-curl.js';
import type { ApiSchema, Collection } from '../types.js';
import { badge, card, jsonBlock, loading, pageHeader, table } from './common.js';

export function schemaPage(ctx: PageContext): HTMLElement {
  const body = h('div', { class: 'stack-lg' }, loading());
  void (async () => {
    try {
      const [schema, doc] = await Promise.all([api.get<ApiSchema>('/api/schema'), discovery<OpenApi>('/openapi.json')]);
      if (!ctx.alive()) return;
      const raw = h('details', { class: 'card' }, h('summary', null, 'Raw JSON'), jsonBlock(schema, 'schema-json'));
      if (schema.collections.length === 0) {
        replace(body, h('p', { class: 'empty' }, 'No collections yet. ', h('a', { href: '#/collections' }, 'Create one'), ' to see its API.'), raw);
        return;
      }
      const names = schema.collections.map((c) => c.name);
      const wanted = ctx.query.get('collection');
      const picker = select(names.map((n) => ({ value: n, label: n })),
        { id: 'schema-collection', testid: 'schema-collection', value: wanted && names.includes(wanted) ? wanted : names[0] });
      const detail = h('div', { class: 'stack-lg' });
      const show = () => {
        const c = schema.collections.find((x) => x.name === picker.value) ?? schema.collections[0]!;
        replace(detail, fieldsCard(c), operationsCard(recordOperations(doc, c.name, c.fields, location.origin)));
      };
      picker.addEventListener('change', () => {
        // The choice lives in the address (a reload or a shared link shows the same collection); no hashchange, no redraw.
        history.replaceState(null, '', href('/schema', { collection: picker.value }));
        show();
      });
      show();
      replace(body,
        h('div', { class: 'field field-inline schema-picker' }, h('label', { for: picker.id }, 'Collection'), picker),
        detail, raw);
    } catch (err) {
      if (ctx.alive()) replace(body, errorBanner(err));
    }
  })();
  return h('div', { class: 'page' },
    pageHeader('API schema', { subtitle: 'What API clients see: a collection\u2019s fields and the public API\u2019s operations on its records.' }),
    body);
}

function fieldsCard(c: Collection): HTMLElement {
  return card(h('span', null, h('code', null, c.name), ' ', h('span', { class: 'muted small' }, 'updated ', time(c.updatedAt))),
    table(['Field', 'Type', 'Required', 'Indexed'], c.fields.map((f) => h('tr', null,
      h('td', null, h('code', null, f.name)), h('td', null, badge(f.type, 'neutral')), h('td', null, f.required ? 'yes' : 'no'),
      h('td', null, f.indexed ? 'yes' : 'no'))),
    { testid: 'schema-fields', caption: `Fields of ${c.name}`, empty: 'No fields.' }));
}

function operationsCard(ops: RecordOperation[]): HTMLElement {
  return card('Operations',
    h('p', { class: 'hint operations-hint' }, 'Set ', h('code', null, 'SVC_TOKEN'), ' to an API token (', h('a', { href: '#/tokens' }, 'API tokens'),
      ') with the scope an operation needs, and ', h('code', null, 'RECORD_ID'), ' to a record\u2019s id. If-Match names the version you read.'),
    ops.length === 0
      ? h('p', { class: 'empty', testid: 'schema-operations-empty' }, 'The API document lists no record operations.')
      : h('ul', { class: 'operations', testid: 'schema-operations' }, ops.map(operation)));
}

function operation(op: RecordOperation): HTMLElement {
  const curlId = `curl-${op.id}`;
  const status = h('span', { class: 'copy-status', role: 'status', testid: `copy-status-${op.id}` });
  const copy = h('button', { type: 'button', class: 'btn btn-small', testid: `copy-curl-${op.id}`, 'aria-controls': curlId }, 'Copy curl');
  const pre = h('pre', { class: 'json curl', id: curlId, testid: `curl-${op.id}`, tabindex: '0' }, op.curl);
  copy.addEventListener('click', async () => {
    status.textContent = (await copyToClipboard(op.curl, pre)) ? 'Copied' : 'Select the command and copy it by hand';
  });
  return h('li', { class: 'operation', testid: 'schema-operation', 'data-operation': op.id },
    h('div', { class: 'operation-head' },
      h('span', { class: `method method-${op.method.toLowerCase()}` }, op.method),
      h('code', { class: 'operation-path' }, op.path)),
    op.summary ? h('p', { class: 'operation-summary' }, op.summary) : null,
    pre,
    h('div', { class: 'operation-copy' }, copy, status));
}
