// The messages between the application page (or the designer's preview) and a feature's frame.
// The frame has an opaque origin and no network: every data call is a message the host relays.

export type AccessLevel = 'NONE' | 'OWN' | 'FILTER' | 'ALL';

export const TABLE_ACTIONS = ['read', 'create', 'update', 'delete'] as const;
export type TableAction = (typeof TABLE_ACTIONS)[number];

/** What the signed-in user may do with one table's records (builder GraphQL's `EffectiveTableAccess`). */
export type FrameTableAccess = { tableId: string; table: string; hiddenFields: string[]; readOnlyFields: string[] } & Record<TableAction, AccessLevel>;

export interface FrameUser {
  _id: string;
  email: string;
  name: string;
  roleName: string;
  /** Data only (functions cannot cross postMessage): the frame builds `useCurrentUser().can` from it. */
  tableAccess: FrameTableAccess[];
}

/** The selection of `User` that gives `FrameUser.tableAccess`, for the hosts' queries. */
export const TABLE_ACCESS_FIELDS = 'tableAccess { tableId table read create update delete hiddenFields readOnlyFields }';

/** The parameters a feature was opened with (/app/feature/<id>?order=123 gives { order: '123' }). */
export type FeatureParams = Record<string, string>;

/** Host -> frame. */
export type HostMessage =
  | { trellis: 'render'; featureId: string; script: string; user: FrameUser; cssVariables: Record<string, string>; params: FeatureParams }
  | { trellis: 'graphql-result'; id: number; data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };

/** Frame -> host. */
export type FrameMessage =
  | { trellis: 'ready' }
  | { trellis: 'graphql'; id: number; query: string; variables?: Record<string, unknown> }
  | { trellis: 'navigate'; path: string }
  | { trellis: 'rendered' }
  /** The page could not render: the frame shows the message in place of the page. */
  | { trellis: 'failed'; message: string }
  /** An error the page did not catch (in an event handler, a promise, a data call); the page stays. */
  | { trellis: 'error'; message: string };

/** The path a feature may navigate to: /feature/<id>, with parameters as a query (?order=123). */
const FEATURE_PATH = /^\/feature\/([^/?#]+)(?:\?([^#]*))?$/;

/** At most this many characters of parameters travel with a navigation (a URL stays short). */
export const FEATURE_PARAMS_MAX_LENGTH = 2000;

/** `/feature/<id>?<params>` of a navigation, or null when `path` is no such path or its parameters are too long. */
export function parseFeaturePath(path: string): { featureId: string; params: FeatureParams } | null {
  const match = FEATURE_PATH.exec(path);
  if (!match || (match[2]?.length ?? 0) > FEATURE_PARAMS_MAX_LENGTH) return null;
  try {
    return { featureId: decodeURIComponent(match[1]!), params: Object.fromEntries(new URLSearchParams(match[2] ?? '')) };
  } catch {
    return null;
  }
}

/** The query string (with its `?`, or '' for none) of `params`. */
export function featureQuery(params: FeatureParams): string {
  const query = new URLSearchParams(params).toString();
  return query ? `?${query}` : '';
}
