import { Authenticator } from './access/authenticate.js';
import { AccessService } from './access/service.js';
import { ApplicationService } from './application/service.js';
import { McpAuditBatcher } from './audit/batcher.js';
import { McpAuditService } from './audit/service.js';
import { EnvVarService } from './envvars/service.js';
import { AppPageService } from './features/app-page.js';
import { FeatureService } from './features/service.js';
import { GraphQLSchemaProvider } from './graphql/schema-provider.js';
import { HookService } from './hooks/service.js';
import { IntegrationService } from './integrations/service.js';
import { KeyService } from './keys/service.js';
import { MenuService } from './menus/service.js';
import type { PlatformContext } from './platform/context.js';
import { ReadCache } from './platform/read-cache.js';
import { HookRuntime } from './runtime/service.js';
import { WebhookDispatcher } from './runtime/webhooks.js';
import { RecordService } from './tables/records.js';
import { TableService } from './tables/service.js';
import { grantNeededAccess } from './tables/table-access.js';

/** Every domain service of the deployment, built once at start and shared by all adapters. */
export interface Services {
  readonly ctx: PlatformContext;
  readonly access: AccessService;
  readonly auth: Authenticator;
  readonly application: ApplicationService;
  readonly features: FeatureService;
  /** The application page: what a user's role sees, and that code compiled for the browser. */
  readonly appPage: AppPageService;
  readonly hooks: HookService;
  readonly keys: KeyService;
  readonly integrations: IntegrationService;
  readonly tables: TableService;
  /** Records of the application's tables, with their save hooks. */
  readonly records: RecordService;
  readonly menus: MenuService;
  readonly envVars: EnvVarService;
  /** Runs hook code in the QuickJS sandbox and records each run. */
  readonly hookRuntime: HookRuntime;
  /** Inbound webhooks and their test runs, under one limit. */
  readonly webhooks: WebhookDispatcher;
  readonly audit: McpAuditService;
  /** Group-committed audit entries of MCP calls that write nothing else. */
  readonly auditLog: McpAuditBatcher;
  readonly graphql: GraphQLSchemaProvider;
  /** Answers of configuration reads until the next change. */
  readonly readCache: ReadCache<unknown>;
}

/**
 * Builds each service once, a service's dependencies before it, and hands each only what it uses
 * (a port such as the record layer's SaveHooks), never the container. What is read lazily is read
 * on first use, not at start (the feature schema).
 */
export function createServices(ctx: PlatformContext): Services {
  const graphql = new GraphQLSchemaProvider(ctx);
  const featureSchema = () => graphql.featureSchema();
  const features = new FeatureService(ctx, featureSchema);
  const access = new AccessService(ctx, {
    needs: (featureRef) => features.dataNeeds(featureRef),
    grant: grantNeededAccess,
  });
  const integrations = new IntegrationService(ctx);
  const application = new ApplicationService(ctx);
  const hooks = new HookService(ctx);
  const hookRuntime = new HookRuntime(ctx);
  const records = new RecordService(ctx, { hooks, runner: hookRuntime });
  return {
    ctx,
    access,
    auth: new Authenticator(ctx, access, integrations),
    application,
    appPage: new AppPageService(ctx, application),
    features,
    hooks,
    keys: new KeyService(ctx),
    integrations,
    tables: new TableService(ctx, featureSchema),
    records,
    menus: new MenuService(ctx),
    envVars: new EnvVarService(ctx),
    hookRuntime,
    audit: new McpAuditService(ctx),
    auditLog: new McpAuditBatcher(ctx.db),
    graphql,
    readCache: new ReadCache(ctx.changes),
    webhooks: new WebhookDispatcher(ctx, { hooks, hookDb: (principal) => records.hookDb(principal), runner: hookRuntime }),
  };
}
