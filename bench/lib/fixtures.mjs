// Fixtures shared by the benchmarks of one run, each made once on first use.
import { POSTGRES_ADMIN_URL, startTrellis } from './trellis.mjs';

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

/** The Trellis server on PostgreSQL: the run's server with BENCH_DATABASE_URL, else a second one on the local PostgreSQL. */
export function postgresTrellis() {
  if (process.env.BENCH_DATABASE_URL) return trellis();
  return once('postgresTrellis', () => startTrellis({ nodeArgs: profileArgs(), postgresAdminUrl: POSTGRES_ADMIN_URL }));
}

/** An MCP key that may create tables and hooks, on `server` (one of the fixtures above). */
export function builderKey(server) {
  return once(`${server.url} builder key`, async () => server.createMcpKey(['config:read', 'tables:write', 'hooks:write']));
}

/** An integration access token on `server`. */
export function accessToken(server) {
  return once(`${server.url} token`, async () => server.createAccessToken('bench'));
}

/** BENCH_TRELLIS_NODE_ARGS: extra node flags for the Trellis child, for example `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
function profileArgs() {
  const raw = process.env.BENCH_TRELLIS_NODE_ARGS;
  return raw ? raw.split(/\s+/).filter(Boolean) : [];
}
