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

/** Structured JSON logs. Secrets never reach here: redact the usual carriers anyway. */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        // err.rawPacket: the bytes of a request Node's parser refused (API key and cookie included).
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'err.rawPacket',
          '*.password',
          '*.apiKey',
          '*.secret',
          '*.key',
          '*.token',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }),
  );
}

/**
 * A warning for an outage that fails every call while it lasts: at most one line per `everyMs`
 * (default 5 s), so a Redis outage under load does not flood the log.
 */
export function throttledWarning(log: Logger | undefined, message: string, everyMs = 5000): (e: unknown) => void {
  let last = 0;
  return (e) => {
    const now = Date.now();
    if (now - last < everyMs) return;
    last = now;
    log?.warn({ err: { message: (e as Error)?.message } }, message);
  };
}

/** The fields of the one access-log line per request. */
export interface RequestLine {
  requestId: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

export interface AccessLog {
  request(line: RequestLine): void;
}

/**
 * The access log: one line per request, in the same format and to the same destination as
 * `log`'s lines at level info ({"level":30,"time":…,"requestId":…,"method":…,"path":…,"status":…,
 * "ms":…,"msg":"request"}). Its fields are fixed and never carry a secret, so the line is written
 * by hand: through pino (serializers, redaction, escaping loop) it cost about 3.5 µs, a tenth of
 * a cached read's whole CPU; JSON.stringify of the two free-text fields keeps it valid JSON.
 */
export function requestLogger(log: Logger): AccessLog {
  const stream = (log as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  return {
    request(l) {
      if (!log.isLevelEnabled('info')) return;
      stream.write(
        `{"level":30,"time":${Date.now()},"requestId":${JSON.stringify(l.requestId)},"method":${JSON.stringify(l.method)},"path":${JSON.stringify(l.path)},"status":${l.status},"ms":${l.ms},"msg":"request"}\n`,
      );
    },
  };
}
