/**
 * What the suite may not skip. Without SVC_TEST_REQUIRE, tests of a service that is not configured are skipped (a
 * newcomer's `npm test` passes with none of them, as the README says). `.ci/run` sets
 * `SVC_TEST_REQUIRE=postgres,redis,nats,amqp,chromium`: then a missing one fails the run instead of skipping its tests
 * (vitest's global setup checks each is reachable; the helpers below throw where a test file would skip).
 */
export const SERVICES = {
  postgres: 'SVC_TEST_POSTGRES_URL',
  redis: 'SVC_TEST_REDIS_URL',
  nats: 'SVC_TEST_NATS_URL',
  amqp: 'SVC_TEST_AMQP_URL',
  chromium: '/usr/bin/chromium',
} as const;

export type Service = keyof typeof SERVICES;

export function requiredServices(env: NodeJS.ProcessEnv = process.env): Set<Service> {
  const names = (env.SVC_TEST_REQUIRE ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(n in SERVICES));
  if (unknown.length > 0) throw new Error(`SVC_TEST_REQUIRE names ${unknown.join(', ')}: known are ${Object.keys(SERVICES).join(', ')}`);
  return new Set(names as Service[]);
}

/**
 * `value` (a URL from the environment, or '' when the service is not configured), checked against SVC_TEST_REQUIRE:
 * a required service that is not configured throws instead of letting its tests skip.
 */
export function provided<T extends string>(service: Service, value: T): T {
  if (!value && requiredServices().has(service)) {
    throw new Error(`SVC_TEST_REQUIRE names ${service}, but ${SERVICES[service]} is not set: its tests would be skipped`);
  }
  return value;
}
