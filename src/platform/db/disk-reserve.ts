import { statfsSync } from 'node:fs';
import { diskFull } from '../errors.js';

/**
 * The least room kept free on the disk of the embedded database: one 16 MB segment of its
 * write-ahead log. When PGlite (0.5) fills a segment and the disk cannot hold the next one, that
 * write fails and the next query never returns: PostgreSQL spins inside the WebAssembly, on the
 * event loop's thread, and the process answers nothing more, even once space is freed. So
 * statements that write are refused while less than the reserve is free; reads go on.
 */
export const MIN_DISK_RESERVE_MB = 16;

/** The default reserve (TRELLIS_DISK_RESERVE_MB): two segments, the second for what writes let through just above the reserve still add. */
export const DISK_RESERVE_MB = 32;

export const DISK_RESERVE_BYTES = DISK_RESERVE_MB * 1024 * 1024;

/** How long a reading of the free space is trusted: a statfs costs microseconds, a write less. */
const FREE_SPACE_TTL_MS = 100;

/** Statements that write (or may, like a CTE holding one); everything else reads or ends a transaction. */
const WRITES = /^\s*(?:insert|update|delete|merge|create|alter|drop|truncate|comment|grant|revoke|copy|vacuum|cluster|reindex|refresh)\b/i;
const CTE_WRITES = /^\s*with\b[\s\S]*\b(?:insert\s+into|update\s|delete\s+from|merge\s+into)\b/i;

/** The bytes an unprivileged process may still write on the disk that holds `folder`. */
export function freeBytesOf(folder: string): () => number {
  return () => {
    const { bavail, bsize } = statfsSync(folder);
    return bavail * bsize;
  };
}

/**
 * A check to run before each statement: throws INSUFFICIENT_STORAGE (507) for a statement that
 * writes while `freeBytes()` is under `reserveBytes` (default DISK_RESERVE_BYTES, 32 MB).
 * `freeBytes` is called at most every 100 ms; when it throws, the statement is let through (the
 * database reports what goes wrong).
 *
 * @example new PGliteDialect(pglite, { beforeQuery: diskReserveCheck(freeBytesOf(folder), 64 * 1024 * 1024) })
 */
export function diskReserveCheck(freeBytes: () => number, reserveBytes = DISK_RESERVE_BYTES): (sql: string) => void {
  let readAt = -Infinity;
  let short = false;
  return (sql) => {
    if (!WRITES.test(sql) && !CTE_WRITES.test(sql)) return;
    const now = performance.now();
    if (now - readAt >= FREE_SPACE_TTL_MS) {
      readAt = now;
      try {
        short = freeBytes() < reserveBytes;
      } catch {
        short = false;
      }
    }
    if (short) throw diskFull();
  };
}
