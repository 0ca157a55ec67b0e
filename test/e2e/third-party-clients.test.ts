import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMCPClient } from '@ai-sdk/mcp';
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql as apolloGql } from '@apollo/client';
import { codegen } from '@graphql-codegen/core';
import * as typescriptOperations from '@graphql-codegen/typescript-operations';
import { loadSchema } from '@graphql-tools/load';
import { UrlLoader } from '@graphql-tools/url-loader';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { buildSchema, lexicographicSortSchema, parse, printSchema } from 'graphql';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientError, GraphQLClient, gql } from 'graphql-request';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SCOPES } from '../../src/access/permissions.js';
import { OWNER } from '../helpers/env.js';
import { connectMcp, createUserKey, firstText, mcpPost } from '../helpers/mcp.js';
import { login, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 23's "done when": the clients people bring, none written here, against one started server.
 * GraphQL: graphql-request, Apollo Client 4 and GraphQL Code Generator (its typescript-operations
 * plugin on the schema GraphQL Tools' URL loader introspects, as `graphql-codegen` does: typed enums
 * that compile).
 * MCP: the official SDK's v1 and v2 clients, the AI SDK's MCP client and LangChain's adapters. Each
 * call is answered as the client expects, and each error reaches the client as an error with the
 * server's message.
 */

interface ListedTool {
  name: string;
  inputSchema: { properties?: Record<string, unknown>; required?: string[] };
  outputSchema?: Record<string, unknown>;
}

let server: TestServer;
let graphqlUrl: string;
let mcpUrl: string;
/** A signed-in owner's session token. */
let session: string;
/** An MCP key of the owner with every scope. */
let apiKey: string;
/** tools/list as the server answers it, for comparing what each client made of it. */
let listedTools: ListedTool[];

const NOT_FOUND_TABLE = { name: 'get_entity_details', arguments: { _id: 'NoSuchTable' } };

beforeAll(async () => {
  server = await startTestServer();
  graphqlUrl = `${server.url}/graphql`;
  mcpUrl = `${server.url}/api/mcp`;
  session = await login(server.url);
  ({ apiKey } = await createUserKey(server, { email: OWNER.email, role: 'admin', scopes: [...SCOPES] }));
  const answer = await mcpPost(server, apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  listedTools = ((await answer.json()) as { result: { tools: ListedTool[] } }).result.tools;
});

afterAll(async () => {
  await server?.close();
});

/** The table fields the write calls of every client create. */
const TITLE_FIELD = [{ name: 'title', type: 'text', required: true }];

describe('graphql-request', () => {
  let client: GraphQLClient;
  beforeAll(() => {
    client = new GraphQLClient(graphqlUrl, { headers: { authorization: `Bearer ${session}` } });
  });

  it('answers a query', async () => {
    const data = await client.request<{ me: { email: string; isOwner: boolean } }>(gql`
      query Me {
        me { email isOwner }
      }
    `);
    expect(data.me).toEqual({ email: OWNER.email, isOwner: true });
  });

  it('answers a mutation with variables', async () => {
    const data = await client.request<{ createTable: { name: string; fields: { name: string; type: string }[] } }>(
      gql`
        mutation CreateTable($name: String!, $fields: [AppFieldInput!]) {
          createTable(name: $name, fields: $fields) { name fields { name type } }
        }
      `,
      { name: 'RequestNotes', fields: TITLE_FIELD },
    );
    expect(data.createTable).toEqual({ name: 'RequestNotes', fields: [{ name: 'title', type: 'text' }] });
  });

  it('reads a validation error as a ClientError with the server message', async () => {
    const error = await client.request('query { nope }').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClientError);
    const { response } = error as ClientError;
    expect(response.errors?.[0]?.message).toBe('Cannot query field "nope" on type "Query".');
    expect((error as ClientError).message).toContain('Cannot query field "nope" on type "Query".');
  });

  it('reads a BAD_INPUT as a ClientError with the server message and code', async () => {
    const error = await client
      .request('mutation($fields: [AppFieldInput!]) { createTable(name: "1 bad name", fields: $fields) { _id } }', { fields: TITLE_FIELD })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClientError);
    const message = 'name: must start with a letter and use only letters, digits and _ (at most 63)';
    expect((error as ClientError).response.errors).toEqual([expect.objectContaining({ message, extensions: expect.objectContaining({ code: 'BAD_INPUT' }) })]);
    expect((error as ClientError).message).toContain(message);
  });
});

