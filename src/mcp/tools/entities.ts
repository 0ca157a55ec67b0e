import { z } from 'zod';
import { CREATE, READ, UPDATE, defineTool } from './types.js';
import { addTableFieldInput, createTableInput, entityOutput, fieldOutput, tableRefInput, updateTableInput } from '../../tables/schema.js';
import { plain } from './shared.js';

export const listEntities = defineTool({
  name: 'list_entities',
  scope: 'config:read',
  title: 'List entities (tables)',
  description: 'Lists the application\'s tables with their field names and types. Each table gets generated GraphQL CRUD operations.',
  input: z.object({}),
  output: z.object({
    entities: z.array(
      // Each table as get_entity_details answers it, with only its fields' names, types and whether required.
      entityOutput.pick({ _id: true, name: true, description: true }).extend({ fields: z.array(fieldOutput.pick({ name: true, type: true, required: true })) }),
    ),
  }),
  annotations: READ,
  cacheable: true,
  async run(services, principal) {
    const tables = await services.tables.listTables(principal);
    return {
      data: {
        entities: tables.map((t) => ({
          _id: t._id,
          name: t.name,
          description: t.description,
          fields: t.fields.map((f) => ({ name: f.name, type: f.type, required: f.required })),
        })),
      },
    };
  },
});

export const getEntityDetails = defineTool({
  name: 'get_entity_details',
  aliases: { tableId: '_id' },
  scope: 'config:read',
  title: 'Get an entity (table)',
  description: 'Returns one table with every field (type, required, unique, reference target) and each non-admin role\'s data access: what it may read, create, update and delete of the records.',
  input: tableRefInput,
  output: z.object({ entity: entityOutput }),
  annotations: READ,
  cacheable: true,
  async run(services, principal, args) {
    return { data: { entity: plain(await services.tables.getTable(principal, args._id)) } };
  },
});

export const createTable = defineTool({
  name: 'create_table',
  scope: 'tables:write',
  title: 'Create a table',
  description:
    'Creates a table with fields. The name becomes GraphQL names (e.g. Orders -> updateOrders), so use PascalCase letters and digits. ' +
    "Its records start readable and writable by your role only (admins reach all); `access` (needs roles:write) sets other roles' rules.",
  input: createTableInput,
  output: z.object({ entity: entityOutput }),
  annotations: CREATE,
  async run(services, principal, args) {
    return { data: { entity: plain(await services.tables.createTable(principal, args)) } };
  },
});

export const updateTable = defineTool({
  name: 'update_table',
  aliases: { tableId: '_id' },
  scope: 'tables:write',
  title: 'Update table metadata',
  description: "Renames a table or changes its description. Data and fields are kept. `access` (needs roles:write) sets roles' data-access rules on its records.",
  input: updateTableInput,
  output: z.object({ entity: entityOutput }),
  annotations: UPDATE,
  async run(services, principal, args) {
    return { data: { entity: plain(await services.tables.updateTable(principal, args)) } };
  },
});

export const addTableField = defineTool({
  name: 'add_table_field',
  aliases: { _id: 'tableId' },
  scope: 'tables:write',
  title: 'Add a field to a table',
  description: 'Adds one field to a table. A required field can only be added to a table without rows.',
  input: addTableFieldInput,
  output: z.object({ entity: entityOutput }),
  annotations: CREATE,
  async run(services, principal, args) {
    return { data: { entity: plain(await services.tables.addTableField(principal, args)) } };
  },
});
