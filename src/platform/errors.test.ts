import { describe, expect, it } from 'vitest';
import { toTrellisError } from './errors.js';

/** Errors as the PostgreSQL drivers raise them (pg and PGlite): a SQLSTATE code and a message that may name files. */
const driverError = (code: string | undefined, message: string) => Object.assign(new Error(message), code ? { code } : {});

describe('toTrellisError', () => {
  it.each([
    ['a table that cannot grow', driverError('53100', 'could not extend file "base/5/16385": No space left on device')],
    ['a transaction-status file that cannot grow', driverError('53100', 'could not access status of transaction 0')],
  ])('turns a full disk (%s) into a 507 that names no file', (_, error) => {
    const trellis = toTrellisError(error);
    expect(trellis).toMatchObject({ code: 'INSUFFICIENT_STORAGE', status: 507, message: "The database's disk is full: changes cannot be saved until space is freed" });
    expect(JSON.stringify({ message: trellis.message, details: trellis.details })).not.toMatch(/base\/|No space/);
  });

  it.each([
    ['the server shutting down', driverError('57P01', 'terminating connection due to administrator command')],
    ['the server starting up', driverError('57P03', 'the database system is starting up')],
    ['a refused connection', driverError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a connection lost during a query', driverError(undefined, 'Connection terminated unexpectedly')],
    ['a connection lost before the next query', driverError(undefined, 'Client has encountered a connection error and is not queryable')],
  ])('turns %s into a 503 to retry', (_, error) => {
    expect(toTrellisError(error)).toMatchObject({ code: 'UNAVAILABLE', status: 503, details: { retryAfter: 1 } });
  });

  it('hides anything else behind a 500 without its message', () => {
    expect(toTrellisError(driverError('XX000', 'internal at /srv/app/file.ts:1'))).toMatchObject({ code: 'INTERNAL', status: 500, message: 'Internal error' });
  });
});
