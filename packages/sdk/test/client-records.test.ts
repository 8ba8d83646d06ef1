import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, SvcApiError, type SvcClient, type SvcRecord } from '../src/client/index.js';
import { DIALECTS, recordingFetch, startClientTestServer, type ClientTestServer } from './helpers/client-server.js';

interface Issue {
  title: string;
  points?: number;
}

/** The rejection of `promise`, which must be an SvcApiError. */
async function apiError(promise: Promise<unknown>): Promise<SvcApiError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SvcApiError);
  return error as SvcApiError;
}

describe.each(DIALECTS)('svc-sdk client against svc (%s)', (dialect) => {
  let s: ClientTestServer;
  let client: SvcClient;

  beforeAll(async () => {
    s = await startClientTestServer({
      dialect,
      collections: {
        issues: [
          { name: 'title', type: 'text', required: true },
          { name: 'points', type: 'integer' },
        ],
        pages: [{ name: 'n', type: 'integer', required: true }],
      },
    });
    client = createClient({ baseUrl: s.baseUrl, token: s.token });
  });
  afterAll(async () => s?.close());

  it('runs a batch in one transaction, and rejects all of it for one failing operation', async () => {
    const issues = client.records<Issue>('issues');
    const existing = await issues.create({ title: 'old' });
    const results = await client.batch([
      { method: 'POST', collection: 'issues', data: { title: 'b1' } },
      { method: 'PATCH', collection: 'issues', id: existing.id, data: { points: 1 }, ifMatch: 1 },
      { method: 'DELETE', collection: 'issues', id: existing.id },
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 200, 204]);
    const created = results[0]!;
    if (created.status === 204) throw new Error('expected a record');
    expect(created.record.data).toEqual({ title: 'b1' });
    const failed = await apiError(
      client.batch([
        { method: 'POST', collection: 'issues', data: { title: 'never' } },
        { method: 'DELETE', collection: 'issues', id: existing.id },
      ]),
    );
    expect(failed).toMatchObject({ status: 404, code: 'not_found' });
    expect(failed.errors[0]?.path).toBe('/operations/1');
  });

  it('creates, reads, updates with If-Match and deletes a record', async () => {
    const issues = client.records<Issue>('issues');
    const created = await issues.create({ title: 'x' });
    expect(created).toMatchObject({ collection: 'issues', version: 1, data: { title: 'x' } });
    expect(created.id).toMatch(/^rec_/);
    expect(Date.parse(created.createdAt)).not.toBeNaN();

    const read: SvcRecord<Issue> = await issues.get(created.id);
    expect(read).toEqual(created);

    const updated = await issues.update(created.id, { title: 'y', points: 3 }, { ifMatch: created.version });
    expect(updated).toMatchObject({ id: created.id, version: 2, data: { title: 'y', points: 3 } });

    const cleared = await issues.update(created.id, { points: null });
    expect(cleared.version).toBe(3);
    expect(cleared.data).toEqual({ title: 'y' });

    await issues.delete(created.id, { ifMatch: 3 });
    const gone = await apiError(issues.get(created.id));
    expect(gone).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('a stale If-Match is a 412 precondition_failed carrying the request id, and changes nothing', async () => {
    const issues = client.records<Issue>('issues');
    const rec = await issues.create({ title: 'guarded' });
    await issues.update(rec.id, { title: 'moved on' }, { ifMatch: 1 });

    const stale = await apiError(issues.update(rec.id, { title: 'lost update' }, { ifMatch: 1 }));
    expect(stale.status).toBe(412);
    expect(stale.code).toBe('precondition_failed');
    expect(stale.requestId).toMatch(/\S/);
    expect(stale.message).toContain('precondition_failed');
    expect(stale.name).toBe('SvcApiError');
    expect(stale).toBeInstanceOf(Error);

    const staleDelete = await apiError(issues.delete(rec.id, { ifMatch: 1 }));
    expect(staleDelete.code).toBe('precondition_failed');
    expect((await issues.get(rec.id)).data.title).toBe('moved on');
  });

  it('refuses an ifMatch that is not a version before sending anything', async () => {
    const rf = recordingFetch();
    const issues = createClient({ baseUrl: s.baseUrl, token: s.token, fetch: rf.fetch }).records<Issue>('issues');
    await expect(issues.update('rec_x', { title: 'x' }, { ifMatch: 1.5 })).rejects.toThrow(TypeError);
    await expect(issues.delete('rec_x', { ifMatch: 0 })).rejects.toThrow(TypeError);
    expect(rf.requests).toHaveLength(0);
  });

  it('sends If-Match as a quoted version and the token as a bearer credential', async () => {
    const rf = recordingFetch();
    const issues = createClient({ baseUrl: s.baseUrl, token: s.token, fetch: rf.fetch }).records<Issue>('issues');
    const rec = await issues.create({ title: 'headers' });
    await issues.update(rec.id, { title: 'h2' }, { ifMatch: 1 });
    const [create, patch] = rf.requests;
    expect(create!.headers.get('authorization')).toBe(`Bearer ${s.token}`);
    expect(create!.headers.has('idempotency-key')).toBe(false);
    expect(create!.headers.has('if-match')).toBe(false);
    expect(patch!.method).toBe('PATCH');
    expect(patch!.headers.get('if-match')).toBe('"1"');
    expect(await patch!.json()).toEqual({ data: { title: 'h2' } });
  });

  it('an Idempotency-Key makes a repeated create return the first record', async () => {
    const issues = client.records<Issue>('issues');
    const key = `sdk-${Math.random().toString(36).slice(2)}`;
    const first = await issues.create({ title: 'once' }, { idempotencyKey: key });
    const again = await issues.create({ title: 'once' }, { idempotencyKey: key });
    expect(again).toEqual(first);

    const reused = await apiError(issues.create({ title: 'something else' }, { idempotencyKey: key }));
    expect(reused).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('a validation error is a 422 naming every field at fault', async () => {
    const issues = client.records('issues');
    const invalid = await apiError(issues.create({ points: 'many', colour: 'red' }));
    expect(invalid.status).toBe(422);
    expect(invalid.code).toBe('validation_failed');
    expect(invalid.requestId).toMatch(/\S/);
    const paths = invalid.errors.map((e) => e.path).sort();
    expect(paths).toEqual(['/data/colour', '/data/points', '/data/title']);
    for (const e of invalid.errors) expect(e.message).toMatch(/\S/);
  });

  it('a bad query is a 400 invalid_query naming the parameter', async () => {
    const bad = await apiError(client.records('issues').list({ limit: 501 }));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_query' });
    expect(bad.errors.map((e) => e.path)).toContain('limit');
  });

  it('an unknown token is a 401 unauthorized', async () => {
    const intruder = createClient({ baseUrl: s.baseUrl, token: 'svc_pat_not-a-real-token' });
    const denied = await apiError(intruder.records('issues').list());
    expect(denied).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(denied.requestId).toMatch(/\S/);

    const anonymous = await apiError(createClient({ baseUrl: s.baseUrl }).records('issues').get('rec_x'));
    expect(anonymous.code).toBe('unauthorized');
  });

  it('a collection the token cannot see is a 403 forbidden', async () => {
    const missing = await apiError(client.records('no_such_collection').list());
    expect(missing).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('list pages by cursor; all() walks every page in creation order', async () => {
    const pages = client.records<{ n: number }>('pages');
    const ids: string[] = [];
    for (let n = 0; n < 120; n++) ids.push((await pages.create({ n })).id);

    const first = await pages.list({ limit: 50 });
    expect(first.items.map((r) => r.id)).toEqual(ids.slice(0, 50));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await pages.list({ limit: 50, cursor: first.nextCursor! });
    expect(second.items.map((r) => r.id)).toEqual(ids.slice(50, 100));

    const rf = recordingFetch();
    const counted = createClient({ baseUrl: s.baseUrl, token: s.token, fetch: rf.fetch }).records<{ n: number }>('pages');
    const seen: SvcRecord<{ n: number }>[] = [];
    for await (const record of counted.all({ pageSize: 50 })) seen.push(record);
    expect(seen.map((r) => r.id)).toEqual(ids);
    expect(seen.map((r) => r.data.n)).toEqual([...Array(120).keys()]);
    expect(rf.requests.map((r) => new URL(r.url).searchParams.get('limit'))).toEqual(['50', '50', '50']);
    expect(new URL(rf.requests[0]!.url).searchParams.has('cursor')).toBe(false);

    // Stopping early fetches no further page.
    const lazy = recordingFetch();
    const early = createClient({ baseUrl: s.baseUrl, token: s.token, fetch: lazy.fetch }).records('pages');
    for await (const record of early.all({ pageSize: 10 })) if (record.id === ids[3]) break;
    expect(lazy.requests).toHaveLength(1);
  });

  it('reads the capabilities and the OpenAPI document without credentials', async () => {
    const anonymous = createClient({ baseUrl: s.baseUrl });
    const caps = await anonymous.capabilities();
    expect(caps.apiVersion).toBe('1');
    expect(caps.limits.recordsListMaxLimit).toBe(500);
    expect(caps.topics).toContain('record.created');
    const doc = await anonymous.openapi();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/api/v1/collections/{collection}/records/{id}');
  });

  it('aborts a call through its signal', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(client.records('issues').list({ signal: controller.signal })).rejects.toThrow('stop');
  });
  it('lists with a typed filter, sort, fields and count, and iterates a filtered list', async () => {
    const issues = client.records<Issue>('issues');
    for (const points of [3, 1, 2, 5]) await issues.create({ title: `q-${points}`, points });
    const page = await issues.list({ filter: 'title ~ "q-" && points >= 2', sort: ['-points'], fields: ['points'], count: true, limit: 2 });
    expect(page.items.map((r) => r.data)).toEqual([{ points: 5 }, { points: 3 }]);
    expect(page.totalCount).toBe(3);
    const next = await issues.list({ filter: 'title ~ "q-" && points >= 2', sort: ['-points'], fields: ['points'], cursor: page.nextCursor! });
    expect(next.items.map((r) => r.data.points)).toEqual([2]);
    const all: number[] = [];
    for await (const r of issues.all({ filter: 'title ~ "q-"', sort: ['points'], pageSize: 1 })) all.push(r.data.points!);
    expect(all).toEqual([1, 2, 3, 5]);
    const bad = await apiError(issues.list({ filter: 'points = "x"' }));
    expect(bad.code).toBe('invalid_query');
  });
});
