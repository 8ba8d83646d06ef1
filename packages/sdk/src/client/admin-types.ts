import type { Client } from 'openapi-fetch';
import type { paths } from './admin-openapi.js';

/** The openapi-fetch client typed from svc's admin document (`admin.api`). It answers `{ data, error, response }`. */
export type AdminApi = Client<paths, 'application/json'>;
