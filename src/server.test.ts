import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { NO_ROUTE_SCHEMAS } from './server.js';

describe('the HTTP server takes no route schemas (requests are parsed with zod)', () => {
  it('refuses to get ready with a route that declares a body or a response schema, and serves routes without one', async () => {
    for (const schema of [{ body: { type: 'object' } }, { response: { 200: { type: 'object' } } }]) {
      const app = Fastify({ schemaController: NO_ROUTE_SCHEMAS });
      app.post('/with-schema', { schema }, async () => ({}));
      await expect(app.ready()).rejects.toThrow('A route declared a JSON schema: Trellis parses requests with zod');
    }
    const app = Fastify({ schemaController: NO_ROUTE_SCHEMAS });
    app.get('/plain', async () => ({ served: true }));
    expect((await app.inject('/plain')).json()).toEqual({ served: true });
    await app.close();
  });
});
