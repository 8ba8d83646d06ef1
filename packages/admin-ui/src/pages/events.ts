/**
 * Events: the feed of every committed record change (and svc's operational events), live or from a point in its
 * history: a cursor (as a consumer stores it, or the position this page shows) or a time. Pausing closes the stream;
 * resuming reconnects with Last-Event-ID, so nothing committed meanwhile is missed. A row opens the event's page.
 */
import { ApiError } from '../api.js';
import { h, replace, time } from '../dom.js';
import { navigate, type PageContext } from '../router.js';
import { copyId } from '../ui/copy-id.js';
import { bannerSlot, errorBanner, notice } from '../ui/feedback.js';
import { button, field, select, textInput } from '../ui/form.js';
import { fromLocalInput, localInputValue } from '../ui/local-time.js';
import { TOPICS, type FeedEvent } from '../types.js';
import { badge, card, pageHeader } from './common.js';
import { followStream, startAtTime, TooFarError, type FeedFilters } from './events-feed.js';

/** Rows kept on screen; live, older ones drop off the bottom. From a point in history the feed pauses once they are full. */
const MAX_ROWS = 200;
/** The feed's topics: every topic but `webhook.test`, whose deliveries are not events (SPEC §7). */
const FEED_TOPICS = TOPICS.filter((t) => t !== 'webhook.test');
const HOUR = 3_600_000;

type Start = 'now' | 'cursor' | 'time';

export function eventsPage(ctx: PageContext): HTMLElement {
  const filters: FeedFilters = {
    collections: (ctx.query.get('collection') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    topic: ctx.query.get('topic') ?? '',
  };
  const after = ctx.query.get('after') ?? '';
  const since = ctx.query.get('since') ?? '';
  const start: Start = after ? 'cursor' : since ? 'time' : 'now';

  const banner = bannerSlot();
  const status = badge('connecting', 'muted', 'events-status');
  const rows = h('tbody', { testid: 'events-rows' });
  const empty = h('p', { class: 'empty', testid: 'events-empty' });
  const position = h('p', { class: 'events-position small muted', testid: 'events-position', hidden: true });
  const pause = button('Pause', { class: 'btn btn-small', testid: 'events-pause' });
  let lastId: string | null = null;
  let paused = false;
  /** From a point in history: how many more rows before the feed pauses itself (none live). */
  let room: number | null = start === 'now' ? null : MAX_ROWS;
  let connection: AbortController | null = null;

  const setStatus = (text: string, kind: string) => {
    status.textContent = text;
    status.className = `badge badge-${kind}`;
  };

  const filtered = filters.collections.length > 0 || filters.topic !== '';
  const showEmpty = () => {
    const none = rows.rows.length === 0;
    empty.hidden = !none;
    table.hidden = none;
    if (!none) return;
    const what = filtered ? 'No events match these filters' : 'No events';
    empty.textContent = start === 'time' ? `${what} since ${new Date(since).toLocaleString()} yet. New ones appear here as they commit.`
      : start === 'cursor' ? `${what} after this cursor yet. New ones appear here as they commit.`
        : filtered ? `${what} yet. New ones appear here as they commit.`
          : 'No events yet. Every record change appears here as it commits; write a record to see one.';
  };

  const addRow = (e: FeedEvent, cursor: string | null) => {
    if (cursor) lastId = cursor;
    const link = `/events/${encodeURIComponent(e.id)}`;
    const row = h('tr', { testid: 'event-row', 'data-id': e.id, class: 'row-link' },
      h('td', { 'data-label': 'When' }, time(e.occurredAt)),
      h('td', { 'data-label': 'Topic' }, h('span', { class: 'chip' }, e.topic)),
      h('td', { 'data-label': 'Collection' }, e.collection),
      h('td', { 'data-label': 'Record' }, h('span', { class: 'mono small' }, e.recordId)),
      h('td', { 'data-label': 'Event', class: 'cell-job-id' }, copyId(e.id, { label: 'event id', href: `#${link}`, testid: 'event-link' })));
    // The whole row opens the event; the id's link is the way in for keyboards and screen readers.
    row.addEventListener('click', (event) => {
      if (!(event.target as Element).closest('a, button') && !window.getSelection()?.toString()) navigate(link);
    });
    rows.prepend(row);
    while (rows.rows.length > MAX_ROWS) rows.deleteRow(-1);
    showPosition();
    showEmpty();
    if (room !== null && --room <= 0) stop(`Showing the first ${MAX_ROWS} events from the start you chose. Resume goes on after them (the oldest rows then make room).`);
  };

  const showPosition = () => {
    position.hidden = lastId === null;
    if (lastId !== null) replace(position, 'Position: ', copyId(lastId, { label: 'cursor', testid: 'events-cursor' }), ' — start here later with “A cursor”.');
  };

  /** Pauses the feed as the Pause button does, with a reason in the banner. */
  const stop = (why: string | null) => {
    paused = true;
    room = null;
    pause.textContent = 'Resume';
    connection?.abort();
    setStatus('paused', 'muted');
    if (why) banner.show(notice(why, 'events-paused-full'));
  };

  const connect = async () => {
    connection?.abort();
    const abort = (connection = new AbortController());
    while (!abort.signal.aborted && ctx.alive()) {
      try {
        await followStream(filters, lastId, abort.signal, addRow, () => {
          setStatus('live', 'ok');
          banner.show(null);
        });
      } catch (err) {
        if (abort.signal.aborted || !ctx.alive()) return;
        if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429) {
          setStatus('stopped', 'danger');
          banner.show(errorBanner(err));
          return;
        }
      }
      // A pause ends the stream without an error: it is not a dropped connection.
      if (abort.signal.aborted || !ctx.alive()) return;
      setStatus('reconnecting', 'muted');
      await new Promise((r) => setTimeout(r, 2000));
    }
  };

  const begin = async () => {
    if (start === 'cursor') lastId = after;
    if (start === 'time') {
      setStatus('finding the time', 'muted');
      try {
        const found = await startAtTime(filters, since, MAX_ROWS);
        if (!ctx.alive()) return;
        // Oldest first, each on top: the newest ends up first, as live.
        lastId = found.cursor;
        for (const e of found.events) addRow(e, null);
      } catch (err) {
        if (!ctx.alive()) return;
        setStatus('stopped', 'danger');
        banner.show(errorBanner(err instanceof TooFarError ? new Error(err.message) : err));
        return;
      }
    }
    showPosition();
    if (!paused) void connect();
  };

  pause.addEventListener('click', () => {
    if (!paused) {
      stop(null);
      return;
    }
    paused = false;
    pause.textContent = 'Pause';
    banner.show(null);
    void connect();
  });
  ctx.onCleanup(() => connection?.abort());

  const table = h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Events' },
    h('table', { class: 'table table-compact', testid: 'events-table' },
      h('caption', { class: 'visually-hidden' }, 'Events, newest first'),
      h('thead', null, h('tr', null, ['When', 'Topic', 'Collection', 'Record', 'Event'].map((t) => h('th', { scope: 'col' }, t)))),
      rows));
  showEmpty();
  void begin();

  return h('div', { class: 'page' },
    pageHeader('Events', { subtitle: 'Every committed record change, live or from a point in the feed. Paused, nothing is lost: resuming catches up.', actions: [status, pause] }),
    startForm(filters, start, after, since),
    banner,
    card(null, position, empty, table));
}

