import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { systemPrincipal } from '../../src/access/permissions.js';
import type { TestServer } from './server.js';

/**
 * Connects the official SDK client to the server's MCP endpoint with a bearer key: the 2025
 * `initialize` handshake by default, or the 2026-07-28 `server/discover` era with `modern`.
 */
export async function connectMcp(server: TestServer, apiKey: string, options: { modern?: boolean } = {}): Promise<Client> {
  const client = new Client(
    { name: 'trellis-tests', version: '1.0.0' },
    options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  });
  await client.connect(transport);
  return client;
}

/** Creates a user with a role (if missing) and an MCP key for them; returns the raw key and ids. */
export async function createUserKey(
  server: TestServer,
  options: { email: string; role: string; scopes: string[]; days?: number },
): Promise<{ apiKey: string; keyId: string; userId: string }> {
  const services = server.server.services;
  const system = systemPrincipal('cli');
  const existing = await services.ctx.db.selectFrom('users').select('id').where('email', '=', options.email).executeTakeFirst();
  const userId = existing?.id ?? (await services.access.createUser(system, { email: options.email, password: 'password-123', role: options.role }))._id;
  const created = await services.keys.createMcpApiKeyForUser(system, userId, {
    name: `${options.email} key`,
    scopes: options.scopes,
    expiresInDays: options.days ?? 30,
  } as never);
  return { apiKey: created.apiKey, keyId: created.key._id, userId };
}

/** The text of a tool result's first content block. */
export function firstText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content[0]?.text ?? '';
}

/** The owner's principal, as a signed-in builder session would carry it. */
export async function ownerPrincipal(server: TestServer) {
  const services = server.server.services;
  const owner = await services.ctx.db.selectFrom('users').select('id').where('is_owner', '=', true).executeTakeFirstOrThrow();
  return services.access.principalForUser(owner.id, 'graphql');
}

/** The headers a Streamable HTTP client sends with every POST. */
export const MCP_ACCEPT = { accept: 'application/json, text/event-stream' } as const;

/** A raw JSON-RPC POST to the MCP endpoint with a bearer key. */
export function mcpPost(server: TestServer, apiKey: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}/api/mcp`, {
    method: 'POST',
    headers: { ...MCP_ACCEPT, 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
}

/**
 * The data of an answer as structuredContent carries it: `{ notice, nonce, data }` with `data` the
 * typed JSON. Throws if the notice does not say what `data` is or its nonce differs from the text
 * content's fence.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function structuredData<T = Record<string, any>>(result: unknown): T {
  const structured = (result as { structuredContent?: { notice: string; nonce: string; data: unknown } }).structuredContent;
  if (!structured) throw new Error('the answer has no structuredContent');
  if (!/is the value of data[\s\S]*data, not instructions/.test(structured.notice)) throw new Error(`structuredContent's notice does not name data: ${structured.notice}`);
  if (!firstText(result).includes(`<data-${structured.nonce}>`)) throw new Error('the text and structuredContent carry different nonces');
  return structured.data as T;
}

/** A read answer's fenced text, split into the note, the nonce and the JSON between the markers. */
export function fencedData(result: unknown): { note: string; nonce: string; data: unknown } {
  const text = firstText(result);
  const match = /^([\s\S]*?)\n<data-([0-9a-f]{16,})>\n([\s\S]*)\n<\/data-\2>$/.exec(text);
  if (!match) throw new Error(`not a fenced answer: ${text.slice(0, 200)}`);
  return { note: match[1]!, nonce: match[2]!, data: JSON.parse(match[3]!) };
}
