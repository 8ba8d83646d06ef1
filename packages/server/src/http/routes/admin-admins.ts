import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { deleteAdminUnlessLast, findAdmin, listAdmins, type AdminAccount as Account } from '../../auth/admins-store.js';
import { createAdmin } from '../../auth/setup.js';
import type { Context } from '../../context.js';
import { AppError } from '../../errors.js';
import { iso } from '../../lib/clock.js';
import { decodeCursor, jsonBytes, pageWithin } from '../../lib/cursor.js';
import { idPattern } from '../../lib/ids.js';
import { SESSION_COOKIE } from '../auth.js';
import { AdminAccount, AdminAccountList, ListQuery, errorResponses, ref } from '../schemas.js';

const security = [{ adminSession: [], csrfToken: [] }];

const presentAdmin = (a: Account) => ({ id: a.id, email: a.email, createdAt: iso(a.createdAt), lastLoginAt: a.lastLoginAt === null ? null : iso(a.lastLoginAt) });

/** The admins (SPEC §17): list, add, delete. Passwords follow setup's rule; the last admin stays. */
export const adminAdminRoutes =
  /** `ended`: told once a deletion has committed, for each session it ended, to end that session's event streams in this process at once. */
  (ctx: Context, ended: (sessionIdHash: string) => Promise<void> = async () => {}): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.get('/admin/v1/admins', {
      schema: { operationId: 'listAdmins', summary: 'The admins, in creation order (never their passwords)', tags: ['admins'], security, querystring: ListQuery, response: { 200: ref(AdminAccountList), ...errorResponses(400, 401, 403) } },
    }, async (request) => {
      const limit = request.query.limit ?? 50;
      const rows = (await listAdmins(ctx.database.db, decodeCursor(request.query.cursor, idPattern('adm')), limit + 1)).map(presentAdmin);
      return pageWithin(rows, limit, ctx.config.listMaxBytes, (a) => a.id, jsonBytes);
    });

    app.post('/admin/v1/admins', {
      schema: {
        operationId: 'createAdmin',
        summary: 'Add an admin (a password of at least 12 characters, as at setup)',
        tags: ['admins'],
        security,
        body: Type.Object(
          { email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
          { additionalProperties: false },
        ),
        response: { 201: ref(AdminAccount), ...errorResponses(401, 403, 409, 422) },
      },
    }, async (request, reply) => {
      const admin = await createAdmin(ctx, request.body.email, request.body.password);
      return reply.code(201).send(presentAdmin((await findAdmin(ctx.database.db, admin.id))!));
    });

    app.delete('/admin/v1/admins/:id', {
      schema: {
        operationId: 'deleteAdmin',
        summary: 'Delete an admin and end its sessions; the last admin cannot be deleted',
        tags: ['admins'],
        security,
        params: Type.Object({ id: Type.String({ pattern: idPattern('adm').source }) }),
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404, 409) },
      },
    }, async (request, reply) => {
      const { outcome, sessions } = await ctx.database.db.transaction().execute((trx) => deleteAdminUnlessLast(trx, request.params.id));
      if (outcome === 'missing') throw new AppError('not_found', 'No such admin.');
      if (outcome === 'last') throw new AppError('conflict', 'This is the last admin: add another before deleting it.');
      for (const idHash of sessions) await ended(idHash);
      // An admin who deleted themself has no session any more: the cookie goes too.
      if (request.auth.session?.admin.id === request.params.id) reply.setCookie(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'strict', path: '/admin', secure: ctx.config.publicUrl.startsWith('https:'), maxAge: 0 });
      return reply.code(204).send(null);
    });
  };
