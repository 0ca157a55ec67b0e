import type { GraphQLModule } from '../module.js';
import { accessModule } from './access.js';
import { applicationModule } from './application.js';
import { auditModule } from './audit.js';
import { envVarsModule } from './envvars.js';
import { featuresModule } from './features.js';
import { hooksModule } from './hooks.js';
import { integrationsModule } from './integrations.js';
import { appPageModule } from './app-page.js';
import { keysModule } from './keys.js';
import { menusModule } from './menus.js';
import { runStatsModule } from './run-stats.js';
import { storageModule } from './storage.js';
import { tablesModule } from './tables.js';

/** Every part of the builder schema, one module per concern. */
export const builderModules: readonly GraphQLModule[] = [accessModule, applicationModule, featuresModule, hooksModule, keysModule, integrationsModule, tablesModule, menusModule, envVarsModule, auditModule, appPageModule, runStatsModule, storageModule];
