import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Context } from '../../context.js';
import { errorResponses } from '../schemas.js';

/**
 * The brokers `SVC_BROKERS` configures (SPEC §14), for the admin UI's target form: names and kinds only. The URL
 * stays in the environment: it may hold a password, and a target names its broker, never an address.
 */

const strict = { additionalProperties: false } as const;
const Broker = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9-]{1,32}$' }),
    kind: Type.Union([Type.Literal('nats'), Type.Literal('rabbitmq'), Type.Literal('redis')], { description: 'nats: NATS JetStream; rabbitmq; redis: Redis Streams' }),
  },
  strict,
);

export const adminBrokerRoutes =
  (ctx: Context): FastifyPluginAsync =>
  async (plain) => {
    const app = plain.withTypeProvider<TypeBoxTypeProvider>();

    app.get('/admin/v1/brokers', {
      schema: {
        operationId: 'listBrokers',
        summary: 'The configured message brokers (SVC_BROKERS) a target may deliver into: names and kinds, never URLs',
        tags: ['webhooks'],
        security: [{ adminSession: [], csrfToken: [] }],
        response: { 200: Type.Object({ items: Type.Array(Broker) }, strict), ...errorResponses(401, 403) },
      },
    }, async () => ({ items: ctx.config.brokers.map((b) => ({ name: b.name, kind: b.kind })) }));
  };
