import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemPrincipal, type Principal } from '../../src/access/permissions.js';
import { integrationPrincipal } from '../../src/integrations/service.js';
import { toTrellisError } from '../../src/platform/errors.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A property test of data access by role (D32): random rules, records and callers; what each
 * caller lists, gets, updates and deletes through the record layer equals a reference model of
 * the rules written in plain TypeScript.
 */

type Level = 'NONE' | 'OWN' | 'FILTER' | 'ALL';
type Action = 'read' | 'create' | 'update' | 'delete';
type Region = 'EU' | 'US';

interface Row {
  by: string | null;
  region: Region;
  amount: number;
}

/** The filters a FILTER rule may hold here, each with its meaning in plain TypeScript. */
const FILTERS: { filter: Record<string, unknown>; holds: (row: Row, user: string | null) => boolean }[] = [
  { filter: { region: { eq: 'EU' } }, holds: (row) => row.region === 'EU' },
  { filter: { _createdBy: { eq: '$user._id' } }, holds: (row, user) => user !== null && row.by === user },
  { filter: { amount: { gte: 5 } }, holds: (row) => row.amount >= 5 },
  { filter: { _or: [{ region: { eq: 'US' } }, { amount: { lt: 3 } }] }, holds: (row) => row.region === 'US' || row.amount < 3 },
];

interface Rule {
  level: Level;
  filterIndex: number;
}

interface Caller {
  name: string;
  principal: () => Principal;
  /** Whom OWN and `$user` mean; null: nobody. */
  user: () => string | null;
  /** Whether the clerk role's rules bound this caller (an admin and an unbound integration reach everything). */
  bound: boolean;
}

let server: TestServer;
const ids = { clerkRole: '', clerk1: '', clerk2: '', owner: '' };
const principals: Record<string, Principal> = {};
const system = systemPrincipal();

function reaches(rule: Rule, row: Row, user: string | null): boolean {
  if (rule.level === 'ALL') return true;
  if (rule.level === 'NONE') return false;
  if (rule.level === 'OWN') return user !== null && row.by === user;
  const { filter, holds } = FILTERS[rule.filterIndex]!;
  // A rule naming the user matches nothing for a caller with none.
  if (user === null && JSON.stringify(filter).includes('$user')) return false;
  return holds(row, user);
}

const CALLERS: Caller[] = [
  { name: 'clerk1 session', principal: () => principals.clerk1!, user: () => ids.clerk1, bound: true },
  { name: 'clerk2 session', principal: () => principals.clerk2!, user: () => ids.clerk2, bound: true },
  { name: 'owner session', principal: () => principals.owner!, user: () => ids.owner, bound: false },
  { name: 'integration with the clerk role', principal: () => principals.integrationRole!, user: () => null, bound: true },
  { name: 'integration for clerk1', principal: () => principals.integrationUser!, user: () => ids.clerk1, bound: true },
  { name: 'integration with the clerk role for the owner', principal: () => principals.integrationBoth!, user: () => ids.owner, bound: true },
];

const ruleArb = fc.record({ level: fc.constantFrom<Level>('NONE', 'OWN', 'FILTER', 'ALL'), filterIndex: fc.nat(FILTERS.length - 1) });
const rowArb = fc.record({ by: fc.constantFrom<'clerk1' | 'clerk2' | 'owner'>('clerk1', 'clerk2', 'owner'), region: fc.constantFrom<Region>('EU', 'US'), amount: fc.integer({ min: 0, max: 9 }) });

function toStored(rule: Rule) {
  return rule.level === 'FILTER' ? { level: rule.level, filter: FILTERS[rule.filterIndex]!.filter } : { level: rule.level };
}

async function outcome(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return 'ok';
  } catch (error) {
    return toTrellisError(error).code;
  }
}

beforeAll(async () => {
  server = await startTestServer();
  const services = server.server.services;
  ids.clerkRole = (await services.access.createRole(system, { name: 'clerk' } as never))._id;
  for (const who of ['clerk1', 'clerk2'] as const) {
    ids[who] = (await services.access.createUser(system, { email: `${who}@example.com`, password: 'clerk-password', role: 'clerk' }))._id;
    principals[who] = await services.access.principalForUser(ids[who], 'graphql');
  }
  const owner = await services.ctx.db.selectFrom('users').select(['id', 'email']).where('is_owner', '=', true).executeTakeFirstOrThrow();
  ids.owner = owner.id;
  principals.owner = await services.access.principalForUser(owner.id, 'graphql');
  const clerkRole = { id: ids.clerkRole, name: 'clerk' };
  principals.integrationRole = integrationPrincipal({ clientId: 'trc_model', name: 'model', dataRole: clerkRole });
  principals.integrationUser = integrationPrincipal({ clientId: 'trc_model', name: 'model', dataRole: null }, { id: ids.clerk1, email: 'clerk1@example.com', role: 'clerk', dataRole: clerkRole });
  principals.integrationBoth = integrationPrincipal({ clientId: 'trc_model', name: 'model', dataRole: clerkRole }, { id: owner.id, email: owner.email, role: 'admin', dataRole: null });
  await services.tables.createTable(system, {
    name: 'Entry',
    fields: [
      { name: 'region', type: 'text' },
      { name: 'amount', type: 'number' },
    ],
  });
});

