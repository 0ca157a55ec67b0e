import { readFileSync } from 'node:fs';

/** The version in package.json, found beside dist/ (the bundle) or src/ (tests); 'unknown' otherwise. */
export function trellisVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // not there: the other layout
    }
  }
  return 'unknown';
}
