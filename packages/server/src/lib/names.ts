/**
 * A collection's name (SPEC: `^[a-z][a-z0-9_]{0,62}$`): in lib/, so every layer that checks one (records, an API
 * token's collections in auth/) reads the same rule.
 */
export const COLLECTION_NAME = /^[a-z][a-z0-9_]{0,62}$/;
