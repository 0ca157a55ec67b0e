import { forbidden, unauthenticated } from '../../platform/errors.js';
import type { GraphQLContext, GraphQLModule } from '../module.js';
import { argsFor, graphqlArguments } from './operation-args.js';
import { graphqlObject } from './output-types.js';

/**
 * A builder operation needs a signed-in user. An integration token is refused with FORBIDDEN: it
 * authenticated, but reaches the application's generated operations only.
 */
export function requireUser(context: GraphQLContext) {
  const { principal } = context;
  if (principal.kind === 'integration') {
    throw forbidden("Builder operations need a signed-in user; integration tokens reach the application's generated operations only");
  }
  if (principal.kind !== 'user' || !principal.userId) throw unauthenticated();
  return principal;
}

const typeDefs = /* GraphQL */ `
  type User {
    _id: ID!
    email: String!
    name: String!
    roleId: ID!
    roleName: String!
    isOwner: Boolean!
    disabled: Boolean!
    createdAt: DateTime!
  }

  "A session token, as POST /api/auth/login returns it."
  type NewSession {
    token: String!
    expiresIn: Int!
  }

  ${graphqlObject('Role')}

  extend type Query {
    "The signed-in user."
    me: User!
    "Every user of the application (admin only)."
    users: [User!]!
    "The application's roles."
    roles: [Role!]!
    "Ids of the roles that see a feature."
    featureRoles${graphqlArguments('featureRoles')}: [ID!]!
  }

  extend type Mutation {
    "Creates a user (admin only). role is a role _id or name."
    createUser${graphqlArguments('createUser')}: User!
    "Changes the signed-in user's own password (the current one is checked); every session of the user ends and a new one is returned."
    changeMyPassword${graphqlArguments('changeMyPassword')}: NewSession!
    "Changes a user's name, role, password or disabled flag (admin only). The owner's account changes only by the owner (FORBIDDEN otherwise), who stays an enabled admin until transferOwnership (CONFLICT). A change to an admin account is e-mailed to it and audited."
    updateUser${graphqlArguments('updateUser')}: User!
    "Makes another enabled admin the owner, in place of the signed-in owner (only the owner may); both are e-mailed and the transfer is audited. Returns the new owner."
    transferOwnership${graphqlArguments('transferOwnership')}: User!
    createRole${graphqlArguments('createRole')}: Role!
    updateRole${graphqlArguments('updateRole')}: Role!
    deleteRole${graphqlArguments('deleteRole')}: Boolean!
    "Lets the roles see the feature; returns the ids of every role that now sees it."
    grantFeatureAccess${graphqlArguments('grantFeatureAccess')}: [ID!]!
    "Like grantFeatureAccess (which does the same), answering what changed in the roles' data access too."
    grantFeature${graphqlArguments('grantFeature')}: FeatureGrant!
    "Stops the roles from seeing the feature; returns the ids of every role that still sees it."
    revokeFeatureAccess${graphqlArguments('revokeFeatureAccess')}: [ID!]!
  }
`;

export const accessModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      me: (_s, _a, ctx) => ctx.services.access.getUser(requireUser(ctx), requireUser(ctx).userId!),
      users: (_s, _a, ctx) => ctx.services.access.listUsers(requireUser(ctx)),
      roles: (_s, _a, ctx) => ctx.services.access.listRoles(requireUser(ctx)),
      featureRoles: (_s, args, ctx) => ctx.services.access.featureRoles(requireUser(ctx), argsFor('featureRoles', args).featureId),
    },
    Mutation: {
      createUser: (_s, args, ctx) => ctx.services.access.createUser(requireUser(ctx), argsFor('createUser', args)),
      changeMyPassword: async (_s, args, ctx) => {
        const session = await ctx.services.access.changeOwnPassword(requireUser(ctx), argsFor('changeMyPassword', args));
        return { token: session.token, expiresIn: session.expires_in };
      },
      updateUser: (_s, args, ctx) => ctx.services.access.updateUser(requireUser(ctx), argsFor('updateUser', args)),
      transferOwnership: (_s, args, ctx) => ctx.services.access.transferOwnership(requireUser(ctx), argsFor('transferOwnership', args)),
      createRole: (_s, args, ctx) => ctx.services.access.createRole(requireUser(ctx), argsFor('createRole', args)),
      updateRole: (_s, args, ctx) => ctx.services.access.updateRole(requireUser(ctx), argsFor('updateRole', args)),
      deleteRole: (_s, args, ctx) => ctx.services.access.deleteRole(requireUser(ctx), argsFor('deleteRole', args)._id),
      grantFeatureAccess: (_s, args, ctx) => ctx.services.access.grantFeatureAccess(requireUser(ctx), argsFor('grantFeatureAccess', args)),
      grantFeature: async (_s, args, ctx) => {
        const { roleIds, dataAccess } = await ctx.services.access.grantFeature(requireUser(ctx), argsFor('grantFeature', args));
        return { roleIds, ...dataAccess };
      },
      revokeFeatureAccess: (_s, args, ctx) => ctx.services.access.revokeFeatureAccess(requireUser(ctx), argsFor('revokeFeatureAccess', args)),
    },
  },
};
