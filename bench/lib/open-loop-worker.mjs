// Open-loop load in its own process: requests leave at constant arrival times (rate per second),
// whether or not earlier ones were answered, and each latency is counted from the time its request
// was due, not from when it could be sent. A closed-loop generator (autocannon: each connection
// waits for its answer) sends less when the server slows down and so hides the slow answers; this
// one queues them, as callers who arrive on their own would. Options in the JSON file named by the
// argument: { url, method, headers, body | bodies, rate, duration (s), warmup (s) }: the requests due
// in the first `warmup` seconds open the connections and are not measured. Prints a JSON summary.
//
// Requests are written as prepared bytes on plain keep-alive sockets (one request at a time per
// socket, a new socket when none is idle) and answers are read by their Content-Length: on two
// cores the generator must cost the server as little CPU as it can (node:http's client costs
// several times more per request).
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { URL } from 'node:url';

const { url, method = 'POST', headers = {}, body, bodies, rate, duration, warmup = 0 } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const target = new URL(url);
const MAX_SOCKETS = 512;
const total = Math.round(rate * (warmup + duration));
const measuredFrom = Math.round(rate * warmup);
const intervalMs = 1000 / rate;
const requests = (bodies?.length ? bodies : [body ?? '']).map(prepare);
const latencies = [];
const statuses = {};
const idle = [];
const waiting = [];
let sockets = 0;
let errors = 0;
let settled = 0;

/** The bytes of one request with `payload` as its body. */
function prepare(payload) {
  const lines = [`${method} ${target.pathname}${target.search} HTTP/1.1`, `host: ${target.host}`, 'connection: keep-alive', `content-length: ${Buffer.byteLength(payload)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${payload}`);
}

/** A keep-alive connection that sends one request at a time and calls back when its answer is whole. */
function connect() {
  sockets += 1;
  const socket = net.connect({ host: target.hostname, port: Number(target.port), noDelay: true });
  let buffered = Buffer.alloc(0);
  let current;
  const finish = (status) => {
    const done = current;
    current = undefined;
    settled += 1;
    if (done.index >= measuredFrom) {
      latencies.push(performance.now() - done.dueAt);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
    release(connection);
  };
  socket.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    const headerEnd = buffered.indexOf('\r\n\r\n');
    if (headerEnd < 0 || !current) return;
    const head = buffered.subarray(0, headerEnd).toString('latin1');
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
    const bodyEnd = chunked ? buffered.indexOf('\r\n0\r\n\r\n', headerEnd) + 7 : headerEnd + 4 + length;
    if ((chunked && bodyEnd < 7) || buffered.length < bodyEnd) return;
    buffered = buffered.subarray(bodyEnd);
    finish(Number(head.slice(9, 12)));
  });
  let closed = false;
  const fail = () => {
    if (closed) return;
    closed = true;
    sockets -= 1;
    if (current) {
      current = undefined;
      settled += 1;
      errors += 1;
    }
    const position = idle.indexOf(connection);
    if (position >= 0) idle.splice(position, 1);
  };
  socket.on('error', fail);
  socket.on('close', fail);
  const connection = {
    send(request) {
      current = request;
      socket.write(requests[request.index % requests.length]);
    },
  };
  return connection;
}

function release(connection) {
  const next = waiting.shift();
  if (next) connection.send(next);
  else idle.push(connection);
}

function send(index, dueAt) {
  const request = { index, dueAt };
  const connection = idle.pop() ?? (sockets < MAX_SOCKETS ? connect() : undefined);
  if (connection) connection.send(request);
  else waiting.push(request);
}

const started = performance.now();
let next = 0;
await new Promise((resolve) => {
  const tick = () => {
    const now = performance.now();
    // Every request due by now leaves now, counted from its own due time.
    while (next < total && started + next * intervalMs <= now) {
      send(next, started + next * intervalMs);
      next += 1;
    }
    if (next < total) setTimeout(tick, Math.max(0, Math.min(1, started + next * intervalMs - now)));
    else resolve();
  };
  tick();
});
const sentInS = (performance.now() - started) / 1000 - warmup;
const deadline = performance.now() + 30_000;
while (settled < total && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));

latencies.sort((a, b) => a - b);
const at = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] : NaN);
const non2xx = Object.entries(statuses).reduce((sum, [status, count]) => (status.startsWith('2') ? sum : sum + count), 0);
const summary = {
  offeredPerSecond: rate,
  sentPerSecond: (total - measuredFrom) / sentInS,
  requests: total - measuredFrom,
  p50Ms: Number(at(50).toFixed(2)),
  p99Ms: Number(at(99).toFixed(2)),
  maxMs: Number((latencies.at(-1) ?? NaN).toFixed(2)),
  non2xx,
  errors,
  timeouts: total - settled,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
process.exit(0);
