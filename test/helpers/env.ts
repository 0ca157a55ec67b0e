/** The environment every test server starts with. */
export const TEST_ENV = {
  TRELLIS_ADMIN_EMAIL: 'owner@example.com',
  TRELLIS_ADMIN_PASSWORD: 'owner-password-1',
  TRELLIS_SECRET: 'test-secret-0123456789abcdef0123456789abcdef',
  TRELLIS_LOG_LEVEL: 'silent',
  TRELLIS_APP_NAME: 'Test app',
  // The engine counts a run's computation as the time its thread spends in it, descheduled or not
  // (Node 20 has no per-thread CPU clock): on a 2-core machine loaded to 15 runnable threads, a
  // trivial run passed the 200 ms default and was stopped. Tests of the limit set their own.
  TRELLIS_HOOK_CPU_MS: '1000',
  PORT: '0',
  HOST: '127.0.0.1',
} as const;

export const OWNER = { email: TEST_ENV.TRELLIS_ADMIN_EMAIL, password: TEST_ENV.TRELLIS_ADMIN_PASSWORD };
