import type { PlatformContext } from '../context.js';
import type { Db } from './index.js';

/**
 * Runs a configuration write in one transaction, then tells every replica that configuration
 * changed (after the commit, so no cache can pick up the state before it).
 */
export async function writeTransaction<T>(ctx: PlatformContext, work: (trx: Db) => Promise<T>): Promise<T> {
  const result = await ctx.db.transaction().execute(work);
  await ctx.changes.publish('config');
  return result;
}
