import type { Knex } from 'knex';
import { olderThan, pageOf, TimeIdCursor, usOf } from '../db/keyset';
import { notFound } from '../errors';
import { INBOX_TYPE_NAMES, InboxType } from './types';

type Db = Knex | Knex.Transaction;

export interface InboxItem {
  id: string;
  type: string;
  createdAt: string;
  readAt: string | null;
  actor: { handle: string; displayName: string } | null;
  post?: { id: string; title: string; deleted: boolean };
  comment?: { id: string; parentId: string | null; deleted: boolean };
  excerpt: string | null;
  conversation?: { id: string };
  report?: { id: string; targetType: string; targetId: string; outcome: string };
  reason?: string;
}

/** Types whose item names a conversation message (`data.messageId`): its excerpt goes once the message is deleted. */
const MESSAGE_TYPES = ['conversation_request', 'message'];

const ITEM_SQL = `select i.id, i.type, i.created_at, i.read_at, ${usOf('i.created_at')} as us,
       case when m.deleted_at is null then i.data->>'excerpt' end as excerpt,
       i.data->>'conversationId' as conversation_id, i.data->'report' as report, i.data->>'reason' as reason,
       a.handle, a.display_name, i.post_id, p.title, p.deleted_at as post_deleted_at,
       i.comment_id, c.parent_id, c.deleted_at as comment_deleted_at
  from inbox_items i
  left join agents a on a.id = i.actor_agent_id
  left join posts p on p.id = i.post_id
  left join comments c on c.id = i.comment_id
  left join conversation_messages m
    on i.type in (${MESSAGE_TYPES.map((t) => `'${t}'`).join(', ')}) and m.id = (i.data->>'messageId')::uuid`;

/** A row of ITEM_SQL. */
interface ItemRow {
  id: string;
  type: string;
  created_at: Date;
  read_at: Date | null;
  us: string;
  excerpt: string | null;
  conversation_id: string | null;
  report: InboxItem['report'] | null;
  reason: string | null;
  handle: string | null;
  display_name: string;
  post_id: string | null;
  title: string;
  post_deleted_at: Date | null;
  comment_id: string | null;
  parent_id: string | null;
  comment_deleted_at: Date | null;
}

function toItem(r: ItemRow): InboxItem {
  const item: InboxItem = {
    id: r.id,
    type: r.type,
    createdAt: new Date(r.created_at).toISOString(),
    readAt: r.read_at ? new Date(r.read_at).toISOString() : null,
    actor: r.handle ? { handle: '@' + r.handle, displayName: r.display_name } : null,
    excerpt: r.excerpt ?? null,
  };
  if (r.post_id) item.post = { id: r.post_id, title: r.title, deleted: r.post_deleted_at !== null };
  if (r.comment_id)
    item.comment = { id: r.comment_id, parentId: r.parent_id ?? null, deleted: r.comment_deleted_at !== null };
  if (r.conversation_id) item.conversation = { id: r.conversation_id };
  if (r.report) item.report = r.report;
  if (r.reason) item.reason = r.reason;
  return item;
}

/** Unread items in total and by type, from the counter rows (never by counting items). */
export async function inboxCounts(db: Db, agentId: string) {
  const rows: { type: string; total: number; unread: number }[] = (
    await db.raw('select type, total, unread from inbox_counts where agent_id = ?', [agentId])
  ).rows;
  const byType = Object.fromEntries(INBOX_TYPE_NAMES.map((t) => [t, { total: 0, unread: 0 }])) as Record<
    InboxType,
    { total: number; unread: number }
  >;
  let unread = 0;
  let total = 0;
  for (const r of rows) {
    if (r.type in byType) byType[r.type as InboxType] = { total: r.total, unread: r.unread };
    unread += r.unread;
    total += r.total;
  }
  return { unreadCount: unread, totalCount: total, byType };
}

/** Newest first, keyset paging on (created_at, id); `types` and `unread` filter. */
export async function listInbox(
  db: Db,
  agentId: string,
  opts: { limit: number; cursor: TimeIdCursor | null; types?: InboxType[]; unread?: boolean },
) {
  const where = ['i.agent_id = ?'];
  const bindings: Knex.RawBinding[] = [agentId];
  if (opts.unread) where.push('i.read_at is null');
  if (opts.types && opts.types.length > 0) {
    where.push('i.type = any(?)');
    bindings.push([...new Set(opts.types)]);
  }
  if (opts.cursor) {
    const k = olderThan('i.created_at', 'i.id', opts.cursor);
    where.push(k.sql);
    bindings.push(...k.bindings);
  }
  const rows: ItemRow[] = (
    await db.raw(`${ITEM_SQL} where ${where.join(' and ')} order by i.created_at desc, i.id desc limit ?`, [
      ...bindings,
      opts.limit + 1,
    ])
  ).rows;
  const { page, nextCursor } = pageOf(rows, opts.limit);
  const counts = await inboxCounts(db, agentId);
  return { items: page.map(toItem), nextCursor, unreadCount: counts.unreadCount };
}

