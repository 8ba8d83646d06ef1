import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { changePassword, login, logout, type ActiveSession } from '../../auth/sessions.js';
import { completeSetup } from '../../auth/setup.js';
import type { Context } from '../../context.js';
import { iso } from '../../lib/clock.js';
import { SESSION_COOKIE } from '../auth.js';
import { Session, errorResponses, ref } from '../schemas.js';

const Credentials = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
const SetupBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), email: Credentials.properties.email, password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
const PasswordChange = Type.Object(
  { currentPassword: Type.String({ minLength: 1, maxLength: 1024 }), newPassword: Type.String({ minLength: 1, maxLength: 1024, description: 'At least 12 characters.' }) },
  { additionalProperties: false },
);
const security = [{ adminSession: [], csrfToken: [] }];

const sessionJson = (s: ActiveSession) => ({ csrfToken: s.csrfToken, expiresAt: iso(s.expiresAt), admin: s.admin });

export const adminSessionRoutes =
  /** `ended`: told once a logout has committed, to end that session's event streams in this process at once. */
  (ctx: Context, ended: (sessionIdHash: string) => Promise<void> = async () => {}): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();
    const secure = ctx.config.publicUrl.startsWith('https:');
    const setCookie = (reply: FastifyReply, value: string, maxAgeSeconds: number) =>
      reply.setCookie(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', path: '/admin', secure, maxAge: maxAgeSeconds });

    app.post('/admin/v1/session', {
      config: { adminAuth: 'none' },
      schema: {
        operationId: 'createSession',
        summary: 'Log in: sets the svc_admin cookie and returns the CSRF token',
        tags: ['session'],
        // No credentials: this is how an admin gets them (an explicit empty list, not an omission).
        security: [],
        body: Credentials,
        response: { 200: ref(Session), ...errorResponses(400, 401, 403, 422, 429) },
      },
    }, async (request, reply) => {
      const s = await login(ctx, request.body.email, request.body.password, request.ip);
      setCookie(reply, s.token, ctx.config.sessionMaxHours * 3600);
      return sessionJson(s);
    });

    app.get('/admin/v1/session', {
      config: { adminAuth: 'cookie' },
      schema: { operationId: 'getSession', summary: 'The current session and its CSRF token (cookie alone)', tags: ['session'], security: [{ adminSession: [] }], response: { 200: ref(Session), ...errorResponses(401, 403) } },
    }, async (request) => sessionJson(request.auth.session!));

    app.delete('/admin/v1/session', {
      schema: { operationId: 'deleteSession', summary: 'Log out', tags: ['session'], security, response: { 204: Type.Null(), ...errorResponses(401, 403) } },
    }, async (request, reply) => {
      await logout(ctx, request.auth.session!);
      await ended(request.auth.session!.idHash);
      setCookie(reply, '', 0);
      return reply.code(204).send(null);
    });

    app.post('/admin/v1/session/password', {
      schema: {
        operationId: 'changePassword',
        summary: 'Change this admin\'s password: a wrong current password counts as a failed login; every other session of this admin ends',
        tags: ['session'],
        security,
        body: PasswordChange,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 422, 429) },
      },
    }, async (request, reply) => {
      const session = request.auth.session!;
      for (const idHash of await changePassword(ctx, session, request.body.currentPassword, request.body.newPassword, request.ip)) await ended(idHash);
      return reply.code(204).send(null);
    });

    app.post('/admin/v1/setup', {
      config: { adminAuth: 'none' },
      schema: {
        operationId: 'createFirstAdmin',
        summary: 'Create the first admin with the one-time setup token printed at first start',
        tags: ['session'],
        // The one-time setup token travels in the body, not as a credential scheme.
        security: [],
        body: SetupBody,
        response: { 201: Type.Object({ admin: Type.Object({ id: Type.String(), email: Type.String() }) }), ...errorResponses(401, 403, 409, 422) },
      },
    }, async (request, reply) => {
      const admin = await completeSetup(ctx, request.body.token, request.body.email, request.body.password);
      return reply.code(201).send({ admin });
    });
  };
