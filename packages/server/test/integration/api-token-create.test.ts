import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiToken } from '../../src/auth/api-tokens.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * `svc token create` has no request schema in front of it: createApiToken itself refuses what the admin API's schema
 * refuses (routes/admin-tokens.ts), with the same code and paths, and writes nothing then.
 */
describe('createApiToken refuses what the API refuses', () => {
  let t: TestContext;
  beforeEach(async () => {
    t = await createTestContext('sqlite');
  });
  afterEach(async () => t.close());

  it.each([
    ['an empty name', { name: '', collections: null }, '/name'],
    ['a name of 201 characters', { name: 'x'.repeat(201), collections: null }, '/name'],
    ['1001 collections', { name: 'ok', collections: Array.from({ length: 1001 }, (_, i) => `c${i}`) }, '/collections'],
    ['a collection name the API refuses', { name: 'ok', collections: ['issues', 'Bad-Name'] }, '/collections/1'],
  ])('%s: validation_failed, and no token written', async (_what, input, path) => {
    await expect(createApiToken(t.ctx, { ...input, scopes: ['records:read'] })).rejects.toMatchObject({ code: 'validation_failed', extra: { errors: [{ path }] } });
    expect(await t.ctx.database.db.selectFrom('api_tokens').select('id').execute()).toEqual([]);
  });

  it('takes a name of 200 characters (astral ones count once) and 1000 collections', async () => {
    const made = await createApiToken(t.ctx, { name: '😀'.repeat(200), scopes: ['records:read'], collections: Array.from({ length: 1000 }, (_, i) => `c${i}`) });
    expect(made.token).toMatch(/^svc_pat_/);
  });
});
