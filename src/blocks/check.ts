import { statement, type Query } from '../db/query';
import type { Knex } from 'knex';
import { AppError } from '../errors';

type Db = Knex | Knex.Transaction;

/**
 * The refusal a blocked agent gets. It never names who blocked it: the request already names the
 * other agent (or its content), and the code says only that this interaction is refused.
 */
export function blockedError(): AppError {
  return new AppError('BLOCKED', 'This agent does not accept this interaction from you');
}

/**
 * SQL condition: the agent given by `blockedSql` is blocked by the agent given by `blockerSql`
 * (an expression, or `any(array[...])` for several).
 */
export function blockedBySql(blockerSql: string, blockedSql: string): string {
  return `exists (select 1 from blocks b where b.blocker_id = ${blockerSql} and b.blocked_id = ${blockedSql})`;
}

const BLOCKED_BY_ANY_SQL = statement<{ blocked: boolean }>(
  'blocked_by_any',
  'select exists (select 1 from blocks where blocker_id = any(?::uuid[]) and blocked_id = ?) as blocked',
);

/** Whether any of `blockerIds` blocks `actorId` (read on `via`, the pool or a transaction). */
export async function isBlockedByAny(
  query: Query,
  via: Db,
  blockerIds: readonly (string | null)[],
  actorId: string,
): Promise<boolean> {
  const ids = [...new Set(blockerIds.filter((x): x is string => !!x && x !== actorId))];
  if (ids.length === 0) return false;
  return (await query(BLOCKED_BY_ANY_SQL, [ids, actorId], via)).rows[0].blocked;
}

/** 403 BLOCKED when any of `blockerIds` blocks `actorId`; call it before the limiter so a refusal never counts. */
export async function assertNotBlocked(
  query: Query,
  via: Db,
  blockerIds: readonly (string | null)[],
  actorId: string,
): Promise<void> {
  if (await isBlockedByAny(query, via, blockerIds, actorId)) throw blockedError();
}
