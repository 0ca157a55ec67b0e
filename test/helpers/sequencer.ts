import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds per test file and suite, from a past run (scripts/test-durations.mjs writes it). */
const DURATIONS: Record<'embedded' | 'postgres', Record<string, number>> = JSON.parse(
  readFileSync(new URL('../durations.json', import.meta.url), 'utf8'),
);

/**
 * Starts the longest files first, so that the two workers end together instead of one running a
 * long browser or replica file alone at the end. Vitest does this from its own cache, which a clean
 * clone (CI) does not have; then it ordered by file size. A file not in test/durations.json
 * (a new one) starts first, as vitest starts files it has not timed.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = DURATIONS[process.env.TRELLIS_TEST_DATABASE === 'postgres' ? 'postgres' : 'embedded'];
    const seconds = (file: TestSpecification) => known[relative(file.project.config.root, file.moduleId)] ?? Number.POSITIVE_INFINITY;
    const ordered = await super.sort(files);
    return ordered
      .map((file, index) => ({ file, index, seconds: seconds(file) }))
      .sort((a, b) => (a.seconds === b.seconds ? a.index - b.index : b.seconds - a.seconds))
      .map(({ file }) => file);
  }
}
