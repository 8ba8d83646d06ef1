export const TOPICS = ['record.created', 'record.updated', 'record.deleted', 'webhook.test', 'webhook.disabled', 'delivery.dead', 'collection.deleted'] as const;
export type Topic = (typeof TOPICS)[number];

/** Svc's own events about its deliveries (SPEC §10): admin feed only, envelope collection `_svc`. */
export const OPERATIONAL_TOPICS = ['webhook.disabled', 'delivery.dead'] as const satisfies readonly Topic[];
export type OperationalTopic = (typeof OPERATIONAL_TOPICS)[number];

/** The reserved collection operational events name (user collections cannot start with `_`). */
export { OPERATIONAL_COLLECTION } from '../lib/ids.js';

export const isOperationalTopic = (topic: string): topic is OperationalTopic => (OPERATIONAL_TOPICS as readonly string[]).includes(topic);
