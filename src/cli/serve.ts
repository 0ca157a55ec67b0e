import type { Config } from '../config.js';
import { DataDirInUseError } from '../platform/data-dir.js';
import { startServer, type RunningServer } from '../server.js';

/** How long a stopping server answers with `Connection: close` before it closes. */
const DRAIN_MS = 300;

/**
 * `trellis serve`: runs until SIGTERM/SIGINT, then drains requests and closes the database. A start
 * that fails for a reason of the machine (`startFailure`) prints one line and returns 1.
 */
export async function serve(config: Config): Promise<number> {
  let server: RunningServer;
  try {
    server = await startServer(config, { onProgress: (message) => console.log(message) });
  } catch (error) {
    const reason = startFailure(error, config);
    if (reason === undefined) throw error;
    console.error(`Trellis could not start: ${reason}`);
    return 1;
  }
  const database = config.databaseUrl ? 'PostgreSQL server (TRELLIS_DATABASE_URL)' : `${config.dataDir} (embedded PostgreSQL)`;
  console.log(`Data: ${database}`);
  const owner = server.bootstrap.owner;
  if (owner) {
    console.log(`Created application '${server.bootstrap.appName}' with owner ${owner.email}`);
    if (owner.generatedPassword) {
      console.log(`Owner password (shown once, change it after signing in): ${owner.generatedPassword}`);
    }
  }
  console.log(`Trellis is listening on ${server.url}`);
  console.log(`Designer: ${server.url}/ · application page: ${server.url}/app`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      console.log(`Received ${signal}, shutting down`);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  // Answers in flight finish; clients are told to reconnect, then the server closes (D19).
  await server.drain(DRAIN_MS);
  await server.close();
  return 0;
}

/**
 * What to tell the person starting the server when the start failed for a reason of the machine
 * (the port taken or not allowed, the data folder held by another server); undefined for anything
 * else, which is a fault to show whole.
 */
function startFailure(error: unknown, config: Config): string | undefined {
  if (error instanceof DataDirInUseError) return `${error.message}. Stop that server, or give this one another folder with TRELLIS_DATA_DIR.`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return `${where} is already in use by another program. Stop it, or choose another port, for example PORT=${config.port === 3000 ? 3001 : 3000} npm start (PORT=0 picks a free one).`;
  if (code === 'EACCES') return `this user may not listen on ${where} (ports below 1024 need privileges). Choose another port with PORT, for example PORT=3000.`;
  if (code === 'EADDRNOTAVAIL') return `${config.host} is not an address of this machine. Set HOST to one of its addresses, 127.0.0.1 or 0.0.0.0.`;
  return undefined;
}
