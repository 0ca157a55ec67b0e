import type { Config } from '../config.js';
import { startServer } from '../server.js';

/** `trellis serve`: runs until SIGTERM/SIGINT, then drains requests and closes the database. */
/** How long a stopping server answers with `Connection: close` before it closes. */
const DRAIN_MS = 300;

export async function serve(config: Config): Promise<number> {
  const server = await startServer(config);
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
