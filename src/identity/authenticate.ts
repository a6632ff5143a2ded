import type { Knex } from 'knex';
import { TtlCache } from '../cache/ttl';
import { statement, type Query } from '../db/query';
import { API_KEY_PREFIX, constantTimeEqual, hmac, sha256 } from './secrets';
import type { AgentRow, OwnerRow } from './repo';
import type { Scope } from './scopes';

export interface AgentPrincipal {
  kind: 'agent';
  agent: AgentRow;
  apiKeyId: string;
  keyPrefix: string;
  scopes: Scope[];
}
export interface OwnerPrincipal {
  kind: 'owner';
  owner: OwnerRow;
  sessionId: string;
}
export type Principal = AgentPrincipal | OwnerPrincipal;

export const SESSION_COOKIE = 'svc_session';
export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

/**
 * Principals of recently seen keys by key hash (`deps.caches.apiKeys`), so a busy agent's
 * requests skip the key lookup. A key revoked (`api-keys`) or an agent changed (`agents`:
 * suspension, claim, profile) empties it at once in every process (src/caches.ts), announced in
 * the committing transaction (Caches.announce), so a process that listens hears every one of
 * them: while it listens, an entry lives AUTH_CACHE_HEARD_TTL_MS; otherwise (not connected yet,
 * reconnecting: it resyncs once listening again) AUTH_CACHE_TTL_MS bounds a change it may miss.
 * Unknown keys are never cached.
 */
export const AUTH_CACHE_TTL_MS = 3000;
export const AUTH_CACHE_HEARD_TTL_MS = 60_000;
export type ApiKeyCache = TtlCache<AgentPrincipal | null>;
export function createApiKeyCache(listening: () => boolean = () => false): ApiKeyCache {
  return new TtlCache<AgentPrincipal | null>({
    name: 'api-keys',
    ttlMs: AUTH_CACHE_TTL_MS,
    maxEntries: 20_000,
    heardTtl: { ms: AUTH_CACHE_HEARD_TTL_MS, while: listening },
  });
}
/**
 * The principal of a live key, and its last-use time at minute precision (at most one write per
 * key every 30 s, not one per request; it changes nothing cached) in the same statement: one
 * round trip. A busy key is looked up once per AUTH_CACHE_HEARD_TTL_MS, and each of those
 * lookups, 30 s or more after the last write, records the use. The update takes the key row's
 * lock only when those 30 s passed, so concurrent first uses of a key wait for each other only then.
 *
 * The touch commits without waiting for its WAL to reach the disk (`synchronous_commit` off for its
 * own transaction only): a write request's own synchronous commit, made after it, flushes it too,
 * and a database crash can lose at most the last fraction of a second of last-use times, which
 * nothing relies on. Waiting, a write whose key was looked up waited for two WAL flushes in a row;
 * in the mixed load at load 5 this lookup was 24 of 205 samples of the web's busy backends, 23 of
 * them waiting on the flush (bench/load.ts, BENCHMARKS.md).
 */
const API_KEY_SQL = statement(
  'api_key_principal_touch',
  `with k as (select k.id as key_id, k.key_hash, k.key_prefix, k.scopes, a.*
                from api_keys k join agents a on a.id = k.agent_id
               where k.key_hash = ? and k.revoked_at is null limit 1),
        t as (update api_keys set last_used_at = now()
               where id = (select key_id from k) and (last_used_at is null or last_used_at < now() - interval '30 seconds')
                 and set_config('synchronous_commit', 'off', true) is not null
               returning 1)
   select k.*, (select count(*) from t) as touched from k`,
);

async function loadApiKey(query: Query, hash: Buffer): Promise<AgentPrincipal | null> {
  const row = (await query(API_KEY_SQL, [hash])).rows[0];
  if (!row || !constantTimeEqual(row.key_hash, hash)) return null;
  const { key_id, key_hash: _h, key_prefix, scopes, touched: _t, ...agent } = row;
  return { kind: 'agent', agent: agent as AgentRow, apiKeyId: key_id, keyPrefix: key_prefix, scopes };
}

/** Returns the principal for a live key, or null for unknown, malformed or revoked keys. */
export async function authenticateApiKey(
  query: Query,
  cache: ApiKeyCache,
  key: string,
): Promise<AgentPrincipal | null> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length < API_KEY_PREFIX.length + 40 || key.length > 200) return null;
  const hash = sha256(key);
  const p = await cache.load(
    hash.toString('base64'),
    () => loadApiKey(query, hash),
    (v) => v !== null,
  );
  // A copy per request: handlers may not change what the next request sees.
  return p && { ...p, agent: { ...p.agent }, scopes: [...p.scopes] };
}

export function signSession(secret: string, sessionId: string): string {
  return `${sessionId}.${hmac(secret, 'session:' + sessionId)}`;
}

/** CSRF token bound to the session: derived, so it needs no storage and dies with the session. */
export function csrfTokenFor(secret: string, sessionId: string): string {
  return hmac(secret, 'csrf:' + sessionId);
}

export function verifyCsrf(secret: string, sessionId: string, token: string | undefined): boolean {
  if (!token) return false;
  const a = Buffer.from(csrfTokenFor(secret, sessionId));
  const b = Buffer.from(token);
  return constantTimeEqual(a, b);
}

/** Verifies the cookie's HMAC, then that the session exists, is not revoked and not expired. */
export async function authenticateSession(db: Knex, secret: string, cookie: string): Promise<OwnerPrincipal | null> {
  const dot = cookie.lastIndexOf('.');
  if (dot <= 0) return null;
  const sessionId = cookie.slice(0, dot);
  if (!/^[0-9a-f-]{36}$/.test(sessionId)) return null;
  const expected = Buffer.from(signSession(secret, sessionId));
  if (!constantTimeEqual(expected, Buffer.from(cookie))) return null;
  const row = await db('sessions as s')
    .join('owners as o', 'o.id', 's.owner_id')
    .where('s.id', sessionId)
    .whereNull('s.revoked_at')
    .where('s.expires_at', '>', db.fn.now())
    .select('o.*')
    .first();
  if (!row) return null;
  return { kind: 'owner', owner: row as OwnerRow, sessionId };
}
