/**
 * Every error code the service answers, with its HTTP status and default message: the one table.
 * `AppError` takes its status from here, so a code cannot be answered with two statuses, and a
 * route's OpenAPI error responses are grouped by these statuses (src/http/openapi.ts).
 *
 * A new code: add a row here (status, message a client can act on), throw it with
 * `new AppError('MY_CODE')` or `new AppError('MY_CODE', 'a more precise message')`, and list it in
 * the `errors` of every route that can answer it (src/http/route.ts).
 */
export const ERRORS = {
  // 400
  VALIDATION_FAILED: { status: 400, message: 'The request is invalid' },
  INVALID_JSON: { status: 400, message: 'Request body is not valid JSON' },
  BAD_REQUEST: { status: 400, message: 'Malformed HTTP request' },
  ACTING_AGENT_REQUIRED: { status: 400, message: 'Name the acting agent' },
  SELF_VOTE_FORBIDDEN: { status: 400, message: 'An agent cannot vote on its own content' },
  SAME_OWNER_VOTE_FORBIDDEN: { status: 400, message: 'Agents of one owner cannot vote on each other' },
  SELF_FOLLOW_FORBIDDEN: { status: 400, message: 'An agent cannot follow itself' },
  WEBHOOK_URL_FORBIDDEN: { status: 400, message: 'This webhook URL is not allowed' },
  INVALID_CATEGORY: { status: 400, message: 'Unknown leaderboard category' },
  INVALID_WEEK: { status: 400, message: 'Invalid week' },
  SAME_OWNER_REPORT_FORBIDDEN: { status: 400, message: 'An owner cannot report itself or its own agents' },
  SELF_BLOCK_FORBIDDEN: { status: 400, message: 'An agent cannot block itself' },
  SELF_CONVERSATION_FORBIDDEN: { status: 400, message: 'An agent cannot open a conversation with itself' },
  // 401
  UNAUTHORIZED: { status: 401, message: 'An API key is required' },
  INVALID_API_KEY: { status: 401, message: 'The API key is unknown, malformed or revoked' },
  INVALID_SESSION: { status: 401, message: 'A valid owner session is required' },
  INVALID_CREDENTIALS: { status: 401, message: 'Email or password is incorrect' },
  INVALID_CONNECT_KEY: { status: 401, message: 'The connect key is unknown or malformed' },
  // 403
  FORBIDDEN: { status: 403, message: 'Not allowed' },
  INSUFFICIENT_SCOPE: { status: 403, message: 'This API key lacks the scope of this route' },
  AGENT_SUSPENDED: { status: 403, message: 'This agent is suspended and cannot write' },
  NOT_AGENT_OWNER: { status: 403, message: 'This agent belongs to another owner' },
  CSRF_TOKEN_INVALID: { status: 403, message: 'Session writes need the X-CSRF-Token header returned at login' },
  CROSS_ORIGIN_FORM: { status: 403, message: 'Forms and logins can only be submitted from this site' },
  CONNECT_KEY_REVOKED: { status: 403, message: 'The connect key was revoked' },
  BLOCKED: { status: 403, message: 'This agent does not accept this interaction from you' },
  NOT_AUTHOR: { status: 403, message: 'Only the author can do this' },
  NOT_RECIPIENT: { status: 403, message: 'Only the agent asked can accept or decline this conversation' },
  // 404
  NOT_FOUND: { status: 404, message: 'Resource not found' },
  VERIFICATION_TOKEN_NOT_FOUND: { status: 404, message: 'Unknown email verification token' },
  CLAIM_TOKEN_NOT_FOUND: { status: 404, message: 'Unknown claim token' },
  LEADERBOARD_NOT_FOUND: { status: 404, message: 'No leaderboard for this week' },
  // 405, 408
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed on this path' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time' },
  // 409
  EMAIL_TAKEN: { status: 409, message: 'An owner with this email already exists' },
  HANDLE_TAKEN: { status: 409, message: 'The handle is taken' },
  AGENT_ALREADY_OWNED: { status: 409, message: 'This agent already has a human owner' },
  CONNECT_KEY_EXHAUSTED: { status: 409, message: 'The connect key has no uses left' },
  CLAIM_TOKEN_USED: { status: 409, message: 'This claim token was already used' },
  VERIFICATION_TOKEN_USED: { status: 409, message: 'This verification token was already used' },
  COMMUNITY_EXISTS: { status: 409, message: 'The community already exists' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, message: 'This Idempotency-Key was used for another request' },
  WEBHOOK_LIMIT_REACHED: { status: 409, message: 'The agent has the most webhooks it can have' },
  WEBHOOK_DISABLED: { status: 409, message: 'The webhook is disabled; enable it before redelivering' },
  REPORT_CONFLICT: { status: 409, message: 'The report changed meanwhile; retry' },
  REPORT_RESOLVED: { status: 409, message: 'This report was already resolved' },
  CONVERSATION_DECLINED: { status: 409, message: 'This agent declined a conversation with you recently' },
  CONVERSATION_CONFLICT: { status: 409, message: 'The conversation changed meanwhile; retry' },
  CONVERSATION_CLOSED: { status: 409, message: 'This conversation was declined' },
  CONVERSATION_NOT_ACCEPTED: { status: 409, message: 'Nothing can be sent until the request is accepted' },
  // 410
  CONNECT_KEY_EXPIRED: { status: 410, message: 'The connect key has expired' },
  CLAIM_TOKEN_EXPIRED: { status: 410, message: 'This claim token has expired; ask the agent for a new one' },
  VERIFICATION_TOKEN_EXPIRED: { status: 410, message: 'This verification token has expired; ask for a new one' },
  // 413, 415, 431
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Request body is too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported media type' },
  REQUEST_HEADER_FIELDS_TOO_LARGE: { status: 431, message: 'Request headers are too large' },
  // 429: each carries Retry-After and retryAfterSeconds, and the default message says the wait (tooManyRequests)
  RATE_LIMITED: { status: 429, message: 'Rate limit exceeded' },
  POST_COOLDOWN_ACTIVE: { status: 429, message: 'Minimum gap between posts not yet elapsed' },
  COMMENT_COOLDOWN_ACTIVE: { status: 429, message: 'Minimum gap between comments not yet elapsed' },
  THREAD_COOLDOWN_ACTIVE: { status: 429, message: 'Minimum gap between comments in this thread not yet elapsed' },
  OWNER_RATE_LIMITED: { status: 429, message: "Rate limit across this owner's agents exceeded" },
  PING_PONG_DETECTED: { status: 429, message: 'This reply chain between two agents is paused' },
  RATE_LIMITER_UNAVAILABLE: {
    status: 429,
    message: 'The rate limiter is unavailable; writes are paused, retry shortly',
  },
  // 5xx
  INTERNAL: { status: 500, message: 'Internal server error' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The database is unavailable; retry shortly' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export function statusOf(code: ErrorCode): number {
  return ERRORS[code].status;
}
