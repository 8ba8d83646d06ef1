// Sets up a collection and a filtered webhook target with the svc admin client, from a script.
// Run: npm run build -w packages/sdk &&
//   SVC_URL=http://127.0.0.1:8080 SVC_ADMIN_TOKEN=svcadm_… SVC_WEBHOOK_URL=https://hooks.example.com/orders \
//   node packages/sdk/examples/admin-script.mjs
// The token needs admin:read, admin:collections and admin:webhooks
// (svc admin-token create --name setup --scope admin:read admin:collections admin:webhooks).
// Running it again changes nothing that exists: the collection gains missing fields, the target is found by name.
// Prints one JSON line per step; exits 1 with svc's error code and request id on a failure.
import { createAdminClient, SvcApiError } from 'svc-sdk/admin';

const baseUrl = process.env.SVC_URL ?? 'http://127.0.0.1:8080';
const token = process.env.SVC_ADMIN_TOKEN;
const url = process.env.SVC_WEBHOOK_URL;
if (!token || !url) {
  console.error('Set SVC_ADMIN_TOKEN to an admin token and SVC_WEBHOOK_URL to the receiver (see the top of this file).');
  process.exit(1);
}

const admin = createAdminClient({ baseUrl, token });
const fields = [
  { name: 'status', type: 'text', required: true, indexed: true },
  { name: 'total', type: 'number', required: true },
  { name: 'customer', type: 'text' },
];
// Only large open orders reach the receiver: svc judges this in the write's own transaction, so others get no job.
const filter = "status = 'open' && total >= 100";

try {
  let orders;
  try {
    orders = await admin.collections.get('orders');
    const missing = fields.filter((f) => !orders.fields.some((have) => have.name === f.name));
    // A PATCH names every field, the existing ones as they are; only missing ones are added.
    if (missing.length > 0) orders = await admin.collections.update('orders', { fields: [...orders.fields, ...missing] });
    console.log(JSON.stringify({ step: 'collection', name: orders.name, created: false, added: missing.map((f) => f.name) }));
  } catch (error) {
    if (!(error instanceof SvcApiError && error.code === 'not_found')) throw error;
    orders = await admin.collections.create({ name: 'orders', fields });
    console.log(JSON.stringify({ step: 'collection', name: orders.name, created: true }));
  }

  let target;
  for await (const webhook of admin.webhooks.all()) if (webhook.name === 'large open orders') target = webhook;
  if (target) {
    console.log(JSON.stringify({ step: 'target', id: target.id, created: false, filter: target.filter }));
  } else {
    const created = await admin.webhooks.create({
      name: 'large open orders',
      url,
      topics: ['record.created', 'record.updated'],
      collections: ['orders'],
      filter,
    });
    // The secret is in this answer only: hand it to the receiver now (here: printed, for the example's sake).
    console.log(JSON.stringify({ step: 'target', id: created.id, created: true, filter: created.filter, secret: created.secret }));
    target = created;
  }

  const { deliveryId } = await admin.webhooks.test(target.id);
  console.log(JSON.stringify({ step: 'test delivery', deliveryId }));
} catch (error) {
  if (!(error instanceof SvcApiError)) throw error;
  console.error(JSON.stringify({ status: error.status, code: error.code, detail: error.detail, requestId: error.requestId, errors: error.errors }));
  process.exitCode = 1;
}
