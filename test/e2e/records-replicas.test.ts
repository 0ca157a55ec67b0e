import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, usingPostgres, type TestServer } from '../helpers/server.js';

describe.runIf(usingPostgres)('generated GraphQL on two replicas of one PostgreSQL database', () => {
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    first = await startTestServer();
    second = await startTestServer({ TRELLIS_DATABASE_URL: first.env.TRELLIS_DATABASE_URL! });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it("serves a table created on one replica in the other replica's schema", async () => {
    const onFirst = graphqlClient(first.url, await login(first.url));
    const onSecond = graphqlClient(second.url, await login(second.url));
    expect((await onSecond('{ listInvoice { total } }')).status).toBe(400);
    await gqlData(onFirst, 'mutation { createTable(name: "Invoice", fields: [{ name: "number", type: "text" }]) { _id } }');
    await gqlData(onFirst, 'mutation { createInvoice(data: { number: "INV-1" }) { _id } }');
    let answer = await onSecond('{ listInvoice { total items { number } } }');
    for (let i = 0; i < 50 && answer.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      answer = await onSecond('{ listInvoice { total items { number } } }');
    }
    expect(answer.body).toEqual({ data: { listInvoice: { total: 1, items: [{ number: 'INV-1' }] } } });
    expect(await second.server.services.graphql.sdl()).toContain('type Invoice {');
  });
});