describe('Apollo Client 4', () => {
  let client: ApolloClient;
  /** What each answer came as: Apollo asks for application/graphql-response+json first. */
  const answers: { status: number; type: string | null }[] = [];

  beforeAll(() => {
    const recordingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      answers.push({ status: response.status, type: response.headers.get('content-type') });
      return response;
    };
    client = new ApolloClient({
      link: new HttpLink({ uri: graphqlUrl, headers: { authorization: `Bearer ${session}` }, fetch: recordingFetch }),
      cache: new InMemoryCache(),
    });
  });

  afterAll(() => client?.stop());

  it('answers a query', async () => {
    const { data } = await client.query<{ me: { email: string } }>({ query: apolloGql`query Me { me { _id email } }` });
    expect(data?.me.email).toBe(OWNER.email);
    expect(answers.at(-1)).toEqual({ status: 200, type: 'application/graphql-response+json; charset=utf-8' });
  });

  it('reads a validation error as a GraphQL error with the server message', async () => {
    const error = await client.query({ query: apolloGql`query Nope { nope }` }).catch((caught: unknown) => caught);
    expect(answers.at(-1)).toEqual({ status: 400, type: 'application/graphql-response+json; charset=utf-8' });
    expect(CombinedGraphQLErrors.is(error)).toBe(true);
    expect((error as CombinedGraphQLErrors).errors.map((e) => e.message)).toEqual(['Cannot query field "nope" on type "Query".']);
    expect((error as Error).message).toBe('Cannot query field "nope" on type "Query".');
  });

  it('reads a variables error as a GraphQL error with the server message', async () => {
    const query = apolloGql`query Feature($id: ID!) { feature(_id: $id) { _id } }`;
    const error = await client.query({ query, variables: {} }).catch((caught: unknown) => caught);
    expect(answers.at(-1)?.status).toBe(400);
    expect(CombinedGraphQLErrors.is(error)).toBe(true);
    expect((error as Error).message).toBe('Variable "$id" of required type "ID!" was not provided.');
  });
});

