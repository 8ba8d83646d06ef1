import type { BrokerSetting } from '../config/brokers.js';
import { AppError, type FieldError } from '../errors.js';
import { templateProblem } from './address-template.js';
import type { Destination, TargetType } from './targets-store.js';

/**
 * A target's destination as a create or a PATCH leaves it (SPEC §14), checked: `validation_failed`, one error per
 * field at fault, each at its path. The destination guard (the URL's rules) is the caller's, for https targets only:
 * broker addresses are the operator's, named in SVC_BROKERS, and never subject to it.
 */

export type DestinationInput = Partial<Destination>;

type Field = Exclude<keyof Destination, 'type'>;
const FIELDS: readonly Field[] = ['url', 'broker', 'subject', 'exchange', 'routingKey', 'stream', 'maxLength'];

/** The fields each type has, the required ones first. */
const FIELDS_OF: Readonly<Record<TargetType, { required: readonly Field[]; optional: readonly Field[] }>> = {
  https: { required: ['url'], optional: [] },
  nats: { required: ['broker', 'subject'], optional: [] },
  rabbitmq: { required: ['broker', 'exchange'], optional: ['routingKey'] },
  redis: { required: ['broker', 'stream'], optional: ['maxLength'] },
};

const NONE: Omit<Destination, 'type'> = { url: null, broker: null, subject: null, exchange: null, routingKey: null, stream: null, maxLength: null };

/**
 * A PATCH that keeps the type changes only the fields it names; one that changes the type starts afresh, so the old
 * type's fields (a URL, a subject) never linger on a target that no longer uses them.
 */
export function resolveDestination(input: DestinationInput, current: Destination | null, brokers: readonly BrokerSetting[]): Destination {
  const type = input.type ?? current?.type ?? 'https';
  // Only the destination's own fields of the current target: the whole row spread here would ride into the PATCH's
  // update and write back its name (over a new one) and its sealed secrets (over a rotation made meanwhile).
  const base: Destination = { type, ...NONE };
  if (current && current.type === type) for (const field of FIELDS) (base as unknown as Record<Field, unknown>)[field] = current[field];
  for (const field of FIELDS) if (input[field] !== undefined) (base as unknown as Record<Field, unknown>)[field] = input[field];
  const errors = destinationProblems(base, brokers);
  if (errors.length > 0) throw new AppError('validation_failed', `The ${type} target's destination is not acceptable.`, { errors });
  return base;
}

function destinationProblems(d: Destination, brokers: readonly BrokerSetting[]): FieldError[] {
  const errors: FieldError[] = [];
  const { required, optional } = FIELDS_OF[d.type];
  for (const field of FIELDS) {
    const value = d[field];
    if (required.includes(field) && value === null) errors.push({ path: `/${field}`, message: `is required for ${d.type} targets` });
    if (!required.includes(field) && !optional.includes(field) && value !== null) {
      errors.push({ path: `/${field}`, message: `must be absent or null for ${d.type} targets` });
    }
  }
  if (errors.length > 0 || d.type === 'https') return errors;
  const named = brokers.find((b) => b.name === d.broker);
  if (!named || named.kind !== d.type) {
    const ofKind = brokers.filter((b) => b.kind === d.type).map((b) => `"${b.name}"`);
    const message = named
      ? `"${d.broker}" is a ${named.kind} broker, not ${d.type}`
      : `no ${d.type} broker "${d.broker}" is configured (SVC_BROKERS names ${ofKind.length > 0 ? ofKind.join(', ') : `none of kind ${d.type}`})`;
    errors.push({ path: '/broker', message });
  }
  const check = (path: string, problem: string | null) => problem !== null && errors.push({ path, message: problem });
  if (d.subject !== null) check('/subject', templateProblem('subject', d.subject));
  if (d.routingKey !== null) check('/routingKey', templateProblem('routingKey', d.routingKey));
  if (d.stream !== null) check('/stream', d.stream === '' ? 'must not be empty' : templateProblem('stream', d.stream));
  // AMQP exchange names: RabbitMQ's own alphabet; none takes placeholders (an exchange is declared, not made per event).
  if (d.exchange !== null && !/^[A-Za-z0-9_.:-]{0,255}$/.test(d.exchange)) check('/exchange', 'must be at most 255 of A-Z, a-z, 0-9, -, _, . and :');
  return errors;
}

/**
 * Redis fields beside `body` and `id` carry the headers: a static header of either name would be read as one of them,
 * so a redis target refuses it (at the header's path, as other refused names are).
 */
const REDIS_FIELDS = new Set(['body', 'id']);

export function checkHeadersFor(type: TargetType, names: readonly string[]): void {
  if (type !== 'redis') return;
  const clashes = names.filter((n) => REDIS_FIELDS.has(n.toLowerCase()));
  if (clashes.length === 0) return;
  throw new AppError('validation_failed', 'A redis target cannot send a header named body or id: they are the entry\'s own fields.', {
    errors: clashes.map((n) => ({ path: `/headers/${n}`, message: 'is one of the stream entry\'s own fields (body, id) on a redis target' })),
  });
}
