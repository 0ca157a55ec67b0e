import { describe, expect, it } from 'vitest';
import type { RecordOutput } from './record-schema.js';
import { RecordVersions } from './record-versions.js';

function entry(id: string, version: string) {
  const record = { _id: id, _createdAt: '', _updatedAt: '', _createdBy: null, _updatedBy: null } as RecordOutput;
  return { record, version };
}

describe('RecordVersions', () => {
  it('remembers a record per table and generation', () => {
    const versions = new RecordVersions();
    versions.set(1, 'orders', entry('r1', '100'));
    expect(versions.get(1, 'orders', 'r1')?.version).toBe('100');
    expect(versions.get(1, 'invoices', 'r1')).toBeUndefined();
    expect(versions.get(2, 'orders', 'r1')).toBeUndefined();
  });

  it('forgets everything when a newer configuration generation writes, and ignores writes of an older one', () => {
    const versions = new RecordVersions();
    versions.set(1, 'orders', entry('r1', '100'));
    versions.set(2, 'orders', entry('r2', '200'));
    expect(versions.size).toBe(1);
    versions.set(1, 'orders', entry('r3', '300'));
    expect(versions.get(2, 'orders', 'r2')?.version).toBe('200');
    expect(versions.get(1, 'orders', 'r3')).toBeUndefined();
    expect(versions.size).toBe(1);
  });

  it('keeps at most its maximum, dropping the entry written longest ago', () => {
    const versions = new RecordVersions(3);
    for (const id of ['a', 'b', 'c']) versions.set(1, 't', entry(id, id));
    versions.set(1, 't', entry('a', 'a2'));
    versions.set(1, 't', entry('d', 'd'));
    expect(versions.size).toBe(3);
    expect(versions.get(1, 't', 'b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((id) => versions.get(1, 't', id)?.version)).toEqual(['a2', 'c', 'd']);
  });

  it('forgets a record on delete', () => {
    const versions = new RecordVersions();
    versions.set(1, 't', entry('a', '1'));
    versions.delete('t', 'a');
    expect(versions.get(1, 't', 'a')).toBeUndefined();
  });
});
