import { createRequire } from 'node:module';
import type * as Babel from '@babel/parser';

let loaded: typeof Babel | undefined;

/**
 * @babel/parser, loaded on first use: only writing or checking hook and feature code needs it, and
 * its 600 KB of JavaScript cost every start about 60 ms (it is a CommonJS package, so it loads
 * synchronously; scripts/build.mjs leaves it out of the bundle).
 */
export function babelParser(): typeof Babel {
  loaded ??= createRequire(import.meta.url)('@babel/parser') as typeof Babel;
  return loaded;
}
