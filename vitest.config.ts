import { defineConfig } from 'vitest/config';

// One suite for every package. Database-backed suites loop over the dialects themselves
// (SQLite always, PostgreSQL when SVC_TEST_POSTGRES_URL is set), so nothing here is per-database.
export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // SVC_TEST_REQUIRE's services checked, and PostgreSQL's migrated template built, once before any test file.
    globalSetup: ['packages/server/test/global-setup.ts'],
  },
});
