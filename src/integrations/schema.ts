import { z } from 'zod';
import { idSchema } from '../platform/validation.js';

export const createIntegrationKeyInput = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
  /** The role (its `_id` or name) whose data-access rules the integration acts with; absent: every record. */
  roleId: idSchema.nullish(),
});

export const deleteIntegrationKeyInput = z.object({
  clientId: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
});

export type CreateIntegrationKeyInput = z.input<typeof createIntegrationKeyInput>;
export type DeleteIntegrationKeyInput = z.input<typeof deleteIntegrationKeyInput>;

const credential = z
  .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters');

/** The body of `POST /api/auth/token` (docs/spec.md 4.3): the credentials of an integration key. */
export const accessTokenRequestInput = z.object({ clientId: credential, apiKey: credential });

export type AccessTokenRequestInput = z.input<typeof accessTokenRequestInput>;

/** Since API 2.10.0 (docs/spec.md 9) the token endpoint refuses an identity provider's credentials. */
export const IDENTITY_PROVIDER_CREDENTIALS_REFUSED =
  'Since API version 2.10.0, /api/auth/token accepts only clientId and apiKey from an integration key created in the designer ' +
  '(Designer > Integrations > API Keys); client_id/client_secret of an identity provider are no longer accepted.';
