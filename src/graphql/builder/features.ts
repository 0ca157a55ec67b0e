import type { FeatureUpdate } from '../../features/service.js';
import type { GraphQLModule } from '../module.js';
import { requireUser, withoutNulls } from './access.js';

const typeDefs = /* GraphQL */ `
  "A custom feature written as JSX, reached at /feature/<_id>."
  type Feature {
    _id: ID!
    name: String!
    description: String!
    customCode: String!
    "draft or published"
    status: FeatureStatus!
    version: Int!
    "The version the application shows; null until first published."
    publishedVersion: Int
    createdBy: ID
    updatedBy: ID
    createdAt: DateTime!
    updatedAt: DateTime!
    "Ids of the roles that see the feature."
    roleIds: [ID!]!
    "Only on the answer of createFeature and updateFeature: what the code validator warned about ({ code, message, line, column }); warnings never block a save."
    warnings: [JSON!]
  }

  type FeatureVersion {
    version: Int!
    status: FeatureStatus!
    customCode: String!
    codeSha256: String!
    authorId: ID
    createdAt: DateTime!
  }

  "What a code validator found: valid is false exactly when there is an error. Each finding has code, message, line and column."
  type CodeValidation {
    valid: Boolean!
    errors: [JSON!]!
    warnings: [JSON!]!
  }

  extend type Query {
    "Checks feature code without saving or running it (config:read): syntax, imports, runtime rules, GraphQL documents. With featureId, also warns for each role that sees that feature but lacks data access its GraphQL documents need."
    validateFeatureCode(customCode: String!, featureId: ID): CodeValidation!
    "The unified diff from one saved version of a feature to another."
    featureVersionDiff(_id: ID!, from: Int!, to: Int!): String!
    "Features whose name or _id contains query (case-insensitive), ordered by name."
    features(query: String): [Feature!]!
    feature(_id: ID!): Feature
    "Saved versions of a feature, newest first."
    featureVersions(_id: ID!): [FeatureVersion!]!
  }

  extend type Mutation {
    "Creates a feature; _id is derived from the name when omitted. status: draft (default) or published."
    createFeature(_id: ID, name: String!, description: String, customCode: String!, status: FeatureStatus): Feature!
    "Saves a feature; a change of code or status adds a version."
    updateFeature(_id: ID!, name: String, description: String, customCode: String, status: FeatureStatus): Feature!
    "Deletes a feature; confirm must be true."
    deleteFeature(_id: ID!, confirm: Boolean!): Boolean!
  }
`;

export const featuresModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      validateFeatureCode: (_s, args, ctx) => ctx.services.features.validateCode(requireUser(ctx), args.customCode, args.featureId ?? undefined),
      featureVersionDiff: (_s, args, ctx) => ctx.services.features.versionDiff(requireUser(ctx), args._id, args.from, args.to),
      features: (_s, args, ctx) => ctx.services.features.listFeatures(requireUser(ctx), withoutNulls(args)),
      feature: (_s, args, ctx) => ctx.services.features.getFeature(requireUser(ctx), args._id),
      featureVersions: (_s, args, ctx) => ctx.services.features.listFeatureVersions(requireUser(ctx), args._id),
    },
    Mutation: {
      createFeature: (_s, args, ctx) => ctx.services.features.createFeature(requireUser(ctx), withoutNulls(args) as never),
      updateFeature: async (_s, args, ctx) =>
        toFeatureWithWarnings(await ctx.services.features.updateFeature(requireUser(ctx), withoutNulls(args) as never)),
      deleteFeature: (_s, args, ctx) => ctx.services.features.deleteFeature(requireUser(ctx), args as never),
    },
  },
};

function toFeatureWithWarnings({ feature, warnings }: FeatureUpdate) {
  return { ...feature, warnings };
}
