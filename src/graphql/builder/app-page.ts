import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';

const typeDefs = /* GraphQL */ `
  "An entry of the application page's menu: a feature the signed-in user's role sees."
  type AppPageEntry {
    label: String!
    featureId: ID!
    "/feature/<feature_id>, as the menu stores it."
    path: String!
  }

  type AppPageMenu {
    _id: ID!
    name: String!
    entries: [AppPageEntry!]!
  }

  type AppPageFeature {
    _id: ID!
    name: String!
    description: String!
  }

  type AppPageUser {
    _id: ID!
    email: String!
    name: String!
    roleName: String!
    isAdmin: Boolean!
  }

  "What the application page (/app) shows the signed-in user."
  type AppPage {
    name: String!
    "The theme as CSS custom properties: --color-<name> per colour, then the shell variables."
    cssVariables: JSON!
    "Menus with only the entries of published features the user's role sees."
    menus: [AppPageMenu!]!
    "Every published feature the user's role sees."
    features: [AppPageFeature!]!
    user: AppPageUser!
  }

  "Feature code compiled from JSX to a CommonJS script for the application page's frame."
  type RunnableFeature {
    _id: ID!
    name: String!
    version: Int!
    codeSha256: String!
    script: String!
  }

  extend type Query {
    "The application page of the signed-in user (any role)."
    appPage: AppPage!
    "The published version of a feature the signed-in user's role sees, compiled for the application page; null with a FORBIDDEN or NOT_FOUND error otherwise."
    appFeature${graphqlArguments('appFeature')}: RunnableFeature
    "The current code of a feature (or customCode, not saved) compiled for the designer's preview (config:read)."
    featurePreview${graphqlArguments('featurePreview')}: RunnableFeature!
  }
`;

export const appPageModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      appPage: (_s, _a, ctx) => ctx.services.appPage.page(requireUser(ctx)),
      appFeature: (_s, args, ctx) => ctx.services.appPage.publishedFeature(requireUser(ctx), argsFor('appFeature', args)._id),
      featurePreview: (_s, args, ctx) => {
        const { _id, customCode } = argsFor('featurePreview', args);
        return ctx.services.appPage.previewFeature(requireUser(ctx), _id, customCode);
      },
    },
  },
};
