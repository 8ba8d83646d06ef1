export const TOPICS = ['record.created', 'record.updated', 'record.deleted', 'webhook.test'] as const;
export type Topic = (typeof TOPICS)[number];
