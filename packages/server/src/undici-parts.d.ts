/**
 * The two parts of undici svc's HTTPS sender uses, imported from their own files (webhooks/http-client.ts,
 * https/guarded-connect.ts): undici's index also loads its fetch, WebSocket, EventSource, cookies, mocks and caches,
 * and with them Node's own fetch, ~80 ms of every process's start that no process used. The types are the index's.
 */
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export default Agent;
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici';
  export default buildConnector;
}
