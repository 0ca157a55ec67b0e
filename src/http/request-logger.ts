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

  // Methods, not arrow functions: a logger is made for every request, and its methods are shared.
  fatal(...args: Parameters<LogFn>): void {
    this.real.fatal(...args);
  }

  error(...args: Parameters<LogFn>): void {
    this.real.error(...args);
  }

  warn(...args: Parameters<LogFn>): void {
    this.real.warn(...args);
  }

  info(...args: Parameters<LogFn>): void {
    this.real.info(...args);
  }

  debug(...args: Parameters<LogFn>): void {
    this.real.debug(...args);
  }

  trace(...args: Parameters<LogFn>): void {
    this.real.trace(...args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: see RequestLogger. */
export function requestLogger(this: unknown, parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options);
}
