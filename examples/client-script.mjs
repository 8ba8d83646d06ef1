// Creates a record with the svc client and lists the collection, page by page.
// Run: npm run build -w packages/sdk && SVC_URL=http://127.0.0.1:8080 SVC_TOKEN=svc_pat_… node examples/client-script.mjs
// SVC_COLLECTION (default `issues`) must exist and have a text field `title`; the token needs records:read and
// records:write on it. Prints one JSON line per step; exits 1 with svc's error code and request id on a failure.
import { randomUUID } from 'node:crypto';
import { createClient, SvcApiError } from 'svc-sdk';

const baseUrl = process.env.SVC_URL ?? 'http://127.0.0.1:8080';
const token = process.env.SVC_TOKEN;
const collection = process.env.SVC_COLLECTION ?? 'issues';
if (!token) {
  console.error('Set SVC_TOKEN to an API token (svc token create --name script --scope records:read --scope records:write).');
  process.exit(1);
}

const client = createClient({ baseUrl, token });
const issues = client.records(collection);

try {
  const { limits } = await client.capabilities();
  console.log(JSON.stringify({ step: 'capabilities', maxPageSize: limits.recordsListMaxLimit }));

  // The idempotency key makes this create safe to retry after a timeout: svc answers the first record again.
  const created = await issues.create({ title: `Created by client-script at ${new Date().toISOString()}` }, {
    idempotencyKey: randomUUID(),
  });
  console.log(JSON.stringify({ step: 'created', id: created.id, version: created.version }));

  // If-Match: the update applies only if nobody changed the record since we read it.
  const updated = await issues.update(created.id, { title: `${created.data.title} (edited)` }, { ifMatch: created.version });
  console.log(JSON.stringify({ step: 'updated', id: updated.id, version: updated.version }));

  const first = await issues.list({ limit: 10 });
  console.log(JSON.stringify({ step: 'first page', count: first.items.length, more: first.nextCursor !== null }));

  let total = 0;
  for await (const record of issues.all()) {
    total += 1;
    if (record.id === created.id) console.log(JSON.stringify({ step: 'found', id: record.id, data: record.data }));
  }
  console.log(JSON.stringify({ step: 'listed', total }));
} catch (error) {
  if (!(error instanceof SvcApiError)) throw error;
  console.error(JSON.stringify({ status: error.status, code: error.code, detail: error.detail, requestId: error.requestId, errors: error.errors }));
  process.exitCode = 1;
}
