import type { PlatformContext } from '../platform/context.js';
import { FeatureGrantService, type FeatureDataGrants, type FeatureGrant } from './feature-grants.js';
import type { Principal } from './permissions.js';
import { RoleService, type Role } from './roles.js';
import type {
  ChangePasswordInput,
  CreateRoleInput,
  CreateUserInput,
  GrantFeatureAccessInput,
  TransferOwnershipInput,
  UpdateRoleInput,
  UpdateUserInput,
} from './schema.js';
import { SessionService, type Session } from './sessions.js';
import { UserService, type User } from './users.js';

export type { FeatureDataGrants, FeatureGrant } from './feature-grants.js';
export type { Role } from './roles.js';
export type { Session } from './sessions.js';
export type { User } from './users.js';

/**
 * Who may do what, as the adapters reach it: sessions (sessions.ts), users (users.ts), roles
 * (roles.ts) and which roles see which features (feature-grants.ts). Each method is its module's;
 * this class only puts them behind one name.
 */
export class AccessService {
  readonly sessions: SessionService;
  readonly users: UserService;
  readonly roles: RoleService;
  readonly featureGrants: FeatureGrantService;

  /**
   * @param dataGrants what granting a feature does to the data access of its roles (D32); without
   * it a grant changes only which features roles see.
   */
  constructor(ctx: PlatformContext, dataGrants?: FeatureDataGrants) {
    this.sessions = new SessionService(ctx);
    this.users = new UserService(ctx);
    this.roles = new RoleService(ctx);
    this.featureGrants = new FeatureGrantService(ctx, dataGrants);
  }

  login(input: unknown): Promise<Session> {
    return this.sessions.login(input);
  }

  changeOwnPassword(principal: Principal, input: ChangePasswordInput): Promise<Session> {
    return this.sessions.changeOwnPassword(principal, input);
  }

  logout(token: string): Promise<void> {
    return this.sessions.logout(token);
  }

  authenticateSession(token: string, source?: Principal['source']): Promise<Principal> {
    return this.sessions.authenticateSession(token, source);
  }

  principalForUser(userId: string, source: Principal['source']): Promise<Principal> {
    return this.sessions.principalForUser(userId, source);
  }

  listUsers(principal: Principal): Promise<User[]> {
    return this.users.listUsers(principal);
  }

  getUser(principal: Principal, userId: string): Promise<User> {
    return this.users.getUser(principal, userId);
  }

  findUserByEmail(principal: Principal, email: string): Promise<User> {
    return this.users.findUserByEmail(principal, email);
  }

  createUser(principal: Principal, input: CreateUserInput): Promise<User> {
    return this.users.createUser(principal, input);
  }

  updateUser(principal: Principal, input: UpdateUserInput): Promise<User> {
    return this.users.updateUser(principal, input);
  }

  transferOwnership(principal: Principal, input: TransferOwnershipInput): Promise<User> {
    return this.users.transferOwnership(principal, input);
  }

  listRoles(principal: Principal): Promise<Role[]> {
    return this.roles.listRoles(principal);
  }

  createRole(principal: Principal, input: CreateRoleInput): Promise<Role> {
    return this.roles.createRole(principal, input);
  }

  updateRole(principal: Principal, input: UpdateRoleInput): Promise<Role> {
    return this.roles.updateRole(principal, input);
  }

  deleteRole(principal: Principal, roleId: string): Promise<boolean> {
    return this.roles.deleteRole(principal, roleId);
  }

  grantFeatureAccess(principal: Principal, input: GrantFeatureAccessInput): Promise<string[]> {
    return this.featureGrants.grantFeatureAccess(principal, input);
  }

  grantFeature(principal: Principal, input: GrantFeatureAccessInput): Promise<FeatureGrant> {
    return this.featureGrants.grantFeature(principal, input);
  }

  revokeFeatureAccess(principal: Principal, input: GrantFeatureAccessInput): Promise<string[]> {
    return this.featureGrants.revokeFeatureAccess(principal, input);
  }

  featureRoles(principal: Principal, featureId: string): Promise<string[]> {
    return this.featureGrants.featureRoles(principal, featureId);
  }
}
