/**
 * The one error type. Anything thrown as AppError becomes the envelope of decisions.md §1:
 * { error: { code, message, ...extra } }. Everything else is a 500 INTERNAL without details.
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
}

export const badRequest = (code: string, message: string, extra?: Record<string, unknown>) =>
  new AppError(400, code, message, extra);
export const notFound = (what = 'Resource') => new AppError(404, 'NOT_FOUND', `${what} not found`);
export const forbidden = (code: string, message: string) => new AppError(403, code, message);
export const conflict = (code: string, message: string) => new AppError(409, code, message);
export const unauthorized = (code: string, message: string) => new AppError(401, code, message);

/** 429 with Retry-After equal to retryAfterSeconds (whole seconds, at least 1). */
export function tooManyRequests(
  code: string,
  message: string,
  retryAfterSeconds: number,
  headers: Record<string, string> = {},
): AppError {
  const s = Math.max(1, Math.ceil(retryAfterSeconds));
  return new AppError(429, code, message, { retryAfterSeconds: s }, { ...headers, 'Retry-After': String(s) });
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
