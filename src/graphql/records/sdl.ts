import { FILTER_OPERATORS, SORTABLE_TYPES } from '../../tables/record-query.js';
import { SYSTEM_FIELDS, type RecordField, type RecordTable } from '../../tables/record-schema.js';
import type { FieldType } from '../../tables/schema.js';
import type { RecordTypeNames } from './names.js';

const SCALARS: Record<FieldType, string> = {
  text: 'String',
  number: 'Float',
  boolean: 'Boolean',
  date: 'Date',
  datetime: 'DateTime',
  json: 'JSON',
  reference: 'ID',
  'multi-reference': '[ID!]',
};

const FILTER_TYPES: Record<FieldType, string> = {
  text: 'StringFilter',
  number: 'FloatFilter',
  boolean: 'BooleanFilter',
  date: 'DateFilter',
  datetime: 'DateTimeFilter',
  json: 'JSONFilter',
  reference: 'IDFilter',
  'multi-reference': 'IDListFilter',
};

const SYSTEM_OUTPUT_AFTER_FIELDS = `  _createdAt: DateTime!
  _updatedAt: DateTime!
  "The user who created the record (null for an integration acting without x-userid)."
  _createdBy: ID
  _updatedBy: ID`;

/** Names GraphQL does not accept as enum values. */
const NOT_ENUM_VALUES = new Set(['true', 'false', 'null']);

function filterInput(name: string, scalar: string, type: FieldType): string {
  const operators = FILTER_OPERATORS[type].map((operator) => {
    if (operator === 'isNull') return '  isNull: Boolean';
    if (operator === 'in') return `  in: [${scalar}!]`;
    return `  ${operator}: ${type === 'multi-reference' ? 'ID' : scalar}`;
  });
  return `input ${name} {\n${operators.join('\n')}\n}`;
}

/** Scalars, enums and filter inputs every table's types share. */
export const SHARED_RECORD_TYPE_DEFS = /* GraphQL */ `
"A calendar date, YYYY-MM-DD."
scalar Date

enum SortDirection {
  ASC
  DESC
}

"Text: contains is a case-insensitive substring match."
${filterInput('StringFilter', 'String', 'text')}

${filterInput('FloatFilter', 'Float', 'number')}

${filterInput('BooleanFilter', 'Boolean', 'boolean')}

${filterInput('DateFilter', 'Date', 'date')}

${filterInput('DateTimeFilter', 'DateTime', 'datetime')}

${filterInput('IDFilter', 'ID', 'reference')}

"Multi-reference: contains matches records whose array holds the _id."
${filterInput('IDListFilter', 'ID', 'multi-reference')}

${filterInput('JSONFilter', 'JSON', 'json')}
`;

function outputField(field: RecordField, hidden: boolean): string {
  return `  ${field.name}: ${SCALARS[field.type]}${field.required && !hidden ? '!' : ''}`;
}

function sortFields(table: RecordTable): string[] {
  const fields = table.fields.filter((field) => SORTABLE_TYPES.has(field.type) && !NOT_ENUM_VALUES.has(field.name));
  return [...Object.keys(SYSTEM_FIELDS), ...fields.map((field) => field.name)];
}

/** The SDL of one table's types and operations. */
export function recordTypeDefs(table: RecordTable, names: RecordTypeNames, hidden: ReadonlySet<string> = new Set()): string {
  const hasFields = table.fields.length > 0;
  const filterFields = [
    ...Object.entries(SYSTEM_FIELDS).map(([name, system]) => `  ${name}: ${FILTER_TYPES[system.type]}`),
    ...table.fields.map((field) => `  ${field.name}: ${FILTER_TYPES[field.type]}`),
  ];
  const dataArgument = (required: boolean) => (hasFields ? `data: ${names.input}${required ? '!' : ''}` : '');
  return /* GraphQL */ `
"A record of the application table ${table.name}."
type ${names.type} {
  _id: ID!
${[...table.fields.map((field) => outputField(field, hidden.has(`${table.id}.${field.name}`))), SYSTEM_OUTPUT_AFTER_FIELDS].join('\n')}
}
${
  hasFields
    ? `
"Field values of ${article(table.name)} ${table.name} record, all optional: create needs the required ones, update changes only those given (null clears)."
input ${names.input} {
${table.fields.map((field) => `  ${field.name}: ${SCALARS[field.type]}`).join('\n')}
}
`
    : ''
}
"Conditions on ${table.name} records; conditions of one object must all hold."
input ${names.filter} {
  _and: [${names.filter}!]
  _or: [${names.filter}!]
${filterFields.join('\n')}
}

enum ${names.sortField} {
${sortFields(table).map((name) => `  ${name}`).join('\n')}
}

input ${names.sort} {
  field: ${names.sortField}!
  direction: SortDirection = ASC
}

"A page of ${table.name} records and how many match in all."
type ${names.page} {
  items: [${names.type}!]!
  total: Int!
}

extend type Query {
  "${table.name} records: filter, sort (then _id), limit (default 50, at most 500) and offset."
  ${names.list}(filter: ${names.filter}, sort: [${names.sort}!], limit: Int = 50, offset: Int = 0): ${names.page}!
  "The ${table.name} record with this _id, or null."
  ${names.get}(Id: ID!): ${names.type}
}

extend type Mutation {
  "Creates ${article(table.name)} ${table.name} record; its _id is generated."
  ${names.create}${hasFields ? `(${dataArgument(true)})` : ''}: ${names.type}!
  "Changes the given fields of ${article(table.name)} ${table.name} record."
  ${names.update}(Id: ID!${hasFields ? `, ${dataArgument(false)}` : ''}): ${names.type}!
  "Deletes ${article(table.name)} ${table.name} record."
  ${names.delete}(Id: ID!): Boolean!
}
`;
}

/** `an` before a vowel sound as written ("an Orders record"), `a` otherwise. */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
