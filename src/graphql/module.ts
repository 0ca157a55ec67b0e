import type { GraphQLResolveInfo } from 'graphql';
import type { Principal } from '../access/permissions.js';
import type { Services } from '../services.js';

/** What every resolver receives. `principal` is the authenticated caller of this request. */
export interface GraphQLContext {
  readonly services: Services;
  readonly principal: Principal;
  /** The request asked for scratch writes (the x-trellis-scratch header): each record write is checked, then rolled back. */
  readonly scratch?: boolean;
}

export type Resolver = (
  source: unknown,
  args: Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  context: GraphQLContext,
  info: GraphQLResolveInfo,
) => unknown;

/**
 * One concern's part of the builder schema: its SDL (using `extend type Query`/`Mutation`) and
 * the resolvers of the fields it declares, by type name.
 */
export interface GraphQLModule {
  readonly typeDefs: string;
  readonly resolvers: Record<string, Record<string, Resolver>>;
}
