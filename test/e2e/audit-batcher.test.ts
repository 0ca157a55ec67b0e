import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpAuditBatcher } from '../../src/audit/batcher.js';
import type { Db } from '../../src/platform/db/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const entry = (tool: string) => ({
  keyId: 'key-1',
  userId: null,
  tool,
  arguments: { query: tool },
  outcome: 'ok' as const,
  error: null,
  durationMs: 1,
  codeSha256: null,
});

describe('McpAuditBatcher', () => {
  it('stores every entry of a burst, in fewer inserts than entries, before any caller resumes', async () => {
    const db = server.server.services.ctx.db;
    let inserts = 0;
    const counting = new Proxy(db, {
      get: (target, property) => {
        if (property === 'insertInto') inserts += 1;
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Db;
    const batcher = new McpAuditBatcher(counting);
    const tools = Array.from({ length: 50 }, (_, i) => `burst_${i}`);
    await Promise.all(tools.map((tool) => batcher.write(entry(tool))));
    const rows = await db.selectFrom('mcp_audit_logs').select('tool').where('tool', 'like', 'burst_%').execute();
    expect(rows.map((r) => r.tool).sort()).toEqual([...tools].sort());
    expect(inserts).toBeLessThan(5);
  });

  it('rejects the callers of a batch whose insert fails', async () => {
    const failing = { insertInto: () => ({ values: () => ({ execute: async () => Promise.reject(new Error('disk full')) }) }) } as unknown as Db;
    const batcher = new McpAuditBatcher(failing);
    await expect(batcher.write(entry('lost'))).rejects.toThrow('disk full');
  });
});
