import { z } from 'zod';
import { idOutput, isoTime } from '../platform/validation.js';

/** Largest value of one environment variable: 64 KB of UTF-8. */
export const ENV_VALUE_MAX_BYTES = 65_536;

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must start with a letter or _ and use only letters, digits and _ (at most 128)');

export const setEnvironmentVariableInput = z.object({
  name: envName.describe('Letters, digits and _; starts with a letter or _'),
  /** The secret; its size is checked by the service (PAYLOAD_TOO_LARGE). */
  value: z.string().describe('The secret value (at most 64 KB); never readable again, only hooks get it as env.<name>'),
});

export const deleteEnvironmentVariableInput = z.object({
  name: envName,
  confirm: z.literal(true, { message: 'must be true to delete' }),
});

/** An environment variable in an answer: never its value. */
export const environmentVariableOutput = z
  .object({ _id: idOutput, name: z.string(), createdAt: isoTime, updatedAt: isoTime })
  .describe('An environment variable of the hook runtime. Its value is write-only: no API returns it.');

export type SetEnvironmentVariableInput = z.input<typeof setEnvironmentVariableInput>;
export type DeleteEnvironmentVariableInput = z.input<typeof deleteEnvironmentVariableInput>;
