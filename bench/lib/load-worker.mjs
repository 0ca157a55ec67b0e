// Runs one autocannon load in its own process and prints a JSON summary on stdout.
import autocannon from 'autocannon';

const options = JSON.parse(process.argv[2]);
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