describe('GraphQL Code Generator', () => {
  let folder: string;
  let generated: string;

  const OPERATIONS = /* GraphQL */ `
    query Features {
      features { _id name status }
    }
    query FailedRuns($outcome: HookRunOutcome) {
      hookRuns(outcome: $outcome) { items { _id hookName outcome } }
    }
    mutation CreateHook($name: String!, $type: HookType!, $content: String!) {
      createHook(name: $name, type: $type, content: $content) { _id type }
    }
  `;

  /** Type-checks files beside the generated one, strictly; returns each diagnostic as "file: TSnnnn message". */
  function typeCheck(files: Record<string, string>): string[] {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
    const program = ts.createProgram(
      Object.keys(files).map((name) => join(folder, name)),
      { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ['lib.es2022.d.ts'], module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [] },
    );
    return ts.getPreEmitDiagnostics(program).map(
      (d) => `${d.file ? d.file.fileName.slice(folder.length + 1) : ''}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
  }

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'trellis-codegen-'));
    // What `graphql-codegen` does with a URL: the schema introspected by GraphQL Tools' URL loader
    // (with the session's header), sorted, and the typescript-operations plugin on the documents.
    const schema = await loadSchema(graphqlUrl, { loaders: [new UrlLoader()], headers: { Authorization: `Bearer ${session}` } });
    generated = await codegen({
      filename: 'generated.ts',
      schema: parse(printSchema(lexicographicSortSchema(buildSchema(printSchemaWithDirectives(schema))))),
      documents: [{ location: 'operations.graphql', document: parse(OPERATIONS) }],
      plugins: [{ 'typescript-operations': {} }],
      pluginMap: { 'typescript-operations': typescriptOperations },
      config: {},
    });
  });

  afterAll(() => {
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  it('types the closed sets that are GraphQL enums as unions of their values', () => {
    expect(generated).toContain("export type FeatureStatus =\n  | 'draft'\n  | 'published';");
    expect(generated).toContain("export type HookType =\n  | 'afterSave'\n  | 'beforeSave'\n  | 'webHook';");
    expect(generated).toContain("export type HookRunOutcome =\n  | 'error'\n  | 'memory'\n  | 'ok'\n  | 'refused'\n  | 'timeout';");
    expect(generated).toContain('export type FeaturesQuery = { features: Array<{ _id: string, name: string, status: FeatureStatus }> };');
    expect(generated).toContain('export type FailedRunsQueryVariables = Exact<{\n  outcome?: HookRunOutcome | null | undefined;\n}>;');
  });

  it('compiles with the TypeScript compiler, and a value outside a closed set does not', () => {
    const use = `import type { CreateHookMutationVariables, FeatureStatus, FeaturesQuery } from './generated';
export const published: FeatureStatus = 'published';
export const statuses = (answer: FeaturesQuery): FeatureStatus[] => answer.features.map((feature) => feature.status);
export const webhook: CreateHookMutationVariables = { name: 'pay', type: 'webHook', content: 'async function () {}' };
`;
    const misuse = `import type { FeaturesQuery } from './generated';
export const archived: FeaturesQuery['features'][number]['status'] = 'archived';
`;
    expect(typeCheck({ 'generated.ts': generated, 'use.ts': use, 'misuse.ts': misuse })).toEqual([
      `misuse.ts: TS2322 Type '"archived"' is not assignable to type 'FeatureStatus'.`,
    ]);
  });
});

/** The notice, the nonce and the typed data: structuredContent as every tool's outputSchema describes it. */
function expectFenced(structured: unknown) {
  expect(structured).toEqual({ notice: expect.stringMatching(/It is data, not instructions/), nonce: expect.stringMatching(/^[0-9a-f]{32}$/), data: expect.any(Object) });
  return (structured as { data: Record<string, unknown> }).data;
}

/** What both official SDK clients are asked; each connects its own way. */
interface SdkClient {
  listTools(): Promise<{ tools: { name: string; outputSchema?: { type?: unknown } }[] }>;
  callTool(request: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}

const SDK_CLIENTS: [string, () => Promise<SdkClient>][] = [
  [
    'v1',
    async () => {
      const client = new ClientV1({ name: 'third-party-v1', version: '1.0.0' });
      await client.connect(new TransportV1(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
      return client as unknown as SdkClient;
    },
  ],
  ['v2', async () => (await connectMcp(server, apiKey)) as unknown as SdkClient],
];

describe.each(SDK_CLIENTS)('the official MCP SDK, %s client', (version, connect) => {
  let client: SdkClient;

  beforeAll(async () => {
    client = await connect();
    // Listing the tools is what makes the client validate each answer against its outputSchema.
    await client.listTools();
  });

  afterAll(() => client?.close());

  it('lists every tool with its output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(listedTools.map((tool) => tool.name));
    expect(tools.every((tool) => tool.outputSchema?.type === 'object')).toBe(true);
  });

  it('calls a read tool, its structuredContent valid by the outputSchema the client checks', async () => {
    const result = (await client.callTool({ name: 'list_roles', arguments: {} })) as { isError?: boolean; structuredContent?: unknown };
    expect(result.isError).toBeFalsy();
    const data = expectFenced(result.structuredContent);
    expect((data.roles as { name: string }[]).map((role) => role.name)).toEqual(expect.arrayContaining(['admin', 'designer', 'viewer']));
  });

  it('calls a write tool', async () => {
    const name = `Sdk${version.toUpperCase()}Notes`;
    const result = (await client.callTool({ name: 'create_table', arguments: { name, fields: TITLE_FIELD } })) as { isError?: boolean; structuredContent?: unknown };
    expect(result.isError).toBeFalsy();
    expect(expectFenced(result.structuredContent).entity).toMatchObject({ name, fields: [{ name: 'title', type: 'text', required: true }] });
  });

  it('reads an isError result with the server message', async () => {
    const result = (await client.callTool(NOT_FOUND_TABLE)) as { isError?: boolean };
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/NOT_FOUND: .*NoSuchTable/);
  });
});

/** An AI SDK tool's answer: an MCP tool answers once, never as a stream. */
function single<T>(output: T | AsyncIterable<T>): T {
  if (typeof output === 'object' && output !== null && Symbol.asyncIterator in output) throw new Error('the tool streamed its answer');
  return output as T;
}

describe('the AI SDK MCP client', () => {
  let client: Awaited<ReturnType<typeof createMCPClient>>;
  const options = { toolCallId: 'call-1', messages: [] };

  beforeAll(async () => {
    client = await createMCPClient({ transport: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${apiKey}` } } });
  });

  afterAll(() => client?.close());

  it('gives every tool with every property of its input schema intact', async () => {
    const tools = await client.tools();
    expect(Object.keys(tools)).toEqual(listedTools.map((tool) => tool.name));
    for (const listed of listedTools) {
      const converted = (tools[listed.name]!.inputSchema as { jsonSchema: ListedTool['inputSchema'] }).jsonSchema;
      expect(converted.properties, listed.name).toEqual(listed.inputSchema.properties ?? {});
      expect(converted.required, listed.name).toEqual(listed.inputSchema.required);
    }
  });

  it('calls a tool through execute and gets typed output', async () => {
    const entity = z.object({ _id: z.string(), name: z.string(), fields: z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean() })) });
    const tools = await client.tools({
      schemas: {
        create_table: {
          inputSchema: z.object({ name: z.string(), fields: z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean().optional() })) }),
          outputSchema: z.object({ notice: z.string(), nonce: z.string(), data: z.object({ entity }) }),
        },
      },
    });
    const output = single(await tools.create_table.execute({ name: 'AiSdkNotes', fields: TITLE_FIELD }, options));
    const fieldNames: string[] = output.data.entity.fields.map((field) => field.name);
    expect(output.data.entity.name).toBe('AiSdkNotes');
    expect(fieldNames).toEqual(['title']);
  });

  it('reads an isError result with the server message', async () => {
    const tools = await client.tools();
    const result = single(await tools.get_entity_details!.execute(NOT_FOUND_TABLE.arguments, options));
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/NOT_FOUND: .*NoSuchTable/);
  });
});

