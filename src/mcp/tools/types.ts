import type { z } from 'zod';
import type { Principal, Scope } from '../../access/permissions.js';
import type { Services } from '../../services.js';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What a tool's `run` answers; the runner turns it into an MCP CallToolResult. */
export interface ToolOutput {
  /** Structured answer (becomes `structuredContent` and the JSON of the text content). */
  data: Record<string, unknown>;
  /** A unified diff of what was written, shown after the data. */
  diff?: string;
}

/**
 * One MCP tool. The input schema is the single source of validation and of the JSON Schema that
 * `tools/list` shows; `run` calls one service function with the caller's principal.
 */
export interface ToolDefinition<Input extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly scope: Scope;
  readonly title: string;
  readonly description: string;
  readonly input: Input;
  /**
   * Other names accepted for an argument (alias -> the argument's name): a tool that names a table
   * `_id` also takes `tableId`, as other tools call it, and the other way round.
   */
  readonly aliases?: Readonly<Record<string, string>>;
  /** Read tools describe their structured answer; their content is wrapped as untrusted data. */
  readonly output?: z.ZodType;
  readonly annotations: ToolAnnotations;
  /** The answer depends only on the configuration, so it may be served from the read cache. */
  readonly cacheable?: boolean;
  run(services: Services, principal: Principal, args: z.infer<Input>): Promise<ToolOutput>;
}

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
export const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
export const UPSERT: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
export const DELETE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** Declares a tool with its input type inferred from the schema. */
export function defineTool<Input extends z.ZodType>(tool: ToolDefinition<Input>): ToolDefinition<Input> {
  return tool;
}

/**
 * The arguments with each alias of `aliases` renamed to the argument it stands for. Both given with
 * different values is refused, naming the one meant; an alias beside an equal value is dropped.
 */
export function resolveAliases(args: unknown, aliases: Readonly<Record<string, string>> | undefined): { args: unknown } | { error: string } {
  if (!aliases || typeof args !== 'object' || args === null || Array.isArray(args)) return { args };
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const [alias, name] of Object.entries(aliases)) {
    if (!(alias in out)) continue;
    const value = out[alias];
    delete out[alias];
    if (name in out && out[name] !== value) return { error: `${name}: give the value once, as ${name} (${alias} is accepted as another name for it); both were given, with different values` };
    out[name] = value;
  }
  return { args: out };
}
