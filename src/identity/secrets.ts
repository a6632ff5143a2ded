import crypto from 'crypto';
import os from 'os';

export const API_KEY_PREFIX = 'svc_live_';
export const CONNECT_KEY_PREFIX = 'svc_connect_';
export const CLAIM_TOKEN_PREFIX = 'svc_claim_';

/** prefix + 256 random bits, base64url: 43 characters of secret. */
export function generateSecret(prefix: string): string {
  return prefix + crypto.randomBytes(32).toString('base64url');
}

export function sha256(value: string): Buffer {
  return crypto.createHash('sha256').update(value, 'utf8').digest();
}

/** Display prefix: the fixed prefix plus the first 8 characters of the secret. */
export function displayPrefix(secret: string, prefix: string): string {
  return secret.slice(0, prefix.length + 8);
}

export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

export function hmac(secret: string, value: string): string {
  return crypto.createHmac('sha256', secret).update(value).digest('base64url');
}

/**
 * Password hashing: scrypt at today's guidance (N=2^17, r=8, p=1: 128 MiB and, on this service's
 * reference machine, about half a second of one core per hash). The parameters are stored in
 * each hash (`scrypt$N$r$p$salt$hash`), so hashes made with older ones still verify and are
 * replaced at the next successful login (needsRehash).
 */
const SCRYPT_DEFAULT = { N: 2 ** 17, r: 8, p: 1, keylen: 64 };
let scryptParams = { ...SCRYPT_DEFAULT };

/** Tests only: a cheaper N for the many owners they create (null: the default). */
export function setPasswordHashCost(N: number | null): void {
  scryptParams = { ...SCRYPT_DEFAULT, N: N ?? SCRYPT_DEFAULT.N };
}

/** scrypt needs 128·N·r·p bytes; Node refuses more than 32 MiB unless maxmem allows it. */
function maxmem(N: number, r: number, p: number): number {
  return 128 * N * r * p + 16 * 1024 * 1024;
}

/**
 * crypto.scrypt runs in libuv's thread pool (4 threads, shared with DNS lookups and file reads):
 * at most this many hashes run at once per process, the rest wait their turn, so parallel logins
 * neither block the event loop nor take every pool thread or CPU core.
 */
export const MAX_PARALLEL_HASHES = Math.min(4, Math.max(1, Math.floor(os.availableParallelism() / 2)));
let running = 0;
const waiting: (() => void)[] = [];

async function scryptAsync(password: string, salt: Buffer, keylen: number, o: { N: number; r: number; p: number }) {
  if (running >= MAX_PARALLEL_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await new Promise<Buffer>((resolve, reject) =>
      crypto.scrypt(password, salt, keylen, { ...o, maxmem: maxmem(o.N, o.r, o.p) }, (err, key) =>
        err ? reject(err) : resolve(key),
      ),
    );
  } finally {
    // The slot passes straight to the next waiter, if any.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** scrypt with a per-password salt; stored as scrypt$N$r$p$salt$hash. */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keylen } = scryptParams;
  const salt = crypto.randomBytes(16);
  const key = await scryptAsync(password, salt, keylen, { N, r, p });
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Parameters a stored hash was made with, or null when it is not a scrypt hash of ours. */
function storedParams(stored: string) {
  const [alg, n, r, p, salt, hash] = stored.split('$');
  const N = Number(n);
  const R = Number(r);
  const P = Number(p);
  if (alg !== 'scrypt' || !salt || !hash) return null;
  // Bounds: a damaged row must not ask for gigabytes (N a power of two, at most 2^20).
  if (!Number.isInteger(N) || N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0) return null;
  if (!Number.isInteger(R) || R < 1 || R > 32 || !Number.isInteger(P) || P < 1 || P > 16) return null;
  return { N, r: R, p: P, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const s = storedParams(stored);
  if (!s) return false;
  const key = await scryptAsync(password, s.salt, s.hash.length, { N: s.N, r: s.r, p: s.p });
  return constantTimeEqual(key, s.hash);
}

/** True when a stored hash was made with other parameters than today's: rehash it after a successful login. */
export function needsRehash(stored: string): boolean {
  const s = storedParams(stored);
  return (
    !s ||
    s.N !== scryptParams.N ||
    s.r !== scryptParams.r ||
    s.p !== scryptParams.p ||
    s.hash.length !== scryptParams.keylen
  );
}

/**
 * An installationId is a bearer secret chosen by the runtime: only this keyed hash of it is
 * stored (HMAC-SHA256 under a key derived from SESSION_SECRET with HKDF), so a copy of the
 * database does not let anyone try likely installation ids offline.
 */
export function installationIdHash(sessionSecret: string, installationId: string): string {
  const key = Buffer.from(
    crypto.hkdfSync(
      'sha256',
      Buffer.from(sessionSecret, 'utf8'),
      Buffer.from('svc-installation-ids'),
      Buffer.from('v1'),
      32,
    ),
  );
  return crypto.createHmac('sha256', key).update(installationId, 'utf8').digest('base64url');
}
