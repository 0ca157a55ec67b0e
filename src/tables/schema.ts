import { z } from 'zod';
import { readableName, readsLike } from '../platform/names.js';
import { confirmTrue, idOutput, idSchema, identifierSchema, isoTime, recordRef } from '../platform/validation.js';
import { roleTableAccessInput, tableAccessInput, tableAccessOutput } from './access-schema.js';

export const FIELD_TYPES = ['text', 'number', 'boolean', 'date', 'datetime', 'json', 'reference', 'multi-reference'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** Field types that point at records of another (or the same) table through `referenceTableId`. */
export const REFERENCE_FIELD_TYPES: ReadonlySet<FieldType> = new Set(['reference', 'multi-reference']);

/** At most this many fields per table. */
export const MAX_TABLE_FIELDS = 200;

const description = z
  .string()
  .max(1000, 'must be at most 1000 characters')
  .nullish()
  .transform((value) => value ?? '');
const flag = z
  .boolean()
  .nullish()
  .transform((value) => value ?? false);
/** What people read for a field (a form's label, a column's header); empty: the field's name. */
const fieldLabel = readableName(100, { min: 0 }).describe("What people read for the field, e.g. 'Due date' for dueDate; empty: the name");

/**
 * A field of a table. `referenceTableId` is the `_id` (or the name) of an existing table; in
 * `createTable` the new table's own name makes a self-reference.
 */
/**
 * Field names no table may use, compared in any letter case: PostgreSQL's system columns, which
 * every table already has, and the names every JavaScript object inherits, which records, hooks
 * and clients would read from the prototype instead of the record.
 */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(
  ['oid', 'tableoid', 'xmin', 'xmax', 'cmin', 'cmax', 'ctid', ...Object.getOwnPropertyNames(Object.prototype)].map((name) => name.toLowerCase()),
);

export const fieldName = identifierSchema.refine((name) => !RESERVED_FIELD_NAMES.has(name.toLowerCase()), {
  message: 'is a reserved name (a PostgreSQL system column or a property every JavaScript object has): choose another',
});

export const fieldInput = z
  .object({
    name: fieldName,
    type: z.enum(FIELD_TYPES, { message: `must be one of ${FIELD_TYPES.join(', ')}` }),
    required: flag,
    unique: flag,
    referenceTableId: idSchema.nullish().describe("reference and multi-reference only: the referenced table's _id or name (in create_table, the new table's own name for a self-reference)"),
    label: fieldLabel.nullish().transform((value) => value ?? ''),
    description,
  })
  .superRefine((field, ctx) => {
    const isReference = REFERENCE_FIELD_TYPES.has(field.type);
    if (isReference && !field.referenceTableId) {
      ctx.addIssue({ code: 'custom', path: ['referenceTableId'], message: `is required for ${field.type} fields` });
    }
    if (!isReference && field.referenceTableId) {
      ctx.addIssue({ code: 'custom', path: ['referenceTableId'], message: 'is only allowed on reference and multi-reference fields' });
    }
  });

/**
 * Roles' data-access rules in create_table and update_table (D32). Setting them changes what roles
 * may do, so it needs `roles:write` besides `tables:write`.
 */
const accessList = z
  .array(roleTableAccessInput)
  .max(100, 'must have at most 100 entries')
  .optional()
  .describe(
    "Needs roles:write. Per non-admin role: read, create, update, delete each 'none', 'own' (records the user created), 'all' or { filter } " +
      '(the generated filter language; "$user._id", "$user.email", "$user.role" stand for the user); hiddenFields, readOnlyFields. ' +
      'A new table starts at all for the creator\'s role and none for the other roles; admins always reach every record.',
  );

export const createTableInput = z
  .object({
    name: identifierSchema.describe('Letters, digits and _; starts with a letter; unique. It becomes GraphQL names (Orders -> listOrders, updateOrders)'),
    description,
    fields: z
      .array(fieldInput)
      .max(MAX_TABLE_FIELDS, `must have at most ${MAX_TABLE_FIELDS} fields`)
      .nullish()
      .transform((fields) => fields ?? []),
    access: accessList,
  })
  .superRefine((table, ctx) => {
    // Field names that look alike (D33) are one name to a reader: `total` and `tota1`, `Id` and `ld`.
    table.fields.forEach((field, index) => {
      const first = table.fields.find((earlier, at) => at < index && readsLike(earlier.name, field.name));
      if (first) ctx.addIssue({ code: 'custom', path: ['fields', index, 'name'], message: `repeats the field name '${first.name}'` });
    });
  });

export const updateTableInput = z.object({
  _id: recordRef('table'),
  name: identifierSchema.optional(),
  description: z.string().max(1000, 'must be at most 1000 characters').optional(),
  access: accessList,
});

/** `setTableAccess`: one role's rules on one table. */
export const setTableAccessInput = z.object({
  tableId: recordRef('table'),
  roleId: idSchema,
  access: tableAccessInput,
});
export type SetTableAccessInput = z.input<typeof setTableAccessInput>;

export const addTableFieldInput = z.object({
  tableId: recordRef('table'),
  field: fieldInput,
});

/**
 * `updateTableField`: what is given changes, the rest stays. A new `type` converts the stored values
 * (see `fieldConversion`); `referenceTableId` goes with a reference type.
 */
export const updateTableFieldInput = z
  .object({
    tableId: recordRef('table'),
    field: idSchema.describe("The field's _id or name"),
    name: fieldName.optional().describe('A new name; the records keep their values'),
    label: fieldLabel.optional(),
    description: z.string().max(1000, 'must be at most 1000 characters').optional(),
    type: z.enum(FIELD_TYPES, { message: `must be one of ${FIELD_TYPES.join(', ')}` }).optional(),
    referenceTableId: idSchema.optional().describe("reference and multi-reference only: the referenced table's _id or name"),
    required: z.boolean().optional(),
    unique: z.boolean().optional(),
  })
  .superRefine((change, ctx) => {
    if (change.referenceTableId && change.type && !REFERENCE_FIELD_TYPES.has(change.type)) {
      ctx.addIssue({ code: 'custom', path: ['referenceTableId'], message: 'is only allowed on reference and multi-reference fields' });
    }
  });

/** `deleteTableField`: drops the field's column and its values in every record. */
export const deleteTableFieldInput = z.object({
  tableId: recordRef('table'),
  field: idSchema.describe("The field's _id or name"),
  confirm: confirmTrue,
});

/** `fieldUsage`: what names a table's field (or, without `field`, the table). */
export const fieldUsageInput = z.object({
  tableId: recordRef('table'),
  field: idSchema.optional().describe("The field's _id or name; without it, uses of the table"),
});

export const deleteTableInput = z.object({
  _id: recordRef('table'),
  confirm: confirmTrue,
});

export type FieldInput = z.input<typeof fieldInput>;
export type ParsedField = z.infer<typeof fieldInput>;
export type CreateTableInput = z.input<typeof createTableInput>;
export type UpdateTableInput = z.input<typeof updateTableInput>;
export type AddTableFieldInput = z.input<typeof addTableFieldInput>;
export const tableRefInput = z.object({ _id: recordRef('table') });

/** A field of a table in an answer (GraphQL's AppField). */
export const fieldOutput = z
  .object({
    _id: idOutput,
    name: z.string(),
    type: z.enum(FIELD_TYPES),
    required: z.boolean(),
    unique: z.boolean(),
    referenceTableId: idOutput.nullable().describe('The table a reference or multi-reference field points at.'),
    label: z.string().describe("What people read for the field, e.g. 'Due date' for dueDate; empty: its name"),
    description: z.string(),
  })
  .describe('A field of an application table; its column is named like the field.');

/** A table in an answer, with its fields and its roles' rules (GraphQL's AppTable). */
export const entityOutput = z
  .object({
    _id: idOutput,
    name: z.string(),
    description: z.string(),
    fields: z.array(fieldOutput).describe('Fields in position order.'),
    access: z.array(tableAccessOutput).describe('Per non-admin role: what it may read, create, update and delete of the records (NONE where no rule is set); admins reach every record'),
    createdAt: isoTime,
    updatedAt: isoTime,
  })
  .describe('An application table: metadata of a real SQL table of records.');

export type DeleteTableInput = z.input<typeof deleteTableInput>;
export type UpdateTableFieldInput = z.input<typeof updateTableFieldInput>;
export type DeleteTableFieldInput = z.input<typeof deleteTableFieldInput>;
export type FieldUsageInput = z.input<typeof fieldUsageInput>;
