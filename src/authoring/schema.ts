import { z } from 'zod';

/** A validator finding: a stable code, the message, and where (1-based). */
export const findingOutput = z.object({
  code: z.string().describe("A stable id such as 'SYNTAX' or 'UNKNOWN_FIELD'; match on it, never on the message"),
  message: z.string(),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
});

/** The answer of validate_feature_code and validate_hook_code (GraphQL's CodeValidation). */
export const codeValidationOutput = z
  .object({ valid: z.boolean(), errors: z.array(findingOutput), warnings: z.array(findingOutput) })
  .describe('What a code validator found: valid is false exactly when there is an error. Each finding has code, message, line and column.');
