import type { TargetRow } from '../targets-store.js';
import type { AttemptOutcome, DeliverySender, OutgoingMessage } from './sender.js';

/** The worker's one sender: an https target's attempt goes to the HTTPS client, any other to the broker pool. */
export function routeByType(https: DeliverySender, brokers: DeliverySender): DeliverySender {
  return {
    deliver(target: TargetRow, message: OutgoingMessage, signal: AbortSignal): Promise<AttemptOutcome> {
      return (target.type === 'nats' || target.type === 'rabbitmq' || target.type === 'redis' ? brokers : https).deliver(target, message, signal);
    },
  };
}
