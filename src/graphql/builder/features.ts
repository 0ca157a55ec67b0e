import { featureAuthoringGuide, tableExample } from '../../features/authoring-guide.js';
import type { FeatureUpdate } from '../../features/service.js';
import type { GraphQLContext, GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments } from './operation-args.js';
import { graphqlObject } from './output-types.js';

const typeDefs = /* GraphQL */ `
  ${graphqlObject(
    'Feature',
    `"Only on the answer of createFeature and updateFeature: what the code validator warned about ({ code, message, line, column }); warnings never block a save."
    warnings: [JSON!]`,
  )}

  type FeatureVersion {
    version: Int!
    status: FeatureStatus!
    customCode: String!
    codeSha256: String!
    authorId: ID
    createdAt: DateTime!
  }

  ${graphqlObject('CodeValidation')}

  ${graphqlObject('FeatureModule')}

  ${graphqlObject('FeatureComponentProp')}

  ${graphqlObject('FeatureComponent')}

  ${graphqlObject('FeatureRuntimeExport')}

  "One of the application's tables as the guide shows it: its fields and generated operations (table), and a page for it."
  type FeatureGuideTable {
    table: AppTable!
    "A feature that lists the table's records and adds one, written for its fields and operation names; it validates with no errors."
    example: String!
  }

  ${graphqlObject(
    'FeatureAuthoringGuide',
    `"The application's tables, each with a page for it."
    tables: [FeatureGuideTable!]!`,
  )}

  extend type Query {
    "The feature authoring guide with the application's tables (config:read)."
    featureAuthoringGuide: FeatureAuthoringGuide!
    "Checks feature code without saving or running it (config:read): syntax, imports, runtime rules, GraphQL documents. With featureId, also warns for each role that sees that feature but lacks data access its GraphQL documents need."
    validateFeatureCode${graphqlArguments('validateFeatureCode')}: CodeValidation!
    "The unified diff from one saved version of a feature to another."
    featureVersionDiff${graphqlArguments('featureVersionDiff')}: String!
    "Features whose name or _id contains query (case-insensitive), ordered by name."
    features${graphqlArguments('features')}: [Feature!]!
    feature${graphqlArguments('feature')}: Feature
    "Saved versions of a feature, newest first."
    featureVersions${graphqlArguments('featureVersions')}: [FeatureVersion!]!
  }

  extend type Mutation {
    "Creates a feature; _id is derived from the name when omitted. status: draft (default) or published."
    createFeature${graphqlArguments('createFeature')}: Feature!
    "Saves a feature; a change of code or status adds a version."
    updateFeature${graphqlArguments('updateFeature')}: Feature!
    "Deletes a feature; confirm must be true."
    deleteFeature${graphqlArguments('deleteFeature')}: Boolean!
  }
`;

export const featuresModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      featureAuthoringGuide: (_s, _a, ctx) => guideWithTables(ctx),
      validateFeatureCode: (_s, args, ctx) => {
        const { customCode, featureId } = argsFor('validateFeatureCode', args);
        return ctx.services.features.validateCode(requireUser(ctx), customCode, featureId);
      },
      featureVersionDiff: (_s, args, ctx) => {
        const { _id, from, to } = argsFor('featureVersionDiff', args);
        return ctx.services.features.versionDiff(requireUser(ctx), _id, from, to);
      },
      features: (_s, args, ctx) => ctx.services.features.listFeatures(requireUser(ctx), argsFor('features', args)),
      feature: (_s, args, ctx) => ctx.services.features.getFeature(requireUser(ctx), argsFor('feature', args)._id),
      featureVersions: (_s, args, ctx) => ctx.services.features.listFeatureVersions(requireUser(ctx), argsFor('featureVersions', args)._id),
    },
    Mutation: {
      createFeature: (_s, args, ctx) => ctx.services.features.createFeature(requireUser(ctx), argsFor('createFeature', args)),
      updateFeature: async (_s, args, ctx) =>
        toFeatureWithWarnings(await ctx.services.features.updateFeature(requireUser(ctx), argsFor('updateFeature', args))),
      deleteFeature: (_s, args, ctx) => ctx.services.features.deleteFeature(requireUser(ctx), argsFor('deleteFeature', args)),
    },
  },
};

function toFeatureWithWarnings({ feature, warnings }: FeatureUpdate) {
  return { ...feature, warnings };
}

/** The guide, and for each table its list-and-add example (a table without generated operations has none). */
async function guideWithTables(ctx: GraphQLContext) {
  const tables = await ctx.services.tables.listTables(requireUser(ctx));
  const [application, operations] = await Promise.all([ctx.services.application.read(), Promise.all(tables.map((table) => ctx.services.graphql.recordNames(table._id)))]);
  return {
    ...featureAuthoringGuide(application.theme),
    tables: tables.flatMap((table, index) => {
      const names = operations[index];
      return names ? [{ table, example: tableExample({ ...table, operations: names }) }] : [];
    }),
  };
}
