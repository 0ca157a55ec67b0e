// Baseline: a plain node:http server doing one UPDATE through a pg Pool per request.
// POST / {"_id": "...", "total": n} -> UPDATE <BENCH_SQL_TABLE> ... RETURNING _id, total, as JSON.
import { createServer } from 'node:http';
import pg from 'pg';

const table = process.env.BENCH_SQL_TABLE;
if (!/^[a-z0-9_]+$/.test(table ?? '')) throw new Error(`BENCH_SQL_TABLE is not a plain table name: ${table}`);
const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE, max: 10 });
const statement = `update "${table}" set total = $1, _updated_at = now() where _id = $2 returning _id, total`;

const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', async () => {
    try {
      const { _id, total } = JSON.parse(body);
      const { rows } = await pool.query(statement, [total, _id]);
      if (rows.length !== 1) throw new Error(`no record ${_id}`);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ data: { update: rows[0] } }));
    } catch (error) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: error.message }));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.once('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
