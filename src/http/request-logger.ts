import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn } from 'pino';

/**
 * The logger of one request (Fastify's `request.log`): the pino child with the request id bound,
 * made when the request first logs through it. Fastify makes that child for every request, and
 * most never log through it (the "request answered" line names the request id itself): making it
 * copied and serialised its bindings on each request (docs/benchmarks.md, session 17).
 */
export class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): LevelWithSilentOrString {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real.level = level;
  }

  fatal: LogFn = (...args: Parameters<LogFn>) => this.real.fatal(...args);
  error: LogFn = (...args: Parameters<LogFn>) => this.real.error(...args);
  warn: LogFn = (...args: Parameters<LogFn>) => this.real.warn(...args);
  info: LogFn = (...args: Parameters<LogFn>) => this.real.info(...args);
  debug: LogFn = (...args: Parameters<LogFn>) => this.real.debug(...args);
  trace: LogFn = (...args: Parameters<LogFn>) => this.real.trace(...args);
  silent: LogFn = () => {};

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: see RequestLogger. */
export function requestLogger(this: unknown, parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options);
}
