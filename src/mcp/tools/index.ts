import { addTableField, createTable, getEntityDetails, listEntities, updateTable } from './entities.js';
import {
  createFeature,
  deleteFeature,
  editFeatureCode,
  getFeatureDetails,
  listFeatures,
  updateFeature,
  validateFeatureCodeTool,
} from './features.js';
import { getFeatureAuthoringGuide, getGraphqlSchema } from './guides.js';
import { createHook, deleteHook, editHookCode, getHookDetails, listHooks, updateHook, validateHookCodeTool } from './hooks.js';
import {
  grantFeatureAccess,
  listEnvironmentVariables,
  listMenus,
  listRoles,
  setEnvironmentVariable,
  upsertMenu,
} from './navigation.js';
import type { ToolDefinition } from './types.js';

/** The 27 tools of the spec, in the fixed order `tools/list` shows them. */
export const TOOLS: readonly ToolDefinition[] = [
  listFeatures,
  getFeatureDetails,
  listHooks,
  getHookDetails,
  listEntities,
  getEntityDetails,
  listMenus,
  listRoles,
  listEnvironmentVariables,
  getGraphqlSchema,
  getFeatureAuthoringGuide,
  validateFeatureCodeTool,
  validateHookCodeTool,
  createFeature,
  updateFeature,
  editFeatureCode,
  createHook,
  updateHook,
  editHookCode,
  createTable,
  updateTable,
  addTableField,
  upsertMenu,
  grantFeatureAccess,
  setEnvironmentVariable,
  deleteFeature,
  deleteHook,
] as ToolDefinition[];

export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(TOOLS.map((tool) => [tool.name, tool]));
