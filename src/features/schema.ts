import { z } from 'zod';
import { codePatchesSchema } from '../authoring/code-edits.js';
import { readableName } from '../platform/names.js';
import { confirmTrue, idOutput, idValues, isoTime, recordRef, userRef } from '../platform/validation.js';

/** Feature code limit (spec section 8): 1 MB of UTF-8. */
export const FEATURE_CODE_MAX_BYTES = 1_048_576;

export const FEATURE_STATUSES = ['draft', 'published'] as const;
export type FeatureStatus = (typeof FEATURE_STATUSES)[number];

/** A feature `_id` chosen by the caller; it becomes part of the path `/feature/<_id>`. */
export const FEATURE_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,63}$/;

const featureId = z
  .string()
  .regex(FEATURE_ID_PATTERN, 'must be 2 to 64 characters: lowercase letters, digits and -, starting with a letter or digit');
idValues.add(featureId, { kind: 'id' });
const featureName = readableName(100);
const description = z.string().max(2000, 'must be at most 2000 characters');
const status = z.enum(FEATURE_STATUSES, { message: `must be one of ${FEATURE_STATUSES.join(', ')}` });

// One contract per operation: the MCP tools, GraphQL and the CLI take these schemas as they are,
// so tools/list states every constraint the service checks (descriptions included).
export const createFeatureInput = z.object({
  _id: featureId.optional().describe('Optional _id: 2-64 lowercase letters, digits and -; derived from the name when omitted'),
  name: featureName.describe('Display name, unique'),
  description: description.default(''),
  /** JSX; its size is checked by the service (PAYLOAD_TOO_LARGE). */
  customCode: z.string().describe('The JSX source (at most 1 MB): one default-exported component'),
  status: status.default('draft').describe('draft (default) or published'),
});

export const updateFeatureInput = z.object({
  _id: recordRef('feature'),
  name: featureName.optional(),
  description: description.optional(),
  customCode: z.string().optional().describe('The complete new JSX source'),
  status: status.optional().describe('draft or published; publishing makes this version the one the application page runs. Left out, the feature keeps its status: a change to a published feature goes live at once, so pass draft to stage it'),
});

export const editFeatureCodeInput = z.object({
  _id: recordRef('feature'),
  patches: codePatchesSchema,
  status: status.optional().describe('draft or published. Left out, the feature keeps its status: an edit of a published feature goes live at once; pass draft to stage it for review'),
});

export const deleteFeatureInput = z.object({
  _id: recordRef('feature'),
  confirm: confirmTrue,
});

export const listFeaturesInput = z.object({
  /** Case-insensitive substring of the name or the `_id`. */
  query: z.string().max(200, 'must be at most 200 characters').optional().describe('Substring of the name or _id (any letter case)'),
});

export const featureRefInput = z.object({ _id: recordRef('feature') });

// The same argument name as create_feature and update_feature: what validates is what is saved.
export const validateFeatureCodeInput = z.object({
  customCode: z.string().describe('The complete JSX source of the feature, as create_feature and update_feature take it'),
  featureId: recordRef('feature')
    .optional()
    .describe("The feature the code is for (its _id or name): also warns for each role that sees it but may not do what the code's GraphQL documents need"),
});

const savedVersion = z.number().int('must be a whole number').describe('A saved version of the feature (featureVersions lists them)');
export const featureVersionDiffInput = z.object({ _id: recordRef('feature'), from: savedVersion, to: savedVersion });

export const featurePreviewInput = z.object({
  _id: recordRef('feature'),
  customCode: z.string().optional().describe('JSX to compile in place of the saved code (at most 1 MB); left out, the saved code'),
});

/** A feature in an answer, without its code (MCP's lists and writes). */
export const featureOutput = z.object({
    _id: idOutput,
    name: z.string(),
    description: z.string(),
    status: z.enum(FEATURE_STATUSES).describe('draft or published'),
    version: z.number().int(),
    publishedVersion: z.number().int().nullable().describe('The version the application page runs; null while never published'),
    createdBy: userRef,
    updatedBy: userRef,
    createdAt: isoTime,
    updatedAt: isoTime,
    roleIds: z.array(idOutput).describe('The ids of the roles that see the feature'),
  });

/** A feature with its code (MCP's get_feature, GraphQL's Feature). */
export const featureWithCodeOutput = featureOutput.extend({ customCode: z.string() }).describe('A custom feature written as JSX, reached at /feature/<_id>.');

export type CreateFeatureInput = z.input<typeof createFeatureInput>;
export type UpdateFeatureInput = z.input<typeof updateFeatureInput>;
export type EditFeatureCodeInput = z.input<typeof editFeatureCodeInput>;
export type DeleteFeatureInput = z.input<typeof deleteFeatureInput>;
export type ListFeaturesInput = z.input<typeof listFeaturesInput>;
