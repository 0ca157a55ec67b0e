import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { plain } from './shared.js';
import { READ, defineTool } from './types.js';

const output = z.object({ entity: z.object({ _id: z.string(), createdAt: z.string(), access: z.array(z.string()) }) });
const probe = { name: 'probe', scope: 'config:read', title: 'Probe', description: 'A tool of this test', input: z.object({}), output, annotations: READ } as const;

describe('defineTool', () => {
  it("types a tool's answer by its output schema: a record's dates as plain() writes them, every required key", async () => {
    const tool = defineTool({
      ...probe,
      async run() {
        return { data: { entity: plain({ _id: 'orders', createdAt: new Date(0), access: ['viewer'], extra: 1 }) } };
      },
    });
    const answer = await tool.run(undefined as never, undefined as never, {});
    expect(answer).toEqual({ data: { entity: { _id: 'orders', createdAt: '1970-01-01T00:00:00.000Z', access: ['viewer'], extra: 1 } } });
    expect(output.safeParse(answer.data).success).toBe(true);

    // What `npm run typecheck` refuses (each line below fails to compile without its directive):
    // a record that may lack what the schema requires (add_table_field answered a table without its
    // roles' rules, D46), and a date where the schema says a string.
    defineTool({
      ...probe,
      // @ts-expect-error -- access may be missing, the schema requires it
      async run() {
        const table: { _id: string; createdAt: string; access?: string[] } = { _id: 'orders', createdAt: '' };
        return { data: { entity: table } };
      },
    });
    defineTool({
      ...probe,
      // @ts-expect-error -- a Date, not its ISO string
      async run() {
        return { data: { entity: { _id: 'orders', createdAt: new Date(0), access: [] } } };
      },
    });
  });
});
