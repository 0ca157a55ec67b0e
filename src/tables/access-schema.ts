import { z } from 'zod';
import { idOutput, idSchema } from '../platform/validation.js';

/**
 * The shapes of data-access rules (D32), shared by builder GraphQL, MCP's create_table and
 * update_table, and the record layer (access-rules.ts).
 */
export const ACCESS_LEVELS = ['NONE', 'OWN', 'FILTER', 'ALL'] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

export const ACCESS_ACTIONS = ['read', 'create', 'update', 'delete'] as const;
export type AccessAction = (typeof ACCESS_ACTIONS)[number];

export interface AccessRule {
  level: AccessLevel;
  /** FILTER only: conditions in the generated `filter` language; `$user._id`, `$user.email` and `$user.role` stand for the caller. */
  filter?: Record<string, unknown>;
}

/** One role's rules on one table, as stored. */
export interface TableAccessRules {
  read: AccessRule;
  create: AccessRule;
  update: AccessRule;
  delete: AccessRule;
  /** Read as null, refused in filters and sorts. */
  hiddenFields: string[];
  /** Refused in create and update data. */
  readOnlyFields: string[];
}

/** The rules of a role that has none written for a table: nothing. */
export const NO_ACCESS: TableAccessRules = everyAction('NONE');

/** Every record, every action: what tables that existed before D32 give every role. */
export const FULL_ACCESS: TableAccessRules = everyAction('ALL');

function everyAction(level: 'NONE' | 'ALL'): TableAccessRules {
  return Object.freeze({ read: { level }, create: { level }, update: { level }, delete: { level }, hiddenFields: [], readOnlyFields: [] });
}

/** The values a FILTER rule may name for the caller. */
export const USER_VALUES = ['$user._id', '$user.email', '$user.role'] as const;

const LEVEL_WORDS = ACCESS_LEVELS.flatMap((level) => [level, level.toLowerCase()]) as [string, ...string[]];
const levelWord = z.enum(LEVEL_WORDS, { message: `must be one of ${ACCESS_LEVELS.join(', ')} (any letter case)` });

/**
 * A rule as callers write it: a level (`'all'`, `'OWN'`...), `{ filter }`, or `{ level, filter }`
 * (GraphQL's `AccessRuleInput`). A filter goes with FILTER and only with it.
 */
export const accessRuleInput = z
  .union([
    levelWord,
    z.object({
      level: levelWord.optional(),
      filter: z.record(z.string(), z.unknown()).nullish().describe('With level FILTER: a filter like the generated filter argument; "$user._id", "$user.email" and "$user.role" stand for the signed-in user'),
    }),
  ])
  .transform((value, ctx): AccessRule => {
    const given = typeof value === 'string' ? { level: value } : value;
    const filter = given.filter ?? undefined;
    const level = (given.level?.toUpperCase() ?? (filter ? 'FILTER' : undefined)) as AccessLevel | undefined;
    if (!level) {
      ctx.addIssue({ code: 'custom', message: `must give a level (${ACCESS_LEVELS.join(', ')}) or a filter` });
      return z.NEVER;
    }
    if (level === 'FILTER' && !filter) {
      ctx.addIssue({ code: 'custom', path: ['filter'], message: 'is required with level FILTER' });
      return z.NEVER;
    }
    if (level !== 'FILTER' && filter) {
      ctx.addIssue({ code: 'custom', path: ['filter'], message: `is only allowed with level FILTER, not ${level}` });
      return z.NEVER;
    }
    return filter ? { level, filter } : { level };
  });

const fieldList = z
  .array(z.string().max(100, 'must be at most 100 characters'))
  .max(200, 'must name at most 200 fields')
  .nullish()
  .transform((fields) => [...new Set(fields ?? [])]);

/** One role's rules on one table (GraphQL's `TableAccessInput`). */
export const tableAccessInput = z.object({
  read: accessRuleInput,
  create: accessRuleInput,
  update: accessRuleInput,
  delete: accessRuleInput,
  hiddenFields: fieldList.describe('Fields read as null and refused in filters and sorts'),
  readOnlyFields: fieldList.describe('Fields refused in create and update data'),
});

/** A role's rules in `create_table`/`update_table`'s `access` list. */
export const roleTableAccessInput = tableAccessInput.extend({
  roleId: idSchema.describe('The role, by _id or name (see list_roles); admin roles always have ALL'),
});

/** A rule in an answer (GraphQL's AccessRule). */
export const accessRuleOutput = z.object({
  level: z.enum(ACCESS_LEVELS),
  filter: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('FILTER only: conditions in the generated filter language; $user._id, $user.email and $user.role (as strings) stand for the signed-in user.'),
});

/** A non-admin role's rules on a table in an answer (D32; GraphQL's TableAccess). */
export const tableAccessOutput = z
  .object({
    roleId: idOutput,
    roleName: z.string(),
    read: accessRuleOutput,
    create: accessRuleOutput,
    update: accessRuleOutput,
    delete: accessRuleOutput,
    hiddenFields: z.array(z.string()).describe('Read as null, refused in filters and sorts.'),
    readOnlyFields: z.array(z.string()).describe('Refused in create and update data.'),
  })
  .describe("A non-admin role's rules on a table's records; admins always reach every record.");

export type TableAccessInput = z.input<typeof tableAccessInput>;
export type RoleTableAccessInput = z.input<typeof roleTableAccessInput>;
export type ParsedRoleTableAccess = z.infer<typeof roleTableAccessInput>;

/** A table and an action a feature's GraphQL documents need (D32). */
export interface DataNeed {
  readonly tableId: string;
  readonly table: string;
  readonly action: AccessAction;
}

/** A role's level on one table and action, as a feature grant reports it (GraphQL's DataGrant). */
export const dataGrantOutput = z
  .object({
    roleId: idOutput,
    role: z.string(),
    table: z.string(),
    action: z.enum(ACCESS_ACTIONS),
    level: z.enum(ACCESS_LEVELS),
  })
  .describe("A role's level on one table and action, as a feature grant reports it.");
export type DataGrant = z.infer<typeof dataGrantOutput>;

/** What granting a feature did to its roles' data access: rules it set to ALL, and narrower ones it kept. */
export interface DataGrantReport {
  granted: DataGrant[];
  leftNarrower: DataGrant[];
}
