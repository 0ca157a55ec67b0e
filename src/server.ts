import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import { ensureApplication, type BootstrapResult } from './access/bootstrap.js';
import { startRetention } from './audit/retention.js';
import type { Config } from './config.js';
import { registerGraphQLRoute } from './graphql/route.js';
import { registerMcpRoute } from './mcp/route.js';
import { registerAccessRoutes } from './http/access-routes.js';
import { registerCors } from './http/cors.js';
import { registerTokenRoute } from './http/token-route.js';
import { registerCliRoute } from './http/cli-route.js';
import { registerCompression } from './http/compression.js';
import { registerHealthRoutes } from './http/health-routes.js';
import { registerMetricsRoute } from './http/metrics-route.js';
import { registerWebhookRoute } from './http/webhook-route.js';
import { registerWebRoutes } from './http/web-routes.js';
import { fromFastifyError } from './http/errors.js';
import { ChangeBus } from './platform/change-bus.js';
import { SecretBox } from './platform/crypto.js';
import type { PlatformContext } from './platform/context.js';
import { acquireLock, dataDirSecret } from './platform/data-dir.js';
import { openDatabase, type DatabaseHandle } from './platform/db/index.js';
import { TrellisError, errorBody } from './platform/errors.js';
import { assertJsonDepth } from './platform/json.js';
import { BODY_LIMIT } from './platform/limits.js';
import { startMailSender } from './platform/mail.js';
import { prettyDestination, resolveLogFormat, type LogFormat } from './platform/log-format.js';
import { censoringBindings, censorLogRecord } from './platform/log-redaction.js';
import { requestLogger } from './http/request-logger.js';
import { Metrics } from './platform/metrics.js';
import { createServices, type Services } from './services.js';

export { BODY_LIMIT } from './platform/limits.js';

export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly services: Services;
  readonly bootstrap: BootstrapResult;
  /**
   * Starts a graceful stop: for `ms`, every answer carries `Connection: close`, so that clients open
   * a new connection for their next request (refused once the server has closed) instead of sending
   * it on a kept-alive one the server is about to close. Then call `close()`.
   */
  drain(ms: number): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Told what a first start is doing (creating the embedded database takes seconds to a minute). */
  onProgress?: (message: string) => void;
}

