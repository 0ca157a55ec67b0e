import { z } from 'zod';

export const createIntegrationKeyInput = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
});

export const deleteIntegrationKeyInput = z.object({
  clientId: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
});

export type CreateIntegrationKeyInput = z.input<typeof createIntegrationKeyInput>;
export type DeleteIntegrationKeyInput = z.input<typeof deleteIntegrationKeyInput>;
