import type { Knex } from 'knex';
import { crossedMilestones } from '../scoring/reputation';
import { UUID_RE } from '../text/patterns';
import { decodeCursor, encodeCursor, TimeIdCursor } from '../db/keyset';

/**
 * Owner notifications, each sent exactly once. Exported for the scoring jobs — names kept stable:
 *
 *   notifyOnce(db, { ownerId, type, agentId?, category?, week?, scopeKey?, data?, href, now? })
 *       → Promise<boolean>  (true when inserted; false when it already existed)
 *   notifyFromLeaderboard(db, { category, week, status: 'live'|'final'|'pending',
 *                               entries: [{ rank, agentId, handle }] }) → Promise<number> (inserted)
 *       live  : leaderboard_top10 for ranks 1..10, leaderboard_rank1 for rank 1
 *       final : leaderboard_weekly_result for ranks 1..10
 *   notifyReputationMilestones(db, { agentId, oldScore, newScore }) → Promise<number> (inserted)
 *       reputation_milestone for each of 100, 250, 500, 750 crossed upward (old < m <= new)
 *
 * `db` may be a transaction: call these inside the job's write so a rolled-back recompute leaves
 * no notification. Each is idempotent: the UNIQUE index on (owner, type, agent, category, week,
 * scope_key) makes recomputation never repeat a notification, under any concurrency.
 * Unowned agents have no one to notify: nothing is inserted for them.
 */

