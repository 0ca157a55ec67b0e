// Baseline: a bare Fastify route answering a fixed JSON body (BENCH_BODY_FILE) to POST BENCH_PATH.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = readFileSync(process.env.BENCH_BODY_FILE, 'utf8');
const app = Fastify({ logger: false });
app.post(process.env.BENCH_PATH ?? '/', async (_request, reply) => reply.type('application/json').send(body));
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${app.server.address().port}`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
