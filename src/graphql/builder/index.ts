import type { GraphQLModule } from '../module.js';
import { accessModule } from './access.js';

/** Every part of the builder schema, one module per concern. */
export const builderModules: readonly GraphQLModule[] = [accessModule];
