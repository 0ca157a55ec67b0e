import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';
import { graphqlObject } from './output-types.js';

const typeDefs = /* GraphQL */ `
  ${graphqlObject(
    'EnvironmentVariable',
    `"Set in the answer of setEnvironmentVariable: true when the variable did not exist before."
    created: Boolean`,
  )}

  extend type Query {
    "Names of the environment variables (never their values)."
    environmentVariables: [EnvironmentVariable!]!
  }

  extend type Mutation {
    "Creates or updates a variable (admin only)."
    setEnvironmentVariable${graphqlArguments('setEnvironmentVariable')}: EnvironmentVariable!
    deleteEnvironmentVariable${graphqlArguments('deleteEnvironmentVariable')}: Boolean!
  }
`;

export const envVarsModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      environmentVariables: (_s, _a, ctx) => ctx.services.envVars.listEnvironmentVariables(requireUser(ctx)),
    },
    Mutation: {
      setEnvironmentVariable: (_s, args, ctx) => ctx.services.envVars.setEnvironmentVariable(requireUser(ctx), argsFor('setEnvironmentVariable', args)),
      deleteEnvironmentVariable: (_s, args, ctx) => ctx.services.envVars.deleteEnvironmentVariable(requireUser(ctx), argsFor('deleteEnvironmentVariable', args)),
    },
  },
};
