/**
 * Events: the live feed of every committed record change, read from /admin/v1/events/stream with fetch (the
 * session cookie and X-Svc-CSRF; EventSource cannot send the header). Pausing closes the stream; resuming
 * reconnects with Last-Event-ID, so nothing committed meanwhile is missed.
 */
import { ApiError, session } from '../api.js';
import { h, replace, time } from '../dom.js';
import type { PageContext } from '../router.js';
import { bannerSlot, errorBanner } from '../ui/feedback.js';
import { button, field, select, textInput } from '../ui/form.js';
import type { Problem } from '../types.js';
import { badge, card, pageHeader } from './common.js';

interface FeedEvent {
  id: string;
  topic: string;
  collection: string;
  recordId: string;
  occurredAt: string;
}

/** Rows kept on screen; older ones drop off the bottom. */
const MAX_ROWS = 200;
const TOPICS = ['record.created', 'record.updated', 'record.deleted'];

interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id: string | null = null;
  let event = '';
  let data: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) yield { id, event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
      } else if (!line.startsWith(':')) {
        const at = line.indexOf(':');
        const name = at < 0 ? line : line.slice(0, at);
        const text = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
        if (name === 'data') data.push(text);
        else if (name === 'event') event = text;
        else if (name === 'id') id = text;
      }
    }
  }
}

export function eventsPage(ctx: PageContext): HTMLElement {
  const banner = bannerSlot();
  const status = badge('connecting', 'muted', 'events-status');
  const rows = h('tbody', { testid: 'events-rows' });
  const collection = textInput({ placeholder: 'all', testid: 'events-collection' });
  const topic = select([{ value: '', label: 'all topics' }, ...TOPICS.map((t) => ({ value: t, label: t }))], { testid: 'events-topic' });
  const apply = button('Apply', { class: 'btn btn-small', testid: 'events-apply' });
  const pause = button('Pause', { class: 'btn btn-small', testid: 'events-pause' });
  let lastId: string | null = null;
  let paused = false;
  let connection: AbortController | null = null;

  const setStatus = (text: string, kind: string) => {
    status.textContent = text;
    status.className = `badge badge-${kind}`;
  };

  const addRow = (e: FeedEvent) => {
    rows.prepend(h('tr', { testid: 'event-row', 'data-id': e.id },
      h('td', { 'data-label': 'When' }, time(e.occurredAt)),
      h('td', { 'data-label': 'Topic' }, h('span', { class: 'chip' }, e.topic)),
      h('td', { 'data-label': 'Collection' }, e.collection),
      h('td', { 'data-label': 'Record' }, h('span', { class: 'mono small' }, e.recordId)),
      h('td', { 'data-label': 'Event' }, h('span', { class: 'mono small' }, e.id))));
    while (rows.rows.length > MAX_ROWS) rows.deleteRow(-1);
  };

  const query = () => {
    const params = new URLSearchParams();
    for (const c of collection.value.split(',').map((s) => s.trim()).filter(Boolean)) params.append('collection', c);
    if (topic.value) params.append('topic', topic.value);
    return params.toString();
  };

  const connect = async () => {
    connection?.abort();
    const abort = (connection = new AbortController());
    while (!abort.signal.aborted && ctx.alive()) {
      try {
        const headers: Record<string, string> = { Accept: 'text/event-stream' };
        if (session.csrfToken) headers['X-Svc-CSRF'] = session.csrfToken;
        if (lastId) headers['Last-Event-ID'] = lastId;
        const qs = query();
        const response = await fetch(`/admin/v1/events/stream${qs ? `?${qs}` : ''}`, { headers, credentials: 'same-origin', cache: 'no-store', signal: abort.signal });
        if (!response.ok || !response.body) {
          const problem = (await response.json().catch(() => null)) as Problem | null;
          throw new ApiError(response.status, problem ?? { type: 'about:blank', title: 'Error', status: response.status, detail: `HTTP ${response.status}`, code: 'unknown', requestId: '' });
        }
        setStatus('live', 'ok');
        banner.show(null);
        for await (const message of readSse(response.body)) {
          if (message.event === 'error') throw new ApiError((JSON.parse(message.data) as Problem).status, JSON.parse(message.data) as Problem);
          if (message.id) lastId = message.id;
          addRow(JSON.parse(message.data) as FeedEvent);
        }
      } catch (err) {
        if (abort.signal.aborted || !ctx.alive()) return;
        if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
          setStatus('stopped', 'danger');
          banner.show(errorBanner(err));
          return;
        }
      }
      setStatus('reconnecting', 'muted');
      await new Promise((r) => setTimeout(r, 2000));
    }
  };

  apply.addEventListener('click', () => {
    // New filters start from the present: the rows shown so far were chosen by the old ones.
    lastId = null;
    replace(rows);
    if (!paused) void connect();
  });
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
    if (paused) {
      connection?.abort();
      setStatus('paused', 'muted');
    } else {
      void connect();
    }
  });
  ctx.onCleanup(() => connection?.abort());
  void connect();

  return h('div', { class: 'page' },
    pageHeader('Events', { subtitle: 'Every committed record change, live. Paused, nothing is lost: resuming catches up.', actions: [status, pause] }),
    banner,
    card(null,
      h('div', { class: 'filters' },
        field({ label: 'Collections (comma-separated)', id: 'events-collection' }, collection),
        field({ label: 'Topic', id: 'events-topic' }, topic),
        apply),
      h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Events' },
        h('table', { class: 'table', testid: 'events-table' },
          h('caption', { class: 'visually-hidden' }, 'Events, newest first'),
          h('thead', null, h('tr', null, ['When', 'Topic', 'Collection', 'Record', 'Event'].map((t) => h('th', { scope: 'col' }, t)))),
          rows))));
}
