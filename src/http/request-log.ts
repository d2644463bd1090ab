import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Line = Parameters<FastifyBaseLogger['info']>;

/**
 * `request.log`: every line a request writes (ours and Fastify's own) carries its `reqId`,
 * but the pino child holding it is built on the request's first line, not per request.
 * whoami and verify normally write none, and a child serializes its bindings when made.
 */
class RequestLog {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #log(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.options.level ?? this.parent.level;
  }
  fatal(...line: Line): void {
    this.#log().fatal(...line);
  }
  error(...line: Line): void {
    this.#log().error(...line);
  }
  warn(...line: Line): void {
    this.#log().warn(...line);
  }
  info(...line: Line): void {
    this.#log().info(...line);
  }
  debug(...line: Line): void {
    this.#log().debug(...line);
  }
  trace(...line: Line): void {
    this.#log().trace(...line);
  }
  silent(): void {
    // pino's own `silent` writes nothing either.
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory` (`options` carries a route's own `logLevel`, if any). */
export function requestLog(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new RequestLog(logger, bindings, options);
}
