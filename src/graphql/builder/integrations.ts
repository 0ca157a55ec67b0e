import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';

const typeDefs = /* GraphQL */ `
  "Client credentials of an external integration. The apiKey is never shown again after creation."
  type IntegrationKey {
    _id: ID!
    name: String!
    clientId: String!
    "The role whose data-access rules the integration acts with; null: every record of every table."
    roleId: ID
    createdAt: DateTime!
  }

  type CreatedIntegrationKey {
    clientId: String!
    "The secret for POST /api/auth/token, shown only in this answer: store it now."
    apiKey: String!
    integration: IntegrationKey!
  }

  extend type Query {
    "Every integration key of the application (admin only)."
    integrationKeys: [IntegrationKey!]!
  }

  extend type Mutation {
    "Creates an integration key (admin only); names are unique ignoring case. With roleId (a role _id or name) it acts with that role's data-access rules; without, it reaches every record."
    createIntegrationKey${graphqlArguments('createIntegrationKey')}: CreatedIntegrationKey!
    "Deletes an integration key and revokes its access tokens at once (admin only)."
    deleteIntegrationKey${graphqlArguments('deleteIntegrationKey')}: Boolean!
  }
`;

export const integrationsModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      integrationKeys: (_s, _a, ctx) => ctx.services.integrations.listIntegrationKeys(requireUser(ctx)),
    },
    Mutation: {
      createIntegrationKey: (_s, args, ctx) => ctx.services.integrations.createIntegrationKey(requireUser(ctx), argsFor('createIntegrationKey', args)),
      deleteIntegrationKey: (_s, args, ctx) => ctx.services.integrations.deleteIntegrationKey(requireUser(ctx), argsFor('deleteIntegrationKey', args)),
    },
  },
};
