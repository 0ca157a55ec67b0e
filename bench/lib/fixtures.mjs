// Fixtures shared by the benchmarks of one run, each made once on first use.
import { startTrellis } from './trellis.mjs';

const made = new Map();

function once(key, make) {
  if (!made.has(key)) made.set(key, make());
  return made.get(key);
}

/** The Trellis server of this run (see startTrellis). */
export function trellis() {
  return once('trellis', () => startTrellis({ nodeArgs: profileArgs() }));
}

/** An MCP key of the run's owner with config:read and features:write. */
export function mcpKey() {
  return once('mcpKey', async () => (await trellis()).createMcpKey(['config:read', 'features:write']));
}

/** BENCH_TRELLIS_NODE_ARGS: extra node flags for the Trellis child, for example `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
function profileArgs() {
  const raw = process.env.BENCH_TRELLIS_NODE_ARGS;
  return raw ? raw.split(/\s+/).filter(Boolean) : [];
}
