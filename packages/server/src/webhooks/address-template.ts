/**
 * Subjects, routing keys and stream names with `{collection}` and `{topic}` (SPEC §14), replaced per event. A topic's
 * dot stays a dot: in a NATS subject or an AMQP routing key it is one more token or word (`svc.{topic}` →
 * `svc.record.created`), so a consumer can subscribe to `svc.record.>` or bind `svc.record.*`.
 */

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = new Set(['collection', 'topic']);

/** Collection names (`[a-z_][a-z0-9_]*`, `_test`, `_svc`) and topics hold nothing a subject or a key could not. */
export function expandAddress(template: string, event: { collection: string; topic: string }): string {
  if (!template.includes('{')) return template;
  return template.replace(PLACEHOLDER, (_m, name: string) => (name === 'collection' ? event.collection : event.topic));
}

const ENVELOPE_HEAD = /^\{"version":"1","id":"[^"]*","topic":"([^"]*)","collection":"([^"]*)"/;

/**
 * The topic and collection of an envelope (envelope.ts writes them third and fourth, always), for a template's
 * placeholders: read from the body's first bytes rather than carried beside it, so the job, the claim and the
 * hand-off need nothing more.
 */
export function envelopeEvent(body: Buffer): { topic: string; collection: string } {
  const m = ENVELOPE_HEAD.exec(body.toString('utf8', 0, Math.min(body.length, 512)));
  return m ? { topic: m[1]!, collection: m[2]! } : { topic: '', collection: '' };
}

/** The limits of each field, as the brokers set them: NATS subjects by convention, AMQP's shortstr, Redis keys by sense. */
const MAX_LENGTH = { subject: 255, routingKey: 255, stream: 512 } as const;
export type TemplateField = keyof typeof MAX_LENGTH;

/**
 * What is wrong with a template, or null. The widest expansion (a 63-character collection, the longest topic) must fit
 * the field's limit too, so no event can make an address the broker refuses.
 */
export function templateProblem(field: TemplateField, template: string): string | null {
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(m[1]!)) return `{${m[1]}} is not a placeholder: only {collection} and {topic}`;
  }
  const widest = expandAddress(template, { collection: 'c'.repeat(63), topic: 'collection.deleted' });
  if (/[{}]/.test(widest)) return 'a brace that is not part of {collection} or {topic}';
  if (Buffer.byteLength(widest) > MAX_LENGTH[field]) return `longer than ${MAX_LENGTH[field]} bytes once {collection} and {topic} are replaced`;
  // Control characters never belong in a name; NATS and AMQP names take no whitespace either.
  if (/[\u0000-\u001f\u007f]/.test(template)) return 'holds a control character';
  if (field === 'subject') return subjectProblem(expandAddress(template, { collection: 'c', topic: 't.t' }));
  if (field === 'routingKey' && /\s/.test(template)) return 'holds whitespace';
  return null;
}

/** A NATS subject a message can be published to: dot-separated tokens, none empty, no whitespace, no wildcard. */
function subjectProblem(subject: string): string | null {
  if (/\s/.test(subject)) return 'holds whitespace';
  const tokens = subject.split('.');
  if (tokens.some((t) => t === '')) return 'has an empty token (a leading, trailing or doubled dot)';
  if (tokens.some((t) => t === '*' || t === '>' || t.includes('*') || t.includes('>'))) return 'holds a wildcard (* or >): a message is published to one subject';
  return null;
}
