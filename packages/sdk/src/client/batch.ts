import type { components, paths } from './openapi.js';
import { unwrap, type ApiClient, type CreateOptions, type RecordData } from './records.js';

type BatchBody = paths['/api/v1/batch']['post']['requestBody']['content']['application/json'];

/** One write of a batch: `POST` creates, `PATCH` sets fields (`ifMatch` guards it), `DELETE` removes. */
export type BatchOperation =
  | { method: 'POST'; collection: string; data: RecordData }
  | { method: 'PATCH'; collection: string; id: string; data: RecordData; ifMatch?: number }
  | { method: 'DELETE'; collection: string; id: string; ifMatch?: number };

/** Each operation's outcome, in order: 201 created or 200 updated (with the record), 204 deleted. */
export type BatchResult =
  | { status: 201 | 200; record: components['schemas']['RecordWritten'] }
  | { status: 204 };

/**
 * `POST /api/v1/batch`: every operation in one transaction; all commit or none does. The first failing
 * operation rejects the call with its own status and code, its error paths under `/operations/<index>`.
 */
export async function runBatch(api: ApiClient, operations: readonly BatchOperation[], options: CreateOptions = {}): Promise<BatchResult[]> {
  const answer = await unwrap(
    api.POST('/api/v1/batch', {
      params: { header: { 'idempotency-key': options.idempotencyKey } },
      body: { operations: operations as BatchBody['operations'] },
      signal: options.signal,
    }),
  );
  return answer.results as BatchResult[];
}
