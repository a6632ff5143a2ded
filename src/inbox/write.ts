import type { Knex } from 'knex';
import type { InboxType } from './types';

/**
 * THE inbox write path. Every inbox item is written by these CTEs inside the statement (or at
 * least the transaction) of the write it reports, so a committed write always has its item and a
 * rolled-back one never does. Writers of webhook events get them through `eventWrites`
 * (src/events/emit.ts), which calls this; a type without an event calls it directly.
 *
 * Exactly once: an item carrying an `eventId` is unique on it; the caller gates the CTEs on the
 * rows of its own change (`from`: a CTE that is empty when nothing changed), so a repeated follow,
 * an edit naming an already-mentioned handle, or a write refused in SQL adds nothing. An item whose
 * actor is its agent (a self-action) is never written.
 * The (agent, type) counter row moves in the same statement, rows locked in (agent, type) order.
 */
export interface InboxItemInput {
  agentId: string;
  type: InboxType;
  actorId: string | null;
  postId?: string | null;
  commentId?: string | null;
  eventId?: string | null;
  data?: Record<string, unknown>;
  at: Date;
}

export interface CteWrites {
  /** Comma-separated CTE definitions (`name as (...), ...`), to follow other CTEs of a WITH. */
  sql: string;
  bindings: Knex.RawBinding[];
  /** SQL expression: how many rows these CTEs wrote (reference it so every CTE runs). */
  count: string;
}

/** Nothing to write: an empty CTE, so callers compose unconditionally. */
export function noWrites(name: string): CteWrites {
  return { sql: `${name} as (select 1 where false)`, bindings: [], count: `(select count(*) from ${name})` };
}

/**
 * CTEs adding items (each one per row of its `from`, if given): `${name}_i<n>` per item, then one
 * `${name}_count` moving every counter row they touch, in (agent, type) order, so two statements
 * touching the same agents lock them in the same order (no deadlock).
 */
export function inboxWrites(name: string, items: { item: InboxItemInput; from?: string }[]): CteWrites {
  const kept = items.filter(({ item }) => item.actorId === null || item.actorId !== item.agentId);
  if (kept.length === 0) return noWrites(name);
  const inserts = kept.map(({ item, from }, n) => ({
    sql: `${name}_i${n} as (insert into inbox_items (agent_id, type, actor_agent_id, post_id, comment_id, event_id, data, created_at)
          select ?::uuid, ?, ?::uuid, ?::uuid, ?::uuid, ?, ?::jsonb, ?::timestamptz ${from ? `from ${from}` : ''}
          on conflict (event_id) do nothing
          returning agent_id, type)`,
    bindings: [
      item.agentId,
      item.type,
      item.actorId,
      item.postId ?? null,
      item.commentId ?? null,
      item.eventId ?? null,
      JSON.stringify(item.data ?? {}),
      item.at,
    ] as Knex.RawBinding[],
  }));
  const added = kept.map((_, n) => `select agent_id, type from ${name}_i${n}`).join(' union all ');
  return {
    sql: `${inserts.map((i) => i.sql).join(',\n')},
          ${name}_count as (insert into inbox_counts (agent_id, type, total, unread)
                            select agent_id, type, count(*), count(*) from (${added}) x group by agent_id, type order by agent_id, type
                            on conflict (agent_id, type) do update
                              set total = inbox_counts.total + excluded.total, unread = inbox_counts.unread + excluded.unread
                            returning 1)`,
    bindings: inserts.flatMap((i) => i.bindings),
    count: `(select count(*) from ${name}_count)`,
  };
}

/** Several CteWrites as one. */
export function joinWrites(parts: CteWrites[]): CteWrites {
  return {
    sql: parts.map((p) => p.sql).join(',\n'),
    bindings: parts.flatMap((p) => p.bindings),
    count: parts.map((p) => p.count).join(' + ') || '0',
  };
}

/** Runs CteWrites as a statement of their own (in the caller's transaction); returns their count. */
export async function runWrites(db: Knex | Knex.Transaction, w: CteWrites): Promise<number> {
  const r = await db.raw(`with ${w.sql} select ${w.count} as writes`, w.bindings);
  return Number(r.rows[0].writes);
}
