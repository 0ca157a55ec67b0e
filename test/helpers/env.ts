/** The environment every test server starts with. */
export const TEST_ENV = {
  TRELLIS_ADMIN_EMAIL: 'owner@example.com',
  TRELLIS_ADMIN_PASSWORD: 'owner-password-1',
  TRELLIS_SECRET: 'test-secret-0123456789abcdef0123456789abcdef',
  TRELLIS_LOG_LEVEL: 'silent',
  TRELLIS_APP_NAME: 'Test app',
  PORT: '0',
  HOST: '127.0.0.1',
} as const;

export const OWNER = { email: TEST_ENV.TRELLIS_ADMIN_EMAIL, password: TEST_ENV.TRELLIS_ADMIN_PASSWORD };
