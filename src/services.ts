import { Authenticator } from './access/authenticate.js';
import { AccessService } from './access/service.js';
import { ApplicationService } from './application/service.js';
import { McpAuditService } from './audit/service.js';
import { EnvVarService } from './envvars/service.js';
import { FeatureService } from './features/service.js';
import { GraphQLSchemaProvider } from './graphql/schema-provider.js';
import { HookService } from './hooks/service.js';
import { IntegrationService } from './integrations/service.js';
import { KeyService } from './keys/service.js';
import { MenuService } from './menus/service.js';
import type { PlatformContext } from './platform/context.js';
import { TableService } from './tables/service.js';

/** Every domain service of the deployment, built once at start and shared by all adapters. */
export interface Services {
  readonly ctx: PlatformContext;
  readonly access: AccessService;
  readonly auth: Authenticator;
  readonly application: ApplicationService;
  readonly features: FeatureService;
  readonly hooks: HookService;
  readonly keys: KeyService;
  readonly integrations: IntegrationService;
  readonly tables: TableService;
  readonly menus: MenuService;
  readonly envVars: EnvVarService;
  readonly audit: McpAuditService;
  readonly graphql: GraphQLSchemaProvider;
}

export function createServices(ctx: PlatformContext): Services {
  const access = new AccessService(ctx);
  return {
    ctx,
    access,
    auth: new Authenticator(ctx, access),
    application: new ApplicationService(ctx),
    features: new FeatureService(ctx),
    hooks: new HookService(ctx),
    keys: new KeyService(ctx),
    integrations: new IntegrationService(ctx),
    tables: new TableService(ctx),
    menus: new MenuService(ctx),
    envVars: new EnvVarService(ctx),
    audit: new McpAuditService(ctx),
    graphql: new GraphQLSchemaProvider(),
  };
}
