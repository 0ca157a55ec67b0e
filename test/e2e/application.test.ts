import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let ownerGql: ReturnType<typeof graphqlClient>;

beforeAll(async () => {
  server = await startTestServer();
  ownerGql = graphqlClient(server.url, await login(server.url));
});
afterAll(async () => server?.close());

describe('application settings', () => {
  it('starts with the configured name, no CORS origins and a default theme', async () => {
    const { application } = await gqlData(ownerGql, '{ application { _id name corsOrigins theme { colors shell } } }');
    expect(application).toMatchObject({ name: 'Test app', corsOrigins: [] });
    expect(application.theme.colors.primary).toMatch(/^#/);
    expect(application.theme.shell['--shell-bg']).toBeTruthy();
  });

  it('changes CORS origins and merges theme colours, and audits the change', async () => {
    const { updateApplication } = await gqlData(
      ownerGql,
      'mutation { updateApplication(corsOrigins: ["https://erp.example.com"], themeColors: { primary: "#ff0000" }) { corsOrigins theme { colors } } }',
    );
    expect(updateApplication.corsOrigins).toEqual(['https://erp.example.com']);
    expect(updateApplication.theme.colors).toMatchObject({ primary: '#ff0000', background: '#ffffff' });
    const audit = await server.server.services.ctx.db.selectFrom('audit_events').selectAll().where('action', '=', 'app.update').execute();
    expect(audit).toHaveLength(1);
  });

  it.each([
    ['an origin with a path', 'corsOrigins: ["https://x.example.com/path"]', 'corsOrigins.0'],
    ['a CSS value that escapes', 'themeColors: { primary: "red; } body { x" }', 'themeColors.primary'],
    ['a shell variable without --', 'shellVariables: { bg: "red" }', 'shellVariables'],
  ])('rejects %s naming the field and keeps the settings', async (_case, args, field) => {
    const before = await gqlData(ownerGql, '{ application { corsOrigins theme { colors shell } } }');
    const result = await ownerGql(`mutation { updateApplication(${args}) { name } }`);
    expect(result.body.errors[0].extensions.code).toBe('BAD_INPUT');
    expect(result.body.errors[0].message).toContain(field);
    expect(await gqlData(ownerGql, '{ application { corsOrigins theme { colors shell } } }')).toEqual(before);
  });

  it('lets only admins change settings', async () => {
    await gqlData(ownerGql, 'mutation { createUser(email: "des@example.com", password: "designer-pass", role: "designer") { _id } }');
    const designer = graphqlClient(server.url, await login(server.url, 'des@example.com', 'designer-pass'));
    const result = await designer('mutation { updateApplication(name: "Mine") { name } }');
    expect(result.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });
});
