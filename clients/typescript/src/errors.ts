/** Every failure the client reports: an HTTP error envelope, a network failure or an unreadable answer. */
export class SvcError extends Error {
  /** HTTP status; 0 when no answer arrived (network error, timeout). */
  readonly status: number;
  /** The envelope's `error.code` (e.g. POST_COOLDOWN_ACTIVE), or NETWORK_ERROR / TIMEOUT / INVALID_RESPONSE. */
  readonly code: string;
  /** Seconds the server asked to wait (429 / 503), from `retryAfterSeconds` or the Retry-After header. */
  readonly retryAfterSeconds: number | null;
  /** Validation details of a 400 VALIDATION_FAILED: `[{path, message}]`. */
  readonly details: { path?: string; message?: string }[] | null;
  /** The whole `error` object of the envelope (extra fields such as requiredScope). */
  readonly body: Record<string, unknown> | null;
  readonly method: string;
  readonly path: string;
  readonly requestId: string | null;

  constructor(init: {
    status: number;
    code: string;
    message: string;
    retryAfterSeconds?: number | null;
    details?: { path?: string; message?: string }[] | null;
    body?: Record<string, unknown> | null;
    method: string;
    path: string;
    requestId?: string | null;
    cause?: unknown;
  }) {
    super(
      `${init.method} ${init.path} → ${init.status || 'no response'} ${init.code}: ${init.message}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'SvcError';
    this.status = init.status;
    this.code = init.code;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.details = init.details ?? null;
    this.body = init.body ?? null;
    this.method = init.method;
    this.path = init.path;
    this.requestId = init.requestId ?? null;
  }

  get isRateLimited(): boolean {
    return this.status === 429;
  }
}

/** A webhook request whose signature, timestamp or headers do not verify. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}
