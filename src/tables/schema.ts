import { z } from 'zod';
import { confirmTrue, idSchema, identifierSchema, recordRef } from '../platform/validation.js';

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

const fieldName = identifierSchema.refine((name) => !RESERVED_FIELD_NAMES.has(name.toLowerCase()), {
  message: 'is a reserved name (a PostgreSQL system column or a property every JavaScript object has): choose another',
});

export const fieldInput = z
  .object({
    name: fieldName,
    type: z.enum(FIELD_TYPES, { message: `must be one of ${FIELD_TYPES.join(', ')}` }),
    required: flag,
    unique: flag,
    referenceTableId: idSchema.nullish().describe("reference and multi-reference only: the referenced table's _id or name (in create_table, the new table's own name for a self-reference)"),
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

export const createTableInput = z
  .object({
    name: identifierSchema.describe('Letters, digits and _; starts with a letter; unique. It becomes GraphQL names (Orders -> listOrders, updateOrders)'),
    description,
    fields: z
      .array(fieldInput)
      .max(MAX_TABLE_FIELDS, `must have at most ${MAX_TABLE_FIELDS} fields`)
      .nullish()
      .transform((fields) => fields ?? []),
  })
  .superRefine((table, ctx) => {
    const seen = new Set<string>();
    table.fields.forEach((field, index) => {
      const key = field.name.toLowerCase();
      if (seen.has(key)) {
        ctx.addIssue({ code: 'custom', path: ['fields', index, 'name'], message: `repeats the field name '${field.name}'` });
      }
      seen.add(key);
    });
  });

export const updateTableInput = z.object({
  _id: recordRef('table'),
  name: identifierSchema.optional(),
  description: z.string().max(1000, 'must be at most 1000 characters').optional(),
});

export const addTableFieldInput = z.object({
  tableId: recordRef('table'),
  field: fieldInput,
});

export const updateTableFieldInput = z.object({
  tableId: recordRef('table'),
  /** The field's _id or name. */
  field: idSchema,
  description: z.string().max(1000, 'must be at most 1000 characters'),
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

export type DeleteTableInput = z.input<typeof deleteTableInput>;
export type UpdateTableFieldInput = z.input<typeof updateTableFieldInput>;
