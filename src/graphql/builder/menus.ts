import type { GraphQLModule } from '../module.js';
import { requireUser } from './access.js';
import { argsFor, graphqlArguments, graphqlInput } from './operation-args.js';
import { graphqlObject } from './output-types.js';

const typeDefs = /* GraphQL */ `
  ${graphqlObject('MenuEntry')}

  ${graphqlObject('Menu')}

  type MenuUpsert {
    menu: Menu!
    "True when the menu did not exist before."
    created: Boolean!
  }

  ${graphqlInput('MenuEntryInput')}

  extend type Query {
    "Navigation menus ordered by position, then name."
    menus: [Menu!]!
  }

  extend type Mutation {
    "Creates the menu, or replaces the entries of the menu with the same name."
    upsertMenu${graphqlArguments('upsertMenu')}: MenuUpsert!
    deleteMenu${graphqlArguments('deleteMenu')}: Boolean!
  }
`;

export const menusModule: GraphQLModule = {
  typeDefs,
  resolvers: {
    Query: {
      menus: (_s, _a, ctx) => ctx.services.menus.listMenus(requireUser(ctx)),
    },
    Mutation: {
      upsertMenu: (_s, args, ctx) => ctx.services.menus.upsertMenu(requireUser(ctx), argsFor('upsertMenu', args)),
      deleteMenu: (_s, args, ctx) => ctx.services.menus.deleteMenu(requireUser(ctx), argsFor('deleteMenu', args)),
    },
  },
};