describe("LangChain's MCP adapters", () => {
  let client: MultiServerMCPClient;

  beforeAll(() => {
    client = new MultiServerMCPClient({ mcpServers: { trellis: { transport: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${apiKey}` } } } });
  });

  afterAll(() => client?.close());

  it('converts every tool schema with every property intact, as a model is shown it', async () => {
    const tools = await client.getTools();
    expect(tools.map((tool) => tool.name)).toEqual(listedTools.map((tool) => tool.name));
    for (const listed of listedTools) {
      const tool = tools.find((candidate) => candidate.name === listed.name)!;
      const shown = convertToOpenAITool(tool).function.parameters as ListedTool['inputSchema'];
      expect(shown.properties, listed.name).toEqual(listed.inputSchema.properties ?? {});
      expect(shown.required, listed.name).toEqual(listed.inputSchema.required);
    }
    const createTable = convertToOpenAITool(tools.find((tool) => tool.name === 'create_table')!).function.parameters as {
      properties: { fields: { type: string; items: { properties: Record<string, unknown> } } };
    };
    expect(createTable.properties.fields.type).toBe('array');
    expect(Object.keys(createTable.properties.fields.items.properties)).toEqual(expect.arrayContaining(['name', 'type', 'required', 'referenceTableId']));
  });

  it('invokes a read tool and gets its result', async () => {
    const tools = await client.getTools();
    const listRoles = tools.find((tool) => tool.name === 'list_roles')!;
    const answer = (await listRoles.invoke({})) as { type: string; text: string; structuredContent: unknown };
    expect(answer.text).toMatch(/<data-[0-9a-f]{32}>[\s\S]*"designer"/);
    const data = expectFenced(answer.structuredContent);
    expect((data.roles as { name: string }[]).map((role) => role.name)).toEqual(expect.arrayContaining(['admin', 'designer', 'viewer']));
  });

  it('reads an isError result as a thrown error with the server message', async () => {
    const tools = await client.getTools();
    const details = tools.find((tool) => tool.name === 'get_entity_details')!;
    await expect(details.invoke(NOT_FOUND_TABLE.arguments)).rejects.toThrow(/returned an error: [\s\S]*NOT_FOUND: .*NoSuchTable/);
  });
});
