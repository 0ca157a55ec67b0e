import { z } from 'zod';
import type { CodeValidation, Finding } from './ast-walk.js';
import { badInput } from '../platform/errors.js';

/** Patches of one edit, applied in order by `applyPatches`, each to the code the previous one left. */
export const codePatchesSchema = z
  .array(
    z.object({
      old_str: z.string().min(1, 'must not be empty').describe('Exact text in the current code; must occur exactly once'),
      new_str: z.string().describe('Replacement text'),
    }),
  )
  .min(1, 'must hold at least one patch')
  .max(50, 'must hold at most 50 patches');

/** Errors quoted in the message of a refused save; all of them are in `details.errors`. */
const QUOTED_ERRORS = 3;

/**
 * Passes code whose validation found no error and returns its warnings, which never block a save.
 *
 * @throws BAD_INPUT naming `field`, e.g. `customCode: 2 problems: 3:7 Unexpected token; 9:1 ...`,
 *   with details { field, errors }.
 * @example assertValidCode('content', validateHookCode(code)) // [] or the warnings
 */
export function assertValidCode(field: string, validation: CodeValidation): Finding[] {
  const { errors } = validation;
  if (!errors.length) return validation.warnings;
  const quoted = errors.slice(0, QUOTED_ERRORS).map(describeFinding).join('; ');
  const more = errors.length > QUOTED_ERRORS ? `; and ${errors.length - QUOTED_ERRORS} more` : '';
  throw badInput(`${field}: ${errors.length} problem${errors.length === 1 ? '' : 's'}: ${quoted}${more}`, { field, errors });
}

function describeFinding(finding: Finding): string {
  return finding.line === undefined ? finding.message : `${finding.line}:${finding.column ?? 1} ${finding.message}`;
}