/** Opens the database, creates the application on first start, and listens. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config);
  const lock = config.databaseUrl ? undefined : acquireLock(config.dataDir);
  let database: DatabaseHandle | undefined;
  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, diskReserveMb: config.diskReserveMb, onProgress: options.onProgress });
    const { ctx, bootstrap } = await createContext(config, database, logger);
    await ctx.changes.listen();
    const services = createServices(ctx);
    const app = await buildHttpServer(services, logger, lock?.token);
    const draining = { on: false };
    app.addHook('onSend', async (_request, reply) => {
      if (draining.on) reply.header('connection', 'close');
    });
    await app.listen({ port: config.port, host: config.host });
    const url = listenUrl(app, config);
    lock?.publish(url);
    const retention = startRetention(ctx);
    const mailSender = await startMailSender(ctx);
    const opened = database;
    return {
      url,
      app,
      services,
      bootstrap,
      drain: async (ms: number) => {
        draining.on = true;
        await new Promise((resolve) => setTimeout(resolve, ms));
      },
      close: async () => {
        // In-flight requests finish first; a connection still open after CLOSE_GRACE_MS (a client
        // that stopped reading a streamed, compressed answer) is cut, so that a stop never hangs.
        const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        cut.unref();
        await app.close();
        clearTimeout(cut);
        retention.stop();
        await mailSender?.stop();
        await services.hookRuntime.close();
        await opened.close();
        lock?.release();
      },
    };
  } catch (error) {
    await database?.close().catch(() => {});
    lock?.release();
    throw error;
  }
}

/** Opens the database and services without listening: for CLI commands on a folder no server holds. */
export async function openServices(config: Config, logger: Logger = createLogger(config)) {
  const lock = config.databaseUrl ? undefined : acquireLock(config.dataDir);
  try {
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, diskReserveMb: config.diskReserveMb });
    const { ctx, bootstrap } = await createContext(config, database, logger);
    return {
      services: createServices(ctx),
      bootstrap,
      close: async () => {
        await database.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

async function createContext(config: Config, database: DatabaseHandle, logger: Logger) {
  const bootstrap = await ensureApplication(database.db, config);
  const ctx: PlatformContext = {
    config,
    database,
    db: database.db,
    secretBox: new SecretBox(deploymentSecret(config)),
    appId: bootstrap.appId,
    logger,
    changes: new ChangeBus(database, logger),
    metrics: new Metrics(database),
  };
  return { ctx, bootstrap };
}

/**
 * The process's logger: JSON lines on standard output (pino), or readable lines when
 * TRELLIS_LOG_FORMAT is pretty (or auto, the default, and `out` is a terminal). A CLI command
 * passes its own output.
 */
export function createLogger(config: Config, out: LogOutput = process.stdout): Logger {
  // Secrets in logged objects are censored by censorLogRecord, not by pino's `redact` (see log-redaction.ts).
  const options = { level: config.logLevel, formatters: { log: censorLogRecord } };
  // Standard output pino writes by itself (sonic-boom); another output (a CLI command's) as given.
  const pretty = resolveLogFormat(config.logFormat, out.isTTY === true) === 'pretty';
  const logger = pretty ? pino(options, prettyDestination(out)) : out === process.stdout ? pino(options) : pino(options, out);
  return censoringBindings(logger);
}

/** Where a logger writes its lines: standard output, or a CLI command's output. */
type LogOutput = { write(text: string): unknown; isTTY?: boolean };

function logFormatOf(config: Config): LogFormat {
  return resolveLogFormat(config.logFormat, process.stdout.isTTY === true);
}

function deploymentSecret(config: Config): string {
  if (config.secret) return config.secret;
  if (config.databaseUrl) throw new Error('TRELLIS_SECRET is required when TRELLIS_DATABASE_URL is set');
  return dataDirSecret(config.dataDir);
}

/** Fastify's compiler factory for route schemas, which no route declares (buildHttpServer). */
function noRouteSchemas(): never {
  throw new Error('A route declared a JSON schema: Trellis parses requests with zod (src/<domain>/schema.ts)');
}

/**
 * Fastify's `schemaController` option: requests are parsed with zod, never by a route's JSON schema,
 * so Fastify's Ajv and fast-json-stringify compilers are not loaded (part of every start), and a
 * route that declared a schema would fail when the server gets ready instead of being checked by a
 * second set of rules.
 */
export const NO_ROUTE_SCHEMAS = { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } };

/** How long a stop waits for open connections to finish their answers before it cuts them. */
const CLOSE_GRACE_MS = 3000;

async function buildHttpServer(services: Services, logger: Logger, cliToken: string | undefined): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT,
    trustProxy: services.ctx.config.trustProxy,
    return503OnClosing: true,
    genReqId: requestIdOf,
    childLoggerFactory: requestLogger,
    schemaController: NO_ROUTE_SCHEMAS,
  });
  observeRequests(app, services, logger);
  await registerCompression(app);
  // Every endpoint takes JSON only; anything else is a 415. Deeply nested JSON is refused before it
  // is parsed: walking or serialising it later would overflow the stack.
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    try {
      assertJsonDepth(body as string);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    parseJson(request, body as string, done);
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const trellis = fromFastifyError(error);
    // A webhook whose code fails is the hook author's failure, recorded in hook_runs, not the server's.
    if (trellis.status >= 500 && trellis.code !== 'HOOK_FAILED') request.log.error({ err: error }, 'request failed');
    if (trellis.retryAfter !== undefined) reply.header('retry-after', String(trellis.retryAfter));
    return reply.status(trellis.status).send(errorBody(trellis));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody(new TrellisError('NOT_FOUND', `No route for ${request.method} ${request.url.split('?')[0]}`))),
  );
  registerHealthRoutes(app, services);
  registerMetricsRoute(app, services);
  registerCors(app, services);
  registerAccessRoutes(app, services);
  registerTokenRoute(app, services);
  registerGraphQLRoute(app, services);
  registerMcpRoute(app, services, { requestsPerMinute: services.ctx.config.mcpRateLimit });
  registerWebhookRoute(app, services);
  registerWebRoutes(app);
  if (cliToken) registerCliRoute(app, services, cliToken);
  return app;
}

/** A caller's `x-request-id` when it is a plain token of at most 128 characters; a new UUID otherwise. */
function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(given) ? given : randomUUID();
}

/** Routes whose answers are logged at debug level: probes and scrapes would drown the log. */
const QUIET_ROUTES: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Every answer carries `x-request-id`, is counted and timed in the metrics (by route pattern, never
 * by raw path), and logs one line with the request id, method, route, path (without the query
 * string, which may hold secrets), status and duration: at info, except probes and scrapes, and in
 * the readable format (a person at a terminal) every answer below 400, which are at debug.
 */
function observeRequests(app: FastifyInstance, services: Services, logger: Logger): void {
  const { metrics } = services.ctx;
  const quietSuccesses = logFormatOf(services.ctx.config) === 'pretty';
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const seconds = reply.elapsedTime / 1000;
    metrics.httpRequests.inc({ method: request.method, route, status });
    metrics.httpDuration.observe({ method: request.method, route, status_class: `${Math.floor(status / 100)}xx` }, seconds);
    // Through the process's logger with the request id as a field: the line reads as a request
    // logger's would, without making one for each request (see RequestLogger).
    const line = { reqId: request.id, method: request.method, route, path: request.url.split('?')[0]!.slice(0, 200), status, ms: Math.round(reply.elapsedTime * 10) / 10 };
    if (QUIET_ROUTES.has(route) || (quietSuccesses && status < 400)) logger.debug(line, 'request answered');
    else logger.info(line, 'request answered');
  });
}


function listenUrl(app: FastifyInstance, config: Config): string {
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
