import { afterEach, describe, expect, it, vi } from 'vitest';
import { TrellisError } from '../errors.js';
import { DISK_RESERVE_BYTES, MIN_DISK_RESERVE_MB, diskReserveCheck } from './disk-reserve.js';

const MB = 1024 * 1024;

const WRITES = [
  'insert into "features" ("id", "name") values ($1, $2)',
  '\n          insert into hook_runs (hook_id) select hooks.id from hooks',
  'update "features" set "name" = $1 where "id" = $2',
  'delete from "user_sessions" where "expires_at" < $1',
  'create table "t_orders" ("_id" text primary key)',
  'alter table "t_orders" add column "total" double precision',
  'drop table "t_orders"',
  'with moved as (delete from "a" returning *) insert into "b" select * from moved',
];

const READS = [
  'select "id", "name" from "features" where "id" = $1',
  'select pg_notify($1, $2)',
  'select exists (select 1 from "t_orders") as found',
  'with recent as (select * from "features") select count(*) from recent',
  'begin',
  'commit',
  'rollback',
  'savepoint "sp1"',
  'release savepoint "sp1"',
  'lock table "t_orders" in access exclusive mode',
];

describe('diskReserveCheck', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(WRITES)('refuses a write with INSUFFICIENT_STORAGE while less than the reserve is free: %s', (sql) => {
    const check = diskReserveCheck(() => DISK_RESERVE_BYTES - 1);
    expect(() => check(sql)).toThrow(
      expect.objectContaining({ code: 'INSUFFICIENT_STORAGE', status: 507, message: "The database's disk is full: changes cannot be saved until space is freed" }),
    );
  });

  it.each(READS)('lets a read or a transaction statement through on a full disk: %s', (sql) => {
    const check = diskReserveCheck(() => 0);
    expect(() => check(sql)).not.toThrow();
  });

  it('lets writes through while the reserve is free', () => {
    const check = diskReserveCheck(() => DISK_RESERVE_BYTES);
    for (const sql of WRITES) expect(() => check(sql)).not.toThrow();
  });

  it.each([MIN_DISK_RESERVE_MB, 64, 1024])('holds a reserve of %i MB instead of the default: refuses a write just under it, lets it through at it', (reserveMb) => {
    const reserveBytes = reserveMb * MB;
    expect(() => diskReserveCheck(() => reserveBytes - 1, reserveBytes)(WRITES[0]!)).toThrow(expect.objectContaining({ code: 'INSUFFICIENT_STORAGE' }));
    expect(() => diskReserveCheck(() => reserveBytes, reserveBytes)(WRITES[0]!)).not.toThrow();
  });

  it('reads the free space at most every 100 ms, and writes again once space is freed', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    try {
      let free = 10 * MB;
      const freeBytes = vi.fn(() => free);
      const check = diskReserveCheck(freeBytes, 20 * MB);
      expect(() => check(WRITES[0]!)).toThrow(TrellisError);
      free = 30 * MB;
      expect(() => check(WRITES[0]!)).toThrow(TrellisError);
      expect(freeBytes).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(100);
      expect(() => check(WRITES[0]!)).not.toThrow();
      expect(freeBytes).toHaveBeenCalledTimes(2);
    } finally {
      // The worker's next test files share this module graph (isolate: false, D45).
      vi.useRealTimers();
    }
  });

  it('lets writes through when the free space cannot be read', () => {
    const check = diskReserveCheck(() => {
      throw new Error('ENOENT');
    });
    expect(() => check(WRITES[0]!)).not.toThrow();
  });
});
