// A complete svc webhook receiver on Fastify. The signature covers the body's bytes, so the webhook route takes the
// raw body from a content-type parser instead of Fastify's JSON parser.
// Run: npm run build -w packages/sdk && SVC_WEBHOOK_SECRET=whsec_… PORT=3000 node examples/receiver-fastify.mjs
// svc delivers only to public HTTPS URLs: run this behind a TLS-terminating proxy (HOST defaults to loopback).
import Fastify from 'fastify';
import { pathToFileURL } from 'node:url';
import { MemoryDedupeStore, WebhookVerificationError, handleDelivery } from 'svc-sdk/verify';

const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * @param {{ secret?: string, secrets?: string[], onEvent: (envelope: object) => unknown,
 *   store?: import('svc-sdk/verify').DedupeStore, inProgressTtlSeconds?: number, path?: string,
 *   maxBodyBytes?: number, logger?: boolean }} options
 * @returns {import('fastify').FastifyInstance} not yet listening
 */
export function createReceiver({
  secret,
  secrets,
  onEvent,
  store = new MemoryDedupeStore(),
  inProgressTtlSeconds,
  path = '/webhooks/svc',
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  logger = false,
}) {
  const app = Fastify({ logger });

  app.register(async (webhooks) => {
    // Inside this plugin only: other routes of a real application keep Fastify's JSON parser.
    webhooks.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: maxBodyBytes },
      (_req, body, done) => done(null, body),
    );

    webhooks.post(path, async (req, reply) => {
      const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      try {
        const outcome = await handleDelivery(
          { secret, secrets, headers: req.headers, rawBody, store, inProgressTtlSeconds },
          onEvent,
        );
        return reply.code(200).send({ ok: true, duplicate: outcome.duplicate });
      } catch (error) {
        // 401 for a delivery that cannot be authenticated, 400 for an authentic one that is unusable, 409 while
        // another run is still processing the same delivery (never 2xx: that run may yet fail, and svc must try again).
        if (error instanceof WebhookVerificationError) return reply.code(error.status).send({ error: error.code });
        // The claim was released (or the success could not be recorded): a 5xx makes svc retry, and the retry runs
        // onEvent again.
        req.log.error({ err: error }, 'webhook handler failed');
        return reply.code(500).send({ error: 'handler_failed' });
      }
    });
  });

  return app;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secrets = (process.env.SVC_WEBHOOK_SECRET ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (secrets.length === 0) {
    console.error('set SVC_WEBHOOK_SECRET to the webhook signing secret (whsec_…)');
    process.exit(1);
  }
  const app = createReceiver({
    secrets,
    logger: true,
    onEvent: (envelope) => app.log.info({ id: envelope.id, topic: envelope.topic }, 'webhook received'),
  });
  await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' });
  for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => void app.close());
}