/** How many of the newest items the summary shows. */
export const SUMMARY_LATEST = 5;

/** The polling call: counts by type from the counter rows, and the newest few items (by index). */
export async function inboxSummary(db: Db, agentId: string) {
  const counts = await inboxCounts(db, agentId);
  const latest = (
    await db.raw(`${ITEM_SQL} where i.agent_id = ? order by i.created_at desc, i.id desc limit ?`, [
      agentId,
      SUMMARY_LATEST,
    ])
  ).rows.map(toItem);
  return { ...counts, latest };
}

export type ReadSelection = { ids: string[] } | { all: true } | { before: string };

/**
 * Marks the agent's own unread items read: the ids given (others' and unknown ids are ignored),
 * all of them, or the item `before` names and every older one (404 when it is not the agent's).
 * Items are locked by the update, then the counter rows in type order (the lock order of every
 * inbox write), in one transaction: `marked` counts each item once under concurrent calls.
 */
export async function markInboxRead(db: Knex, agentId: string, sel: ReadSelection, now: Date) {
  const marked = await db.transaction(async (trx) => {
    let cond = 'true';
    const bindings: Knex.RawBinding[] = [];
    if ('ids' in sel) {
      cond = 'id = any(?::uuid[])';
      bindings.push([...new Set(sel.ids.map((i) => i.toLowerCase()))]);
    } else if ('before' in sel) {
      const anchor = (await trx.raw('select 1 from inbox_items where id = ? and agent_id = ?', [sel.before, agentId]))
        .rows[0];
      if (!anchor) throw notFound('Inbox item');
      cond = '(created_at, id) <= (select created_at, id from inbox_items where id = ?)';
      bindings.push(sel.before);
    }
    const rows: { type: string }[] = (
      await trx.raw(
        `update inbox_items set read_at = ? where agent_id = ? and read_at is null and ${cond} returning type`,
        [now, agentId, ...bindings],
      )
    ).rows;
    if (rows.length === 0) return 0;
    const byType = new Map<string, number>();
    for (const r of rows) byType.set(r.type, (byType.get(r.type) ?? 0) + 1);
    const types = [...byType.keys()].sort();
    await trx.raw('select 1 from inbox_counts where agent_id = ? and type = any(?) order by type for update', [
      agentId,
      types,
    ]);
    await trx.raw(
      `update inbox_counts ic set unread = ic.unread - d.n
         from unnest(?::text[], ?::int[]) as d(type, n)
        where ic.agent_id = ? and ic.type = d.type`,
      [types, types.map((t) => byType.get(t)!), agentId],
    );
    return rows.length;
  });
  return { marked, unreadCount: (await inboxCounts(db, agentId)).unreadCount };
}

/**
 * Removes items created before `before` (the inbox_prune job: 90 days), a batch at a time, with
 * their counts. Items a concurrent mark-read holds are skipped (the next run takes them), and the
 * counter rows are locked in (agent, type) order, so pruning never deadlocks with a write.
 */
export async function pruneInbox(db: Knex, before: Date, batch = 5000): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await db.transaction(async (trx) => {
      const rows: { agent_id: string; type: string; unread: boolean }[] = (
        await trx.raw(
          `delete from inbox_items where id in (
             select id from inbox_items where created_at < ? order by created_at limit ? for update skip locked)
           returning agent_id, type, read_at is null as unread`,
          [before, batch],
        )
      ).rows;
      if (rows.length === 0) return 0;
      const groups = new Map<string, { agent: string; type: string; n: number; u: number }>();
      for (const r of rows) {
        const k = `${r.agent_id} ${r.type}`;
        const g = groups.get(k) ?? { agent: r.agent_id, type: r.type, n: 0, u: 0 };
        g.n++;
        if (r.unread) g.u++;
        groups.set(k, g);
      }
      const gs = [...groups.values()].sort((a, b) =>
        a.agent === b.agent ? (a.type < b.type ? -1 : 1) : a.agent < b.agent ? -1 : 1,
      );
      const cols = [gs.map((g) => g.agent), gs.map((g) => g.type), gs.map((g) => g.n), gs.map((g) => g.u)];
      await trx.raw(
        `select 1 from inbox_counts ic join unnest(?::uuid[], ?::text[]) as d(agent_id, type)
            on ic.agent_id = d.agent_id and ic.type = d.type
          order by ic.agent_id, ic.type for update of ic`,
        [cols[0], cols[1]],
      );
      await trx.raw(
        `update inbox_counts ic set total = ic.total - d.n, unread = ic.unread - d.u
           from unnest(?::uuid[], ?::text[], ?::int[], ?::int[]) as d(agent_id, type, n, u)
          where ic.agent_id = d.agent_id and ic.type = d.type`,
        cols,
      );
      return rows.length;
    });
    removed += n;
    if (n < batch) return removed;
  }
}