export const NOTIFICATION_TYPES = [
  'leaderboard_top10',
  'leaderboard_rank1',
  'leaderboard_weekly_result',
  'reputation_milestone',
  'webhook_disabled',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export const TOP_N = 10;

export interface NotifyInput {
  ownerId: string;
  type: NotificationType;
  agentId?: string | null;
  category?: string | null;
  week?: string | null;
  /** Extra dedupe part when (agent, category, week) is not enough (milestone, webhook). */
  scopeKey?: string;
  /** Shown as `data` with category, week, rank, handle always present (null when absent). */
  data?: Record<string, unknown>;
  /** Site-relative link. */
  href: string;
  now?: Date;
}

type Db = Knex | Knex.Transaction;

export async function notifyOnce(db: Db, n: NotifyInput): Promise<boolean> {
  const rows = await db.raw(
    `insert into notifications (owner_id, type, agent_id, category, week, scope_key, data, href, created_at)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, coalesce(?::timestamptz, now()))
     on conflict do nothing
     returning id`,
    [
      n.ownerId,
      n.type,
      n.agentId ?? null,
      n.category ?? null,
      n.week ?? null,
      n.scopeKey ?? '',
      JSON.stringify(n.data ?? {}),
      n.href,
      n.now ?? null,
    ],
  );
  return rows.rows.length > 0;
}

export function leaderboardHref(category: string, week: string): string {
  return `/leaderboards?category=${encodeURIComponent(category)}&week=${encodeURIComponent(week)}`;
}

async function ownersOf(db: Db, agentIds: string[]): Promise<Map<string, { ownerId: string; handle: string }>> {
  if (agentIds.length === 0) return new Map();
  const rows: { id: string; owner_id: string; handle: string }[] = await db('agents')
    .whereIn('id', agentIds)
    .whereNotNull('owner_id')
    .select('id', 'owner_id', 'handle');
  return new Map(rows.map((r) => [r.id, { ownerId: r.owner_id, handle: r.handle }]));
}

export interface SnapshotForNotifications {
  category: string;
  week: string;
  status: 'live' | 'final' | 'pending';
  entries: { rank: number; agentId: string; handle?: string }[];
}

/** Notifications for one leaderboard snapshot (see the header). Returns how many were new. */
export async function notifyFromLeaderboard(db: Db, snap: SnapshotForNotifications, now?: Date): Promise<number> {
  if (snap.status === 'pending') return 0;
  const top = snap.entries.filter((e) => e.rank >= 1 && e.rank <= TOP_N);
  const owners = await ownersOf(
    db,
    top.map((e) => e.agentId),
  );
  const href = leaderboardHref(snap.category, snap.week);
  let inserted = 0;
  for (const e of top) {
    const o = owners.get(e.agentId);
    if (!o) continue;
    const base = { ownerId: o.ownerId, agentId: e.agentId, category: snap.category, week: snap.week, href, now };
    const data = { category: snap.category, week: snap.week, rank: e.rank, handle: '@' + o.handle };
    const types: NotificationType[] =
      snap.status === 'final'
        ? ['leaderboard_weekly_result']
        : e.rank === 1
          ? ['leaderboard_top10', 'leaderboard_rank1']
          : ['leaderboard_top10'];
    for (const type of types) if (await notifyOnce(db, { ...base, type, data })) inserted++;
  }
  return inserted;
}

/** reputation_milestone notifications for the thresholds crossed (see the header). */
export async function notifyReputationMilestones(
  db: Db,
  r: { agentId: string; oldScore: number | null; newScore: number | null },
  now?: Date,
): Promise<number> {
  const crossed = r.newScore === null ? [] : crossedMilestones(r.oldScore, r.newScore);
  if (crossed.length === 0) return 0;
  const o = (await ownersOf(db, [r.agentId])).get(r.agentId);
  if (!o) return 0;
  let inserted = 0;
  for (const m of crossed) {
    const ok = await notifyOnce(db, {
      ownerId: o.ownerId,
      type: 'reputation_milestone',
      agentId: r.agentId,
      scopeKey: String(m),
      data: { category: null, week: null, rank: null, handle: '@' + o.handle, milestone: m, score: r.newScore },
      href: `/a/${o.handle}`,
      now,
    });
    if (ok) inserted++;
  }
  return inserted;
}

export interface NotificationItem {
  id: string;
  type: string;
  href: string;
  data: Record<string, unknown>;
  readAt: string | null;
  createdAt: string;
}

type Cursor = TimeIdCursor;
export { decodeCursor, encodeCursor };

/** A row of `notifications` (category and week are columns too: the deduplication key). */
interface NotificationRow {
  id: string;
  type: string;
  href: string;
  data: Record<string, unknown> | null;
  category?: string | null;
  week?: string | null;
  read_at: Date | null;
  created_at: Date;
}

function toItem(r: NotificationRow): NotificationItem {
  const data = r.data ?? {};
  return {
    id: r.id,
    type: r.type,
    href: r.href,
    data: {
      ...data,
      category: data.category ?? r.category ?? null,
      week: data.week ?? r.week ?? null,
      rank: data.rank ?? null,
      handle: data.handle ?? null,
    },
    readAt: r.read_at ? new Date(r.read_at).toISOString() : null,
    createdAt: new Date(r.created_at).toISOString(),
  };
}

export async function unreadCount(db: Db, ownerId: string): Promise<number> {
  const row = await db('notifications')
    .where({ owner_id: ownerId })
    .whereNull('read_at')
    .count<{ count: number }[]>('* as count')
    .first();
  return Number(row?.count ?? 0);
}

/** Newest first, keyset-paginated on (created_at, id) at microsecond precision. */
export async function listNotifications(db: Db, ownerId: string, opts: { limit: number; cursor?: Cursor | null }) {
  const q = db('notifications')
    .where({ owner_id: ownerId })
    .select('*', db.raw('(extract(epoch from created_at) * 1000000)::bigint as us'))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(opts.limit + 1);
  if (opts.cursor)
    q.whereRaw(`(created_at, id) < (timestamptz 'epoch' + ? * interval '1 microsecond', ?::uuid)`, [
      opts.cursor.us,
      opts.cursor.id,
    ]);
  const rows: (NotificationRow & { us: string })[] = await q;
  const page = rows.slice(0, opts.limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > opts.limit && last ? encodeCursor({ us: Number(last.us), id: last.id }) : null;
  return { items: page.map(toItem), unreadCount: await unreadCount(db, ownerId), nextCursor };
}

/** Marks the caller's own unread notifications read; others' or unknown ids are ignored. */
export async function markRead(db: Knex, ownerId: string, sel: { ids?: string[]; all?: boolean }, now: Date) {
  const q = db('notifications').where({ owner_id: ownerId }).whereNull('read_at');
  if (!sel.all) {
    const ids = [...new Set((sel.ids ?? []).filter((i) => UUID_RE.test(i)).map((i) => i.toLowerCase()))];
    if (ids.length === 0) return { marked: 0, unreadCount: await unreadCount(db, ownerId) };
    q.whereIn('id', ids);
  }
  const marked = await q.update({ read_at: now });
  return { marked: Number(marked), unreadCount: await unreadCount(db, ownerId) };
}
