import { z } from 'zod';
import { readableName } from '../platform/names.js';
import { idOutput, idSchema, recordRef } from '../platform/validation.js';
import { PERMISSIONS } from './permissions.js';

const email = z.string().trim().toLowerCase().pipe(z.email('must be a valid e-mail address'));
const password = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(200, 'must be at most 200 characters');
const permission = z.enum(PERMISSIONS, { message: `must be one of ${PERMISSIONS.join(', ')}` });
const roleName = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,49}$/, 'must start with a letter and use only letters, digits, _ and - (at most 50)');

/** A user's display name: people read it in the designer and the application page, so the name rule applies (D33); may be empty. */
const displayName = readableName(100, { min: 0 });

export const loginInput = z.object({
  email: z.string().min(1, 'is required').max(320),
  password: z.string().min(1, 'is required').max(200),
});

export const createUserInput = z.object({
  email,
  password,
  name: displayName.default(''),
  /** Role `_id` or name. */
  role: z.string().trim().min(1).default('viewer'),
});

export const updateUserInput = z.object({
  _id: idSchema,
  name: displayName.optional(),
  role: z.string().trim().min(1).optional(),
  password: password.optional(),
  disabled: z.boolean().optional(),
});

export const changePasswordInput = z.object({
  currentPassword: z.string().min(1, 'is required').max(200),
  newPassword: password,
});

export const createRoleInput = z.object({
  name: roleName,
  description: z.string().max(500).default(''),
  permissions: z.array(permission).max(PERMISSIONS.length).default([]),
});

export const updateRoleInput = z.object({
  _id: idSchema,
  description: z.string().max(500).optional(),
  permissions: z.array(permission).max(PERMISSIONS.length).optional(),
});

/** The user who becomes the owner: an enabled admin. */
export const transferOwnershipInput = z.object({ userId: idSchema });

export const grantFeatureAccessInput = z.object({
  featureId: recordRef('feature'),
  roleIds: z.array(idSchema).min(1, 'must name at least one role').max(100, 'must name at most 100 roles').describe('Role _ids or names (see list_roles)'),
});

export const deleteRoleInput = z.object({ _id: idSchema.describe("The role's _id (a built-in role, or one still held by a user or an integration key, is not deleted)") });

export const featureRolesInput = z.object({ featureId: recordRef('feature') });

/** A role in an answer. */
export const roleOutput = z.object({
  _id: idOutput,
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.enum(PERMISSIONS)).describe("Scope names plus 'admin' and 'ai_designer'."),
  builtin: z.boolean(),
});

export type ChangePasswordInput = z.input<typeof changePasswordInput>;
export type CreateUserInput = z.input<typeof createUserInput>;
export type UpdateUserInput = z.input<typeof updateUserInput>;
export type CreateRoleInput = z.input<typeof createRoleInput>;
export type UpdateRoleInput = z.input<typeof updateRoleInput>;
export type TransferOwnershipInput = z.input<typeof transferOwnershipInput>;
export type GrantFeatureAccessInput = z.input<typeof grantFeatureAccessInput>;
