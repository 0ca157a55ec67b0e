#!/usr/bin/env node
import { buildIfNeeded } from '../scripts/build.mjs';

await buildIfNeeded();
const { main } = await import('../dist/main.js');
await main(process.argv.slice(2));
