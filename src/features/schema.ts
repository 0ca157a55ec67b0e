import { z } from 'zod';
import { codePatchesSchema } from '../platform/code-edits.js';
import { idSchema } from '../platform/validation.js';

/** Feature code limit (spec section 8): 1 MB of UTF-8. */
export const FEATURE_CODE_MAX_BYTES = 1_048_576;

export const FEATURE_STATUSES = ['draft', 'published'] as const;
export type FeatureStatus = (typeof FEATURE_STATUSES)[number];

/** A feature `_id` chosen by the caller; it becomes part of the path `/feature/<_id>`. */
export const FEATURE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,63}$/;

const featureId = z
  .string()
  .regex(FEATURE_ID_PATTERN, 'must be 2 to 64 characters: lowercase letters, digits and -, starting with a letter or digit');
const featureName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const description = z.string().max(2000, 'must be at most 2000 characters');
const status = z.enum(FEATURE_STATUSES, { message: `must be one of ${FEATURE_STATUSES.join(', ')}` });

export const createFeatureInput = z.object({
  _id: featureId.optional(),
  name: featureName,
  description: description.default(''),
  /** JSX; its size is checked by the service (PAYLOAD_TOO_LARGE). */
  customCode: z.string(),
  status: status.default('draft'),
});

export const updateFeatureInput = z.object({
  _id: idSchema,
  name: featureName.optional(),
  description: description.optional(),
  customCode: z.string().optional(),
  status: status.optional(),
});

export const editFeatureCodeInput = z.object({
  _id: idSchema,
  patches: codePatchesSchema,
  status: status.optional(),
});

export const deleteFeatureInput = z.object({
  _id: idSchema,
  confirm: z.literal(true, { message: 'must be true to delete' }),
});

export const listFeaturesInput = z.object({
  /** Case-insensitive substring of the name or the `_id`. */
  query: z.string().max(200, 'must be at most 200 characters').optional(),
});

export type CreateFeatureInput = z.input<typeof createFeatureInput>;
export type UpdateFeatureInput = z.input<typeof updateFeatureInput>;
export type EditFeatureCodeInput = z.input<typeof editFeatureCodeInput>;
export type DeleteFeatureInput = z.input<typeof deleteFeatureInput>;
export type ListFeaturesInput = z.input<typeof listFeaturesInput>;
