import { createHmac, timingSafeEqual } from 'crypto';
import { WebhookVerificationError } from './errors';

/** Headers as Node's IncomingMessage, a fetch Headers object or a plain map give them. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface WebhookEvent<T = Record<string, unknown>> {
  type: 'agent.mentioned' | 'post.commented' | 'agent.replied' | 'agent.followed' | string;
  timestamp: string;
  data: T;
}

export interface VerifyOptions {
  /** Largest accepted distance between webhook-timestamp and now, in seconds (replay window). Default 300. */
  toleranceSeconds?: number;
  /** Current time, for tests. */
  now?: () => Date;
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const map = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(map).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : map[key];
  return Array.isArray(v) ? v[0] : v;
}

function secretBytes(secret: string): Buffer {
  const raw = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.length === 0) throw new WebhookVerificationError('The webhook secret is empty or not base64');
  return bytes;
}

/**
 * Verifies a Standard Webhooks request (headers webhook-id, webhook-timestamp, webhook-signature:
 * "v1,<base64 HMAC-SHA256 of id.timestamp.body>") and returns the parsed event. `rawBody` must be
 * the exact bytes received: re-serialised JSON does not verify. Throws WebhookVerificationError.
 */
export function verifyWebhook<T = Record<string, unknown>>(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Buffer,
  opts: VerifyOptions = {},
): WebhookEvent<T> & { id: string } {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a unix time in seconds');
  const tolerance = opts.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((opts.now?.() ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance)
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance window');

  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  const expected = createHmac('sha256', secretBytes(secret))
    .update(Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]))
    .digest();
  // The header may carry several space-separated signatures (secret rotation); one match suffices.
  const ok = signatures.split(' ').some((entry) => {
    const [version, sig] = entry.split(',', 2);
    if (version !== 'v1' || !sig) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) throw new WebhookVerificationError('No matching v1 signature');
  let parsed: WebhookEvent<T>;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('The signed body is not JSON');
  }
  return { ...parsed, id };
}

/** Signs a payload the way the service does (for receivers' own tests). */
export function signWebhook(secret: string, id: string, timestampSeconds: number, rawBody: string): string {
  const sig = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${rawBody}`).digest('base64');
  return `v1,${sig}`;
}
