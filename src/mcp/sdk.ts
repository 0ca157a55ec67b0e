/** The official MCP SDK, loaded on the first MCP request rather than on every start (~0.1 s). */
export type Sdk = typeof import('@modelcontextprotocol/server');

let loading: Promise<Sdk> | undefined;

export function loadSdk(): Promise<Sdk> {
  loading ??= import('@modelcontextprotocol/server');
  return loading;
}
