// The messages between the application page (or the designer's preview) and a feature's frame.
// The frame has an opaque origin and no network: every data call is a message the host relays.

export interface FrameUser {
  _id: string;
  email: string;
  name: string;
  roleName: string;
}

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