afterAll(async () => {
  await server?.close();
});

it('lists, gets, updates and deletes exactly what a reference model of the rules allows, for every caller', async () => {
  const { records, tables, ctx } = server.server.services;
  const runs = Number(process.env.FUZZ_RUNS ?? 40);
  await fc.assert(
    fc.asyncProperty(
      fc.record({ read: ruleArb, create: ruleArb, update: ruleArb, delete: ruleArb }),
      fc.array(rowArb, { maxLength: 6 }),
      fc.nat(CALLERS.length - 1),
      fc.record({ target: fc.nat(5), region: fc.constantFrom<Region>('EU', 'US'), amount: fc.integer({ min: 0, max: 9 }) }),
      async (rules, rows, callerIndex, change) => {
        const caller = CALLERS[callerIndex]!;
        await sql`delete from ${sql.table((await ctx.db.selectFrom('app_tables').select('sql_name').where('name', '=', 'Entry').executeTakeFirstOrThrow()).sql_name)}`.execute(ctx.db);
        await tables.setTableAccess(system, {
          tableId: 'Entry',
          roleId: 'clerk',
          access: { read: toStored(rules.read), create: toStored(rules.create), update: toStored(rules.update), delete: toStored(rules.delete) } as never,
        });
        const stored: (Row & { id: string })[] = [];
        for (const row of rows) {
          const author = row.by === 'owner' ? principals.owner! : principals[row.by]!;
          const created = await records.create({ ...author, dataRoles: [] }, 'Entry', { region: row.region, amount: row.amount });
          stored.push({ id: created._id, by: ids[row.by], region: row.region, amount: row.amount });
        }
        const user = caller.user();
        const all: Rule = { level: 'ALL', filterIndex: 0 };
        const rule = (action: Action): Rule => (caller.bound ? rules[action] : all);
        const principal = caller.principal();

        // read
        const expectedRead = stored.filter((row) => reaches(rule('read'), row, user)).map((row) => row.id).sort();
        if (rule('read').level === 'NONE') {
          expect(await outcome(() => records.list(principal, 'Entry'))).toBe('FORBIDDEN');
        } else {
          const page = await records.list(principal, 'Entry', { limit: 500 });
          expect(page.items.map((item) => item._id).sort()).toEqual(expectedRead);
          expect(page.total).toBe(expectedRead.length);
          for (const row of stored) expect((await records.get(principal, 'Entry', row.id))?._id ?? null).toBe(expectedRead.includes(row.id) ? row.id : null);
        }

        // update: the record must be readable, inside the update rule, and still inside it as written
        const target = stored[change.target % Math.max(stored.length, 1)];
        if (target) {
          const expectedUpdate =
            rule('read').level === 'NONE' || rule('update').level === 'NONE'
              ? 'FORBIDDEN'
              : !reaches(rule('read'), target, user)
                ? 'NOT_FOUND'
                : !reaches(rule('update'), target, user) || !reaches(rule('update'), { ...target, region: change.region, amount: change.amount }, user)
                  ? 'FORBIDDEN'
                  : 'ok';
          const updated = await outcome(() => records.update(principal, 'Entry', target.id, { region: change.region, amount: change.amount }));
          expect(updated, `update ${JSON.stringify({ rules, target, change, caller: caller.name })}`).toBe(expectedUpdate);
          if (updated === 'ok') Object.assign(target, { region: change.region, amount: change.amount });

          const expectedDelete =
            rule('read').level === 'NONE' || rule('delete').level === 'NONE'
              ? 'FORBIDDEN'
              : !reaches(rule('read'), target, user)
                ? 'NOT_FOUND'
                : reaches(rule('delete'), target, user)
                  ? 'ok'
                  : 'FORBIDDEN';
          expect(await outcome(() => records.delete(principal, 'Entry', target.id)), `delete ${caller.name}`).toBe(expectedDelete);
        }

        // create: inside the create rule as written, with the caller as author
        const expectedCreate = reaches(rule('create'), { by: user, region: change.region, amount: change.amount }, user) ? 'ok' : 'FORBIDDEN';
        expect(await outcome(() => records.create(principal, 'Entry', { region: change.region, amount: change.amount })), `create ${caller.name}`).toBe(expectedCreate);
      },
    ),
    { numRuns: runs, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
  );
});
