import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';

/** A failing case kept for good: replayed before every run of its property. */
export interface KeptCase {
  /** When it was found (ISO date). */
  found: string;
  /** The run that found it, to replay it with the generators (FUZZ_SEED). */
  seed: number;
  path: string | undefined;
  /** The arguments of the property (shrunk unless the run ended on the failure), replayed as they are. */
  counterexample: unknown[];
  /** The start of the error it raised. */
  error: string;
}

export type KeptCases = Record<string, KeptCase[]>;

export function readKept(file: string): KeptCases {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as KeptCases) : {};
}

/**
 * Checks `property` the way the fuzz suite does: first every case kept under `name` in `file`
 * (a regression must stay fixed), then `settings.numRuns` generated cases. A generated case that
 * fails is kept in `file` before the check fails, so that it runs on every later run, in CI too,
 * once the file is committed. Throws a short report: the seed to replay it, the error, the start
 * of the counterexample.
 */
export async function checkKeeping<T extends unknown[]>(
  file: string,
  name: string,
  property: fc.IAsyncProperty<T>,
  settings: { numRuns: number; seed: number; endOnFailure?: boolean },
): Promise<void> {
  const kept = readKept(file)[name] ?? [];
  if (kept.length) {
    const replay = await fc.check(property, { examples: kept.map((entry) => entry.counterexample as T), numRuns: kept.length, endOnFailure: true });
    if (replay.failed) throw new Error(`a kept case of '${name}' fails again (${file}): ${describe(replay.errorInstance)}\ncounterexample: ${JSON.stringify(replay.counterexample)?.slice(0, 400)}`);
  }
  const details = await fc.check(property, settings);
  if (!details.failed) return;
  const counterexample = (details.counterexample ?? []) as unknown[];
  const error = describe(details.errorInstance);
  const all = readKept(file);
  all[name] = [...(all[name] ?? []), { found: new Date().toISOString().slice(0, 10), seed: details.seed, path: details.counterexamplePath ?? undefined, counterexample, error: error.slice(0, 300) }];
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  const example = JSON.stringify(counterexample) ?? 'undefined';
  throw new Error(
    `failed after ${details.numRuns} cases (FUZZ_SEED=${details.seed}), kept in ${file}: ${error.slice(0, 400)}\ncounterexample (${example.length} chars): ${example.slice(0, 400)}`,
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
