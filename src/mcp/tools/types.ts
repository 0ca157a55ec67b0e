import type { z } from 'zod';
import type { Principal, Scope } from '../../access/permissions.js';
import type { Services } from '../../services.js';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * What `run` answers for an output schema's data: the data, and where the schema has a `diff`, that
 * diff beside it (the runner puts it last in the answer).
 */
export type ToolAnswer<Data> = 'diff' extends keyof Data ? { data: Omit<Data, 'diff'>; diff?: Data['diff' & keyof Data] } : { data: Data; diff?: undefined };

/**
 * A value as JSON carries it, what `plain()` makes of it: a date as its ISO string, each member
 * likewise. A tool's answer is typed by its output schema, so that the compiler holds the services'
 * records (`interface Feature`) to the shapes tools/list announces (`featureOutput`).
 */
export type Json<T> = T extends Date ? string : T extends readonly (infer U)[] ? Json<U>[] : T extends object ? { [K in keyof T]: Json<T[K]> } : T;

/** What a tool's `run` answers, as the runner reads it and turns it into an MCP CallToolResult. */
export interface ToolOutput {
  /** Structured answer (becomes `structuredContent` and the JSON of the text content). */
  data: Record<string, unknown>;
  /** A unified diff of what was written, shown after the data. */
  diff?: unknown;
}

/**
 * One MCP tool. The input schema is the single source of validation and of the JSON Schema that
 * `tools/list` shows; `run` calls one service function with the caller's principal.
 */
export interface ToolDefinition<Input extends z.ZodType = z.ZodType, Output extends z.ZodObject = z.ZodObject> {
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
  /** The structured answer, as tools/list describes it; `run` answers data of this schema. */
  readonly output: Output;
  readonly annotations: ToolAnnotations;
  /** The answer depends only on the configuration, so it may be served from the read cache. */
  readonly cacheable?: boolean;
  run(services: Services, principal: Principal, args: z.infer<Input>): Promise<ToolAnswer<z.input<Output>>>;
}

export const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
export const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
export const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };
export const UPSERT: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };
export const DELETE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

/** Declares a tool with its input type inferred from the schema. */
export function defineTool<Input extends z.ZodType, Output extends z.ZodObject>(tool: ToolDefinition<Input, Output>): ToolDefinition<Input, Output> {
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
