import { z } from 'zod';
import { unifiedDiff } from '../../authoring/code-patches.js';
import { CREATE, DELETE, READ, UPDATE, defineTool } from './types.js';
import {
  createFeatureInput,
  deleteFeatureInput,
  editFeatureCodeInput,
  featureOutput,
  featureRefInput,
  featureWithCodeOutput,
  listFeaturesInput,
  updateFeatureInput,
  validateFeatureCodeInput,
} from '../../features/schema.js';
import { codeValidationOutput, findingOutput } from '../../authoring/schema.js';
import { diffOutput, plain } from './shared.js';

const featurePath = z.string().describe('/feature/<_id>, the path menus point at');

/** A feature as get_feature_details answers it, without its code, authors and roles, with its path. */
const featureSummary = featureOutput
  .pick({ _id: true, name: true, description: true, status: true, version: true, publishedVersion: true, updatedAt: true })
  .extend({ path: featurePath });

export const listFeatures = defineTool({
  name: 'list_features',
  scope: 'config:read',
  title: 'List features',
  description: 'Lists the application\'s features (pages) without their code. `query` filters by a case-insensitive substring of the name or _id.',
  input: listFeaturesInput,
  output: z.object({ features: z.array(featureSummary) }),
  annotations: READ,
  cacheable: true,
  async run(services, principal, args) {
    const features = await services.features.listFeatures(principal, args);
    return {
      data: {
        features: plain(
          features.map((f) => ({
            _id: f._id,
            name: f.name,
            description: f.description,
            status: f.status,
            version: f.version,
            publishedVersion: f.publishedVersion,
            path: `/feature/${f._id}`,
            updatedAt: f.updatedAt,
          })),
        ),
      },
    };
  },
});

export const getFeatureDetails = defineTool({
  name: 'get_feature_details',
  aliases: { featureId: '_id' },
  scope: 'config:read',
  title: 'Get a feature',
  description: 'Returns one feature with its current customCode (JSX), status, versions and the role ids that see it.',
  input: featureRefInput,
  output: z.object({ feature: featureWithCodeOutput }),
  annotations: READ,
  cacheable: true,
  async run(services, principal, args) {
    return { data: { feature: plain(await services.features.getFeature(principal, args._id)) } };
  },
});

export const validateFeatureCodeTool = defineTool({
  name: 'validate_feature_code',
  aliases: { _id: 'featureId' },
  scope: 'config:read',
  title: 'Validate feature JSX',
  description:
    'Dry-run validation of a feature\'s JSX: syntax, allowed imports, runtime rules, and the GraphQL documents it passes to useQuery/useMutation/graphql checked against the application\'s current schema (create the tables first). Never executes the code. Warnings (fixed hex colours, Tailwind colour classes) are informational: use the theme variables from get_feature_authoring_guide instead.',
  input: validateFeatureCodeInput,
  output: codeValidationOutput,
  annotations: READ,
  async run(services, principal, args) {
    return { data: plain(await services.features.validateCode(principal, args.customCode, args.featureId)) };
  },
});

export const createFeature = defineTool({
  name: 'create_feature',
  scope: 'features:write',
  title: 'Create a feature',
  description:
    'Creates a feature (a JSX page) through the builder\'s resolver: _id validation, default role permissions, versioning. Validate the code with validate_feature_code first; code with errors is refused.',
  input: createFeatureInput,
  output: z.object({ feature: featureOutput, warnings: z.array(findingOutput), path: featurePath }),
  annotations: CREATE,
  async run(services, principal, args) {
    const { warnings, ...feature } = await services.features.createFeature(principal, args);
    return { data: { feature: plain({ ...feature, customCode: undefined }), warnings: plain(warnings), path: `/feature/${feature._id}` } };
  },
});

export const updateFeature = defineTool({
  name: 'update_feature',
  aliases: { featureId: '_id' },
  scope: 'features:write',
  title: 'Update a feature',
  description:
    'Updates a feature\'s name, description, code or status. status draft/published runs the builder\'s versioning flow. When customCode is given it replaces the code in full and the answer carries a unified diff and the validator\'s warnings about the stored code.',
  input: updateFeatureInput,
  output: z.object({ feature: featureOutput, warnings: z.array(findingOutput), diff: diffOutput.optional() }),
  annotations: UPDATE,
  async run(services, principal, args) {
    const { feature, previousCode, warnings } = await services.features.updateFeature(principal, args);
    return {
      data: { feature: plain({ ...feature, customCode: undefined }), warnings: plain(warnings) },
      ...(args.customCode !== undefined ? { diff: unifiedDiff(`feature/${feature._id}.jsx`, previousCode, feature.customCode) } : {}),
    };
  },
});

export const editFeatureCode = defineTool({
  name: 'edit_feature_code',
  aliases: { featureId: '_id' },
  scope: 'features:write',
  title: 'Edit feature code',
  description:
    'Applies old_str/new_str patches to the feature\'s current code, validates the result, saves it as a new version and returns a unified diff. A patch that does not match exactly once rejects the whole edit and nothing is written. Without status the feature keeps its status: an edit of a published feature goes live at once (pass status: draft to stage it).',
  input: editFeatureCodeInput,
  output: z.object({ feature: featureOutput, warnings: z.array(findingOutput), diff: diffOutput }),
  annotations: UPDATE,
  async run(services, principal, args) {
    const { feature, previousCode, warnings } = await services.features.editFeatureCode(principal, args);
    return {
      data: { feature: plain({ ...feature, customCode: undefined }), warnings: plain(warnings) },
      diff: unifiedDiff(`feature/${feature._id}.jsx`, previousCode, feature.customCode),
    };
  },
});

export const deleteFeature = defineTool({
  name: 'delete_feature',
  aliases: { featureId: '_id' },
  scope: 'config:delete',
  title: 'Delete a feature',
  description: 'Deletes a feature and its versions. Requires confirm: true.',
  input: deleteFeatureInput,
  output: z.object({ deleted: z.string() }),
  annotations: DELETE,
  async run(services, principal, args) {
    await services.features.deleteFeature(principal, args);
    return { data: { deleted: args._id } };
  },
});

