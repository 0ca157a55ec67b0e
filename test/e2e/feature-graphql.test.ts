import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/access/permissions.js';
import { featureAuthoringGuide } from '../../src/features/authoring-guide.js';
import { ownerPrincipal } from '../helpers/mcp.js';
import { gqlData, graphqlClient, login, startTestServer, type TestServer } from '../helpers/server.js';

const page = (document: string, call = 'useQuery') => `import { ${call} } from '@trellis/runtime';

const DOC = \`${document}\`;

export default function Page() {
  const result = ${call}(DOC);
  return <p>{JSON.stringify(result)}</p>;
}
`;

describe('GraphQL documents in feature code are checked against the application schema', () => {
  let server: TestServer;
  let gql: ReturnType<typeof graphqlClient>;
  let owner: Principal;
  const validate = (code: string) => server.server.services.features.validateCode(owner, code);

  beforeAll(async () => {
    server = await startTestServer();
    gql = graphqlClient(server.url, await login(server.url));
    owner = await ownerPrincipal(server);
    await gqlData(gql, 'mutation($f: [AppFieldInput!]) { createTable(name: "Tasks", fields: $f) { _id } }', {
      f: [
        { name: 'title', type: 'text', required: true },
        { name: 'done', type: 'boolean' },
      ],
    });
  });

  afterAll(async () => {
    await server?.close();
  });

  it("validates the authoring guide's example against a schema that has its table, with no warning", async () => {
    const { example } = featureAuthoringGuide({ colors: {}, shell: {} });
    expect(await validate(example)).toEqual({ valid: true, errors: [], warnings: [] });
  });

  it.each([
    ['a list with its page shape', 'query { listTasks(limit: 5) { items { _id title done } total } }', 'useQuery'],
    ['a create with variables', 'mutation Add($t: String!) { createTasks(data: { title: $t }) { _id } }', 'useMutation'],
    ['an update through graphql()', 'mutation($id: ID!) { updateTasks(Id: $id, data: { done: true }) { _id done } }', 'graphql'],
  ])('accepts %s', async (_label, document, call) => {
    expect(await validate(page(document, call))).toMatchObject({ valid: true, errors: [] });
  });

  it.each([
    ['an unknown root field, with the operations that exist', 'query { tasks { _id } }', 3, 22, /^Cannot query field "tasks" on type "Query"\. The application's operations: listTasks, getTasks, createTasks, updateTasks, deleteTasks\.$/],
    ['an unknown field of a type, with a suggestion', 'query { listTasks { items { titel } } }', 3, 42, /Cannot query field "titel" on type "Tasks"\. Did you mean "title"\?/],
    ['a list without its page shape', 'query { listTasks { _id title } }', 3, 34, /Cannot query field "_id" on type "TasksPage".*Fields of TasksPage: items, total/],
    ['a wrong argument type', 'query { listTasks(limit: "five") { total } }', 3, 39, /Int cannot represent non-integer value: "five"/],
    ['an unknown argument', 'query { getTasks(id: "1") { _id } }', 3, 31, /Unknown argument "id" on field "Query\.getTasks"\. Did you mean "Id"\?/],
    ['a syntax error', 'query { listTasks { items { _id }', 3, 47, /GraphQL syntax error: Expected Name, found <EOF>/],
    ['a builder operation', 'query { mcpApiKeys { _id } }', 3, 22, /"mcpApiKeys" is a builder operation: features reach only the application's generated operations\. The application's operations: .*listTasks/],
    ['a builder operation with a quoted enum value', 'mutation { updateFeature(_id: "x", status: "published") { _id } }', 3, 25, /^"updateFeature" is a builder operation/],
  ])('refuses %s at its line and column', async (_label, document, line, column, message) => {
    const result = await validate(page(document));
    expect(result.valid).toBe(false);
    const error = result.errors.find((found) => message.test(found.message));
    expect(error, JSON.stringify(result.errors)).toBeDefined();
    expect(error).toMatchObject({ line, column });
    expect(error!.code).toMatch(/^GRAPHQL_/);
  });

  it('checks documents passed inline, through a namespace import and in a multi-line template', async () => {
    const code = `import * as runtime from '@trellis/runtime';
import { useMutation as save } from '@trellis/runtime';

export default function Page() {
  const inline = runtime.useQuery('query { listTask { total } }');
  const [add] = save(\`
    mutation {
      createTasks(data: { titl: "x" }) { _id }
    }\`);
  return <p>{String(inline)}{String(add)}</p>;
}
`;
    const result = await validate(code);
    expect(result.errors.map((error) => [error.line, error.message.slice(0, 40)])).toEqual([
      [5, 'Cannot query field "listTask" on type "Q'],
      [8, 'Field "titl" is not defined by type "Tas'],
    ]);
  });

  it('leaves a document built with ${} unchecked', async () => {
    const code = "import { useQuery } from '@trellis/runtime';\nconst T = 'Tasks';\nexport default function Page() { const r = useQuery(`query { list${T} { total } }`); return <p>{String(r)}</p>; }\n";
    expect((await validate(code)).valid).toBe(true);
  });

  it('refuses to save a feature whose document does not match the schema, and writes nothing', async () => {
    const result = await gql('mutation($c: String!) { createFeature(name: "Broken tasks", customCode: $c) { _id } }', { c: page('query { tasks { _id } }') });
    expect(result.body.errors[0].extensions.code).toBe('BAD_INPUT');
    expect(result.body.errors[0].message).toContain('Cannot query field "tasks" on type "Query"');
    const features = await gqlData(gql, 'query { features(query: "Broken tasks") { _id } }');
    expect(features.features).toEqual([]);
  });

  it('says the application has no table yet when it has none', async () => {
    const empty = await startTestServer();
    try {
      const result = await empty.server.services.features.validateCode(await ownerPrincipal(empty), page('query { listOrders { total } }'));
      expect(result.errors[0]!.message).toMatch(/The application has no tables yet: create one first \(create_table\)\./);
    } finally {
      await empty.close();
    }
  });
});
