// Tool input schemas in the portable subset of JSON Schema that every MCP client converts intact:
// no `type` arrays, no `anyOf`/`oneOf` at a property, nothing nullable (an optional property is left
// out instead of sent as null). LangChain's adapter turns a property written `anyOf: [X, null]` into
// `{}`, and Gemini-style dialects refuse type arrays. The server's own validation (the tool's zod
// schema) still accepts everything it accepted: null for an optional value, the short forms of a union.
import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { resolveAliases } from './tools/types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNull = (branch: unknown) => isObject(branch) && branch.type === 'null';

/**
 * Which branch of a union a portable schema keeps: the richest one (an object, then an array),
 * the others being short forms of it that the server accepts anyway (e.g. an access level as a
 * string where `{ level }` is the full form).
 */
function richest(branches: Json[]): Json {
  return branches.find((branch) => branch.type === 'object') ?? branches.find((branch) => branch.type === 'array') ?? branches[0]!;
}

/** The portable form of a JSON Schema (a new object; the input is not changed). */
export function portableJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(portableJsonSchema);
  if (!isObject(schema)) return schema;
  let node: Json = { ...schema };
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = node[key];
    if (!Array.isArray(branches)) continue;
    const kept = branches.filter((branch) => !isNull(branch)) as Json[];
    if (kept.length === 0) continue;
    const { [key]: _dropped, ...rest } = node;
    // The union's own keywords (its description) go with the branch kept, which keeps its own where both have one.
    node = { ...rest, ...richest(kept) };
  }
  if (Array.isArray(node.type)) {
    const types = (node.type as unknown[]).filter((type) => type !== 'null');
    node.type = types.length === 1 ? types[0] : types.find((type) => type === 'object') ?? types[0];
  }
  if (Array.isArray(node.enum)) node.enum = (node.enum as unknown[]).filter((value) => value !== null);
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    // Values, not schemas: kept as they are (a property may be named 'required' or 'enum': its schema is an object).
    const literal = key === 'const' || key === 'default' || key === 'examples' || ((key === 'enum' || key === 'required') && Array.isArray(value));
    out[key] = literal ? value : portableJsonSchema(value);
  }
  return out;
}

/**
 * A tool's zod schema as the SDK takes it, advertising the portable JSON Schema in tools/list and
 * validating with the zod schema itself.
 */
export function withPortableJsonSchema<T extends StandardSchemaWithJSON>(schema: T, aliases?: Readonly<Record<string, string>>): StandardSchemaWithJSON {
  const standard = schema['~standard'];
  return {
    '~standard': {
      ...standard,
      // Other names of an argument (a tool's `aliases`) are renamed before validating, as runTool does.
      validate: (value) => {
        const named = resolveAliases(value, aliases);
        return 'error' in named ? { issues: [{ message: named.error }] } : standard.validate(named.args);
      },
      jsonSchema: {
        input: (options) => portableJsonSchema(standard.jsonSchema.input(options)) as Json,
        output: (options) => standard.jsonSchema.output(options),
      },
    },
  };
}
