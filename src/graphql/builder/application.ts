import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';

const typeDefs = /* GraphQL */ `
  type Theme {
    "Colour tokens by name, e.g. primary: #2563eb."
    colors: JSON!
    "Shell CSS variables, e.g. --shell-bg."
    shell: JSON!
  }

  type Application {
    _id: ID!
    name: String!
    "Origins allowed to call /graphql and /api/auth/token from a browser."
    corsOrigins: [String!]!
    theme: Theme!
  }

  extend type Query {
    application: Application!
  }

  extend type Mutation {
    "Changes the application's settings (admin only). Theme maps are merged key by key."
    updateApplication${graphqlArguments('updateApplication')}: Application!
  }
`;

export const applicationModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      application: (_s, _a, ctx) => ctx.services.application.get(requireUser(ctx)),
    },
    Mutation: {
      updateApplication: (_s, args, ctx) => ctx.services.application.update(requireUser(ctx), argsFor('updateApplication', args)),
    },
  },
};
