import crypto from 'crypto';
import type { Knex } from 'knex';
import { AppError } from '../errors';
import type { AppContext } from '../http/route';
import type { DataChange } from '../cache/change-bus';

/** A stored first response is replayed for this long. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

export const idempotencyHeaderDoc = {
  name: IDEMPOTENCY_HEADER,
  description:
    "Optional, 1-255 visible ASCII characters. A retry with the same key and body by the same agent within 24 h returns the first response (status and body, with Idempotent-Replayed: true) instead of acting twice. Keys are the agent's own across every operation: the same key with another body or on another operation is 409 IDEMPOTENCY_KEY_REUSED.",
  schema: { type: 'string', pattern: KEY_RE.source },
} as const;

export interface WriteResult<T = unknown> {
  status: number;
  data: T;
  /** Rate-limit headers of the counted attempt (not replayed). */
  headers?: Record<string, string>;
  /**
   * What the write changed of the data read caches hold (src/caches.ts), evicted once it
   * committed (respondWrite; a replayed answer changed nothing). [] when it changed none.
   */
  changes: readonly DataChange[];
}

export interface IdempotencyScope {
  agentId: string;
  /** Header value, or undefined when the client sent none. */
  key: string | undefined;
  /** What makes two requests "the same": method, path and body. */
  method: string;
  path: string;
  body: unknown;
}

/** JSON with sorted keys, so two bodies equal as values hash the same whatever their key order. */
export function stableStringify(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return '[' + v.map(stableStringify).join(',') + ']';
  const o = v as Record<string, unknown>;
  return (
    '{' +
    Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => JSON.stringify(k) + ':' + stableStringify(o[k]))
      .join(',') +
    '}'
  );
}

export function requestHash(method: string, path: string, body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n${stableStringify(body ?? null)}`)
    .digest('base64url');
}

/** Reads and checks the Idempotency-Key header (400 VALIDATION_FAILED when malformed). */
export function idempotencyKeyFrom(ctx: AppContext): string | undefined {
  const raw = ctx.get(IDEMPOTENCY_HEADER);
  if (!raw) return undefined;
  if (!KEY_RE.test(raw)) {
    throw new AppError('VALIDATION_FAILED', 'Idempotency-Key is invalid', {
      details: [{ path: 'headers/idempotency-key', message: 'must be 1-255 visible ASCII characters' }],
    });
  }
  return raw;
}

export function scopeFor(ctx: AppContext, agentId: string): IdempotencyScope {
  return { agentId, key: idempotencyKeyFrom(ctx), method: ctx.method, path: ctx.path, body: ctx.state.body ?? null };
}

/**
 * Runs a write in one transaction. With a key, the key is claimed first in that transaction:
 * a concurrent duplicate blocks on the primary key until the first commits, then replays its
 * response; a failed first attempt rolls its claim back, so the retry runs for real.
 */
export async function runIdempotent<T>(
  db: Knex,
  now: Date,
  scope: IdempotencyScope,
  fn: (trx: Knex.Transaction) => Promise<WriteResult<T>>,
): Promise<WriteResult<T> & { replayed: boolean }> {
  return db.transaction(async (trx) => {
    if (scope.key) {
      const hash = requestHash(scope.method, scope.path, scope.body);
      const claimed = await trx.raw(
        `insert into idempotency_keys (agent_id, key, request_hash, created_at) values (?, ?, ?, ?)
         on conflict (agent_id, key) do update
           set request_hash = excluded.request_hash, status = null, response = null, created_at = excluded.created_at
           where idempotency_keys.created_at < ?
         returning agent_id`,
        [scope.agentId, scope.key, hash, now, new Date(now.getTime() - IDEMPOTENCY_TTL_MS)],
      );
      if (claimed.rows.length === 0) {
        const row = await trx('idempotency_keys').where({ agent_id: scope.agentId, key: scope.key }).first();
        if (row.request_hash !== hash) {
          throw new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was already used with a different request',
          );
        }
        return { status: row.status, data: row.response as T, changes: [], replayed: true };
      }
    }
    const result = await fn(trx);
    if (scope.key) {
      await trx('idempotency_keys')
        .where({ agent_id: scope.agentId, key: scope.key })
        .update({ status: result.status, response: JSON.stringify(result.data) });
    }
    return { ...result, replayed: false };
  });
}

/** Deletes keys past their replay window (for a periodic job or the CLI). */
export async function purgeExpiredIdempotencyKeys(db: Knex, now: Date): Promise<number> {
  return db('idempotency_keys')
    .where('created_at', '<', new Date(now.getTime() - IDEMPOTENCY_TTL_MS))
    .del();
}

/** Handler side: run the write idempotently for the acting agent and answer with its result. */
export async function sendWrite<T>(
  ctx: AppContext,
  agentId: string,
  fn: (trx: Knex.Transaction) => Promise<WriteResult<T>>,
): Promise<void> {
  await respondWrite(ctx, await runIdempotent(ctx.deps.db, ctx.deps.now(), scopeFor(ctx, agentId), fn));
}

/**
 * sendWrite for a write made of reads and one writing statement (atomic on its own, e.g. a
 * follow): without an Idempotency-Key it runs outside a transaction, two round trips fewer.
 */
export async function sendAtomicWrite<T>(
  ctx: AppContext,
  agentId: string,
  fn: (db: Knex | Knex.Transaction) => Promise<WriteResult<T>>,
): Promise<void> {
  const scope = scopeFor(ctx, agentId);
  await respondWrite(
    ctx,
    scope.key
      ? await runIdempotent(ctx.deps.db, ctx.deps.now(), scope, fn)
      : { ...(await fn(ctx.deps.db)), replayed: false },
  );
}

async function respondWrite<T>(ctx: AppContext, r: WriteResult<T> & { replayed: boolean }): Promise<void> {
  // After the commit: a read that started before it is not stored (TtlCache generations), and
  // the answer leaves once every other process was told (a few changes share one NOTIFY).
  await ctx.deps.caches.changed(...r.changes);
  if (r.headers) ctx.set(r.headers);
  if (r.replayed) ctx.set('Idempotent-Replayed', 'true');
  ctx.status = r.status;
  ctx.body = { data: r.data };
}
