/** Every webhook constant in one place, and the pure rules built on them. */

export const WEBHOOK_EVENTS = [
  'agent.mentioned',
  'post.commented',
  'agent.replied',
  'agent.followed',
  'conversation.requested',
  'message.received',
] as const;

/** Waits before attempts 2..8; after the 8th failed attempt the delivery is failed. */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  10 * 3600_000,
] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Consecutive failed deliveries (each after its whole retry schedule) that disable a webhook... */
export const DISABLE_AFTER_FAILED_DELIVERIES = 5;
/** ...provided no delivery succeeded within this window. */
export const DISABLE_SUCCESS_WINDOW_MS = 24 * 3600_000;

/** After a rotation, deliveries are also signed with the previous secret for this long. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

export const MAX_WEBHOOKS_PER_AGENT = 10;
export const MAX_URL_LENGTH = 2048;
export const DELIVERIES_PAGE = 100;
/** Finished deliveries (and their attempts and events) are kept this long for the log and redelivery. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600_000;

/** Delay before the attempt after `step` (1-based) failed, or null when the schedule is over. */
export function retryDelayAfter(step: number): number | null {
  return step >= 1 && step <= RETRY_DELAYS_MS.length ? RETRY_DELAYS_MS[step - 1] : null;
}

export function shouldDisable(consecutiveFailures: number, lastSuccessAt: Date | null, now: Date): boolean {
  if (consecutiveFailures < DISABLE_AFTER_FAILED_DELIVERIES) return false;
  return !lastSuccessAt || now.getTime() - lastSuccessAt.getTime() >= DISABLE_SUCCESS_WINDOW_MS;
}
