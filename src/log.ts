import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Log lines are buffered (up to LOG_BUFFER_BYTES, flushed at least every LOG_FLUSH_MS and on
 * exit, including process.exit): one write per few dozen request lines instead of one per line,
 * which under load is a measurable share of a request's cost. A SIGKILL can lose the last
 * LOG_FLUSH_MS of lines.
 */
export const LOG_BUFFER_BYTES = 4096;
export const LOG_FLUSH_MS = 250;

const requestLoggers = new WeakMap<Logger, Logger>();

/** Structured JSON logs. Secrets never reach here: redact the usual carriers anyway. */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.apiKey', '*.secret', '*.key', '*.token'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}

/**
 * The access-log sibling of `log`: same level and destination, without redaction, for the one
 * line per request whose fields are fixed (request id, method, path without query, status,
 * duration) and never carry a secret. Redaction scans every logged object; skipping it there
 * keeps the per-request line cheap.
 */
export function requestLogger(log: Logger): Logger {
  let r = requestLoggers.get(log);
  if (!r) {
    r = pino({ level: log.level, base: undefined }, (log as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]);
    requestLoggers.set(log, r);
  }
  return r;
}
