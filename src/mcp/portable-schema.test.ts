import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { portableJsonSchema, withPortableJsonSchema } from './portable-schema.js';

describe('portableJsonSchema', () => {
  it('writes a nullable value as the value alone, keeping the description of the union', () => {
    expect(portableJsonSchema({ description: 'a label', anyOf: [{ type: 'string', maxLength: 5 }, { type: 'null' }] })).toEqual({ description: 'a label', type: 'string', maxLength: 5 });
    expect(portableJsonSchema({ type: ['boolean', 'null'] })).toEqual({ type: 'boolean' });
  });

  it('keeps the richest branch of a union of short and full forms', () => {
    const level = { type: 'string', enum: ['ALL', 'NONE'] };
    const full = { type: 'object', properties: { level, filter: { anyOf: [{ type: 'object' }, { type: 'null' }] } } };
    expect(portableJsonSchema({ anyOf: [level, full] })).toEqual({ type: 'object', properties: { level, filter: { type: 'object' } } });
  });

  it('leaves values alone: enums, required lists, defaults; but a property named required is a schema', () => {
    const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string', enum: ['a', null] }, required: { type: ['boolean', 'null'], default: null } } };
    expect(portableJsonSchema(schema)).toEqual({ type: 'object', required: ['name'], properties: { name: { type: 'string', enum: ['a'] }, required: { type: 'boolean', default: null } } });
  });

  it('advertises the portable form while validating with the zod schema, null included', async () => {
    const schema = withPortableJsonSchema(z.object({ label: z.string().nullish() }) as never);
    expect(schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' })).toMatchObject({ properties: { label: { type: 'string' } } });
    expect(await schema['~standard'].validate({ label: null })).toEqual({ value: { label: null } });
    expect(await schema['~standard'].validate({ label: 5 })).toHaveProperty('issues');
  });
});
