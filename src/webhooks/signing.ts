import crypto from 'crypto';

/**
 * Standard Webhooks signing and the at-rest protection of webhook secrets.
 * The secret must stay usable for HMAC, so it is encrypted (AES-256-GCM, key derived from
 * SESSION_SECRET with HKDF, the webhook id as associated data), never stored in clear.
 */

export const SECRET_PREFIX = 'whsec_';

/** whsec_ + base64 of 32 random bytes, the form the standardwebhooks libraries accept. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(32).toString('base64');
}

/** Derived keys by SESSION_SECRET (a process has one, tests a few): derived once, not per delivery. */
const keys = new Map<string, Buffer>();

function secretKey(sessionSecret: string): Buffer {
  let key = keys.get(sessionSecret);
  if (!key) {
    if (keys.size >= 16) keys.clear();
    keys.set(sessionSecret, (key = deriveKey(sessionSecret)));
  }
  return key;
}

function deriveKey(sessionSecret: string): Buffer {
  return Buffer.from(
    crypto.hkdfSync(
      'sha256',
      Buffer.from(sessionSecret, 'utf8'),
      Buffer.from('svc-webhook-secrets'),
      Buffer.from('v1'),
      32,
    ),
  );
}

export function encryptSecret(sessionSecret: string, context: string, secret: string): string {
  const iv = crypto.randomBytes(12);
  const c = crypto.createCipheriv('aes-256-gcm', secretKey(sessionSecret), iv);
  c.setAAD(Buffer.from(context, 'utf8'));
  const ct = Buffer.concat([c.update(secret, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

export function decryptSecret(sessionSecret: string, context: string, stored: string): string {
  const [v, iv, tag, ct] = stored.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unknown webhook secret format');
  const d = crypto.createDecipheriv('aes-256-gcm', secretKey(sessionSecret), Buffer.from(iv, 'base64url'));
  d.setAAD(Buffer.from(context, 'utf8'));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}

/**
 * Webhook secrets as decryptSecret opens them, kept for the deliveries that follow: a worker signs
 * every attempt with its webhook's secret, and opening it (AES-GCM, buffers) took 17 µs of node CPU
 * against 1-2 µs for a lookup (loaded machine; a direct signed POST, sender and receiver, takes
 * 140-460 µs). Keyed by the stored ciphertext itself, so a rotated
 * secret (a new ciphertext) is never answered from the old entry and nothing needs invalidating;
 * the key also carries SESSION_SECRET and the webhook id, so a lookup opens only what
 * decryptSecret would. Bounded: cleared when full. Holds nothing the process could not open with
 * the SESSION_SECRET it already has.
 */
const openedSecrets = new Map<string, string>();

export function webhookSecret(sessionSecret: string, webhookId: string, stored: string): string {
  const key = `${sessionSecret}\0${webhookId}\0${stored}`;
  let secret = openedSecrets.get(key);
  if (secret === undefined) {
    secret = decryptSecret(sessionSecret, webhookId, stored);
    if (openedSecrets.size >= 10_000) openedSecrets.clear();
    openedSecrets.set(key, secret);
  }
  return secret;
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` keyed by the decoded secret. */
export function signPayload(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = crypto.createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The three Standard Webhooks headers of one attempt. With several secrets (the current one
 * first, then the previous one during a rotation's overlap), the signature header carries one
 * signature per secret, space-separated; a receiver holding either secret verifies.
 */
export function webhookHeaders(
  secrets: string | readonly string[],
  msgId: string,
  at: Date,
  body: string,
): Record<string, string> {
  const ts = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(ts),
    'webhook-signature': (typeof secrets === 'string' ? [secrets] : secrets)
      .map((s) => signPayload(s, msgId, ts, body))
      .join(' '),
  };
}
