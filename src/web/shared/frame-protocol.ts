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

/** Host -> frame. */
export type HostMessage =
  | { trellis: 'render'; featureId: string; script: string; user: FrameUser; cssVariables: Record<string, string> }
  | { trellis: 'graphql-result'; id: number; data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] };

/** Frame -> host. */
export type FrameMessage =
  | { trellis: 'ready' }
  | { trellis: 'graphql'; id: number; query: string; variables?: Record<string, unknown> }
  | { trellis: 'navigate'; path: string }
  | { trellis: 'rendered' }
  | { trellis: 'failed'; message: string };

/** The path a feature may navigate to: /feature/<id>. */
export const FEATURE_PATH = /^\/feature\/([^/?#]+)$/;
