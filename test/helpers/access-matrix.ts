import { gqlData, graphqlClient, login } from './server.js';

type Gql = ReturnType<typeof graphqlClient>;

/**
 * The matrix of data access by role (issue 19, D32) that the GraphQL and the application page's
 * tests walk: the four levels, the four actions, the FILTER rule they use, and a reference model of
 * what a rule reaches, in plain TypeScript.
 */

export type Level = 'NONE' | 'OWN' | 'FILTER' | 'ALL';
export type Action = 'read' | 'create' | 'update' | 'delete';
export type Region = 'EU' | 'US';

export const LEVELS: Level[] = ['NONE', 'OWN', 'FILTER', 'ALL'];
export const ACTIONS: Action[] = ['read', 'create', 'update', 'delete'];

/** The FILTER rule of the matrix: EU records, and the caller's own. It names the user, so a caller with none reaches nothing. */
export const FILTER = { _or: [{ region: { eq: 'EU' } }, { _createdBy: { eq: '$user._id' } }] };

/** A rule at `level` as `setTableAccess` takes it (FILTER with the matrix's filter). */
export function rule(level: Level): { level: Level; filter?: typeof FILTER } {
  return level === 'FILTER' ? { level, filter: FILTER } : { level };
}

/** The four rules of `setTableAccess`: `levels` where given, ALL for the other actions. */
export function rules(levels: Partial<Record<Action, Level>>): Record<Action, ReturnType<typeof rule>> {
  return Object.fromEntries(ACTIONS.map((action) => [action, rule(levels[action] ?? 'ALL')])) as Record<Action, ReturnType<typeof rule>>;
}

/**
 * The reference model: whether a rule at `level` reaches a record created by `record.by` in
 * `record.region`, for the caller `user` (null: a caller acting for nobody).
 */
export function reaches<Who extends string>(level: Level, record: { by: Who | null; region: Region }, user: Who | null): boolean {
  if (level === 'ALL') return true;
  if (level === 'NONE' || user === null) return false;
  if (level === 'OWN') return record.by === user;
  return record.region === 'EU' || record.by === user;
}

/**
 * The message of the FORBIDDEN answer to `action` refused at `level`: the role has no rule for the
 * action (NONE), or the record is outside it. A record outside `read` is not refused but missing.
 */
export function refusal(action: Action, level: Level, table: string, role: string): string {
  return level === 'NONE' ? `Role '${role}' may not ${action} ${table} records` : `outside what your role may ${action}`;
}

/** Who the matrix's tests act as: the owner and two clerks of the role `clerk`. */
export type Who = 'clerk1' | 'clerk2' | 'owner';

/**
 * Signs in the matrix's people on a server: the owner (as `admin`), and two users of a new role
 * `clerk`. Returns each one's user id and GraphQL client.
 */
export async function signInMatrixPeople(url: string, admin: Gql): Promise<{ userIds: Record<Who, string>; sessions: Record<Who, Gql> }> {
  const userIds = { owner: (await gqlData(admin, '{ me { _id } }')).me._id } as Record<Who, string>;
  const sessions = { owner: admin } as Record<Who, Gql>;
  await gqlData(admin, 'mutation { createRole(name: "clerk", description: "Books entries") { _id } }');
  for (const who of ['clerk1', 'clerk2'] as const) {
    const created = await gqlData(admin, 'mutation($e: String!) { createUser(email: $e, password: "clerk-password", role: "clerk") { _id } }', { e: `${who}@example.com` });
    userIds[who] = created.createUser._id;
    sessions[who] = graphqlClient(url, await login(url, `${who}@example.com`, 'clerk-password'));
  }
  return { userIds, sessions };
}
