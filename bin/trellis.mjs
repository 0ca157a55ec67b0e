#!/usr/bin/env -S MALLOC_TRIM_THRESHOLD_=131072 node
// glibc gives memory freed after the start back to the system (README, Memory; docs/decisions.md D28).
import { buildIfNeeded } from '../scripts/build.mjs';

// A person at a terminal hears why the first start after an install or a change waits.
await buildIfNeeded({ onBuild: () => process.stderr.isTTY && console.error('Building Trellis (after an install or a change of its sources)…') });
const { main } = await import('../dist/main.js');
await main(process.argv.slice(2));
