import { listHookRunStats } from '../../hooks/run-stats.js';
import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';

const typeDefs = /* GraphQL */ `
  "The runs of one period (a minute by default), of one hook or of all hooks together: every run is counted here, while the run log keeps failures and a sample of successes."
  type HookRunPeriod {
    periodStart: DateTime!
    "The length of the period in ms (TRELLIS_RUN_STATS_PERIOD_MS, a minute by default)."
    periodMs: Int!
    runs: Int!
    "Runs that did not end ok: refused + errors + timeouts + memory."
    failures: Int!
    "Webhooks whose code answered a 4xx or 5xx status."
    refused: Int!
    errors: Int!
    timeouts: Int!
    memory: Int!
    "Percentiles of the run duration in ms; across replicas or hooks merged approximately (mean weighted by runs)."
    durationP50Ms: Int!
    durationP95Ms: Int!
    durationMaxMs: Int!
    "How long runs waited for a hook worker, in ms."
    queuedP95Ms: Int!
    queuedMaxMs: Int!
  }

  extend type Query {
    "Run counts and durations per period since since (default: the last hour), oldest first, at most 1440 periods (the newest); of one hook, or of all hooks summed (config:read)."
    hookRunStats${graphqlArguments('hookRunStats')}: [HookRunPeriod!]!
  }
`;

export const runStatsModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      hookRunStats: (_s, args, ctx) => listHookRunStats(ctx.services.ctx, requireUser(ctx), argsFor('hookRunStats', args)),
    },
  },
};