/** Filters and where to start; applying opens the page again from its address, so a view can be shared. */
function startForm(filters: FeedFilters, start: Start, after: string, since: string): HTMLElement {
  const collection = textInput({ placeholder: 'all', testid: 'events-collection', value: filters.collections.join(', ') });
  const topic = select([{ value: '', label: 'all topics' }, ...FEED_TOPICS.map((t) => ({ value: t, label: t }))], { testid: 'events-topic', value: filters.topic });
  const from = select([{ value: 'now', label: 'Now (live)' }, { value: 'cursor', label: 'A cursor' }, { value: 'time', label: 'A time' }], { testid: 'events-start', value: start });
  const cursor = textInput({ testid: 'events-after', value: after, class: 'mono', placeholder: 'a cursor from the feed' });
  const at = h('input', { type: 'datetime-local', testid: 'events-since', value: localInputValue(since ? Date.parse(since) : Date.now() - HOUR) });
  const cursorField = field({ label: 'Cursor', id: 'events-after', hint: 'Events after this position: a consumer’s stored cursor, or the position shown below.' }, cursor);
  const timeField = field({ label: 'Time', id: 'events-since', hint: 'Your local time.' }, at);
  const sync = () => {
    cursorField.hidden = from.value !== 'cursor';
    timeField.hidden = from.value !== 'time';
  };
  from.addEventListener('change', sync);
  sync();
  const apply = h('button', { type: 'submit', class: 'btn btn-primary', testid: 'events-apply' }, 'Apply');
  const form = h('form', { class: 'filters', testid: 'events-filters', 'aria-label': 'Events to show', novalidate: true },
    field({ label: 'Collections (comma-separated)', id: 'events-collection' }, collection),
    field({ label: 'Topic', id: 'events-topic' }, topic),
    field({ label: 'Start from', id: 'events-start' }, from),
    cursorField, timeField, apply);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    const collections = collection.value.split(',').map((s) => s.trim()).filter(Boolean).join(',');
    if (collections) params.set('collection', collections);
    if (topic.value) params.set('topic', topic.value);
    if (from.value === 'cursor' && cursor.value.trim()) params.set('after', cursor.value.trim());
    const sinceIso = from.value === 'time' ? fromLocalInput(at.value) : null;
    if (sinceIso) params.set('since', sinceIso);
    const qs = params.toString();
    navigate(`/events${qs ? `?${qs}` : ''}`);
  });
  return card(null, form);
}
