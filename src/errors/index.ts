import { ERRORS, type ErrorCode } from './codes';

export { ERRORS, statusOf, type ErrorCode } from './codes';

/**
 * The one error type. Anything thrown as AppError becomes the envelope
 * { error: { code, message, ...extra } } with the status of its code (codes.ts). Everything else
 * is a 500 INTERNAL without details.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  /**
   * `status` is the code's own; only a status another layer already chose for the client's
   * mistake (Koa's 4xx passed on as BAD_REQUEST) is given here.
   */
  constructor(
    code: ErrorCode,
    message: string = ERRORS[code].message,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    status: number = ERRORS[code].status,
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
}

export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', `${what} not found`);

/**
 * A 429 code with Retry-After equal to retryAfterSeconds (whole seconds, at least 1); without a
 * message of its own, the code's message with the wait.
 */
export function tooManyRequests(
  code: ErrorCode,
  retryAfterSeconds: number,
  headers: Record<string, string> = {},
  message?: string,
): AppError {
  const s = Math.max(1, Math.ceil(retryAfterSeconds));
  const text = message ?? `${ERRORS[code].message}; retry after ${s} s`;
  return new AppError(code, text, { retryAfterSeconds: s }, { ...headers, 'Retry-After': String(s) });
}

/** Postgres/pg errors that mean "the database is unreachable right now" → 503, never 500. */
export function isDatabaseUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  const codes = [
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'EPIPE',
    '57P01',
    '57P02',
    '57P03',
    '08000',
    '08001',
    '08003',
    '08006',
    '53300',
  ];
  if (e.code && codes.includes(e.code)) return true;
  const m = e.message || '';
  return /Connection terminated|connection timeout|Knex: Timeout acquiring a connection|terminating connection|the database system is (starting up|shutting down)|Client has encountered a connection error/i.test(
    m,
  );
}
