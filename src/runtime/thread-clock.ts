import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The CPU time the calling thread has run, in milliseconds, or undefined where it cannot be read.
 * Node has no per-thread CPU clock (`process.threadCpuUsage` came in Node 23); on Linux the kernel
 * keeps one per thread in `/proc/thread-self/schedstat` (its first field, in nanoseconds). A read
 * costs 2-3 microseconds: the sandbox reads it when a run starts, and again only when the wall
 * clock says the run has spent its budget (see SandboxRun.overBudget).
 */
export type ThreadClock = () => number | undefined;

const SCHEDSTAT = '/proc/thread-self/schedstat';

/**
 * A ThreadClock for the thread that calls it first (each thread opens its own file: the path names
 * the thread that opens it). Undefined on a system without the file.
 */
export function threadCpuClock(): ThreadClock | undefined {
  let fd: number;
  try {
    fd = openSync(SCHEDSTAT, 'r');
  } catch {
    return undefined;
  }
  const buffer = Buffer.alloc(64);
  const read: ThreadClock = () => {
    try {
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      const end = buffer.indexOf(32);
      const nanoseconds = Number(buffer.toString('latin1', 0, end > 0 && end < length ? end : length));
      return Number.isFinite(nanoseconds) ? nanoseconds / 1e6 : undefined;
    } catch {
      return undefined;
    }
  };
  if (read() === undefined) {
    closeSync(fd);
    return undefined;
  }
  return read;
}
