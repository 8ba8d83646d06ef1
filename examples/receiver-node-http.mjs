// A complete svc webhook receiver on node:http: raw body with a size cap, verification, de-duplication.
// Run: npm run build -w packages/sdk && SVC_WEBHOOK_SECRET=whsec_… PORT=3000 node examples/receiver-node-http.mjs
// During a secret rotation, SVC_WEBHOOK_SECRET may hold both secrets separated by a comma. With REDIS_URL set (and the
// `redis` package installed) de-duplication is shared through Redis, as several receiver processes need.
// svc delivers only to public HTTPS URLs: run this behind a TLS-terminating proxy (HOST defaults to loopback for that
// reason).
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { MemoryDedupeStore, WebhookVerificationError, handleDelivery } from 'svc-sdk/verify';

// svc accepts records up to 1 MiB by default, and a record.updated envelope carries two of them.
const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

class BodyTooLarge extends Error {}

function readRawBody(req, limit) {
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length']) > limit) return reject(new BodyTooLarge());
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        reject(new BodyTooLarge());
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * @param {{ secret?: string, secrets?: string[], onEvent: (envelope: object) => unknown,
 *   store?: import('svc-sdk/verify').DedupeStore, inProgressTtlSeconds?: number, path?: string,
 *   maxBodyBytes?: number }} options
 * @returns {http.Server} not yet listening
 */
export function createReceiver({
  secret,
  secrets,
  onEvent,
  store = new MemoryDedupeStore(),
  inProgressTtlSeconds,
  path = '/webhooks/svc',
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
}) {
  return http.createServer(async (req, res) => {
    if (new URL(req.url ?? '/', 'http://receiver').pathname !== path) return send(res, 404, { error: 'not_found' });
    if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' }, { allow: 'POST' });
    let rawBody;
    try {
      rawBody = await readRawBody(req, maxBodyBytes);
    } catch (error) {
      // Closing the connection stops the client from sending the rest of an oversized body.
      if (error instanceof BodyTooLarge) return send(res, 413, { error: 'payload_too_large' }, { connection: 'close' });
      return send(res, 400, { error: 'bad_request' });
    }
    try {
      const outcome = await handleDelivery(
        { secret, secrets, headers: req.headers, rawBody, store, inProgressTtlSeconds },
        onEvent,
      );
      // A duplicate was processed already: 2xx, so svc stops redelivering it.
      send(res, 200, { ok: true, duplicate: outcome.duplicate });
    } catch (error) {
      // 401 for a delivery that cannot be authenticated, 400 for an authentic one that is unusable, 409 while another
      // run is still processing the same delivery (never 2xx: that run may yet fail, and svc must try again then).
      if (error instanceof WebhookVerificationError) return send(res, error.status, { error: error.code });
      // The claim was released (or the success could not be recorded): a 5xx makes svc retry, and the retry runs
      // onEvent again.
      console.error('webhook handler failed', error);
      send(res, 500, { error: 'handler_failed' });
    }
  });
}

async function storeFromEnv() {
  if (!process.env.REDIS_URL) return new MemoryDedupeStore();
  const { createClient } = await import('redis');
  const { RedisDedupeStore } = await import('svc-sdk/verify/redis');
  const client = createClient({ url: process.env.REDIS_URL });
  // node-redis emits connection errors as events: without a listener one would end the process.
  client.on('error', (error) => console.error('redis', error.message));
  await client.connect();
  return new RedisDedupeStore(client);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const secrets = (process.env.SVC_WEBHOOK_SECRET ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (secrets.length === 0) {
    console.error('set SVC_WEBHOOK_SECRET to the webhook signing secret (whsec_…)');
    process.exit(1);
  }
  const server = createReceiver({
    secrets,
    store: await storeFromEnv(),
    onEvent: (envelope) => console.log(JSON.stringify({ id: envelope.id, topic: envelope.topic })),
  });
  server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1', () => {
    console.log(`listening on ${JSON.stringify(server.address())}`);
  });
  process.once('SIGTERM', () => server.close());
  process.once('SIGINT', () => server.close());
}
