#!/usr/bin/env -S MALLOC_TRIM_THRESHOLD_=131072 node
// glibc gives memory freed after the start back to the system (README, Memory; docs/decisions.md D28).
import { buildIfNeeded } from '../scripts/build.mjs';

await buildIfNeeded();
const { main } = await import('../dist/main.js');
await main(process.argv.slice(2));
