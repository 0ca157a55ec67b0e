import { z } from 'zod';
import { featureAuthoringGuide, featureAuthoringGuideOutput } from '../../features/authoring-guide.js';
import { hookAuthoringGuide } from '../../hooks/authoring-guide.js';
import { READ, defineTool } from './types.js';
import { plain } from './shared.js';

export const getGraphqlSchema = defineTool({
  name: 'get_graphql_schema',
  scope: 'config:read',
  title: 'Get the GraphQL schema',
  description:
    'Returns the SDL of the application\'s GraphQL endpoint (/graphql) in two sections: first the application\'s operations, generated from its tables (what features and integrations query and mutate), then the builder operations apart (signed-in users only).',
  input: z.object({}),
  output: z.object({ sdl: z.string() }),
  annotations: READ,
  cacheable: true,
  async run(services) {
    return { data: { sdl: await services.graphql.sdl() } };
  },
});

export const getFeatureAuthoringGuide = defineTool({
  name: 'get_feature_authoring_guide',
  scope: 'config:read',
  title: 'Get the feature authoring guide',
  description:
    'Returns the modules a feature may import, the @trellis/ui components with their props, the @trellis/runtime exports with how each is called, the runtime rules, the application\'s theme (colours and shell CSS variables) and a small example, plus `hooks`: the hook authoring guide (the API inside a hook, what each hook type receives and returns with an example, the limits). Read it before writing a feature or a hook.',
  input: z.object({}),
  output: featureAuthoringGuideOutput.extend({
    hooks: z.object({
      shape: z.string(),
      globals: z.array(z.object({ name: z.string(), description: z.string() })),
      db: z.array(z.object({ method: z.string(), returns: z.string() })),
      dbRules: z.array(z.string()),
      types: z.array(z.object({ type: z.string(), when: z.string(), receives: z.string(), returns: z.string(), example: z.string() })),
      limits: z.array(z.string()),
    }),
  }),
  annotations: READ,
  cacheable: true,
  async run(services) {
    const application = await services.application.read();
    const { hookCpuMs, hookTimeoutMs, hookMemoryMb } = services.ctx.config;
    const hooks = hookAuthoringGuide({ cpuMs: hookCpuMs, timeoutMs: hookTimeoutMs, memoryMb: hookMemoryMb });
    return { data: plain({ ...featureAuthoringGuide(application.theme), hooks }) };
  },
});
