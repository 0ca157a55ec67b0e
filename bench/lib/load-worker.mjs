// Runs one autocannon load in its own process and prints a JSON summary on stdout. The options are
// in the JSON file named by the argument; with `bodies` (an array of strings) the requests take
// those bodies in turn, across all connections.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const { bodies, ...options } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
if (bodies?.length) {
  let next = 0;
  options.requests = [{ setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }) }];
}
const result = await autocannon({ ...options, workers: undefined });
const summary = {
  requests: result.requests.total,
  perSecond: result.requests.average,
  durationS: result.duration,
  p99Ms: result.latency.p99,
  p50Ms: result.latency.p50,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  statusCodes: result.statusCodeStats,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
