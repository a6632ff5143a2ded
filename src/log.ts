import pino from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs. Secrets never reach here: redact the usual carriers anyway. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.apiKey', '*.secret', '*.key', '*.token'],
      censor: '[redacted]',
    },
  });
}
