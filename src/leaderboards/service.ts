import type { Knex } from 'knex';
import { TtlCache } from '../cache/ttl';
import { jsonBytes } from '../http/json-bytes';
import { AppError } from '../errors';
import { CATEGORIES, DEFAULT_MODEL, LEADERBOARD, Model } from '../scoring/policy';
import { isCategory, type LeaderboardEntry } from '../scoring/leaderboard';
import { checkWeek, compareWeeks, formatWeek, parseWeek, weekEnd, weekOf, weekStart } from '../scoring/week';
import { firstFreezableWeek, SNAPSHOT_TABLES } from '../scoring/leaderboard-snapshots';

/** Reads of precomputed snapshots only (never aggregates per request). */

export interface LeaderboardQuery {
  category?: string;
  week?: string;
  limit?: number;
  /** reputation_v1 (default) or reputation_v2 weights */
  model?: Model;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * Serialized `{data, meta}` bodies by (week, category, limit, current or not)
 * (`deps.caches.leaderboards`): snapshots change only when a scoring run rewrites them (about
 * every 15 minutes), so a few seconds of TTL serve nearly every read from memory. A scoring run
 * (worker, CLI, any process) announces `snapshots` once it committed, which empties this cache in
 * every process at once (src/caches.ts); the TTL bounds a lost notification.
 */
export const LEADERBOARD_CACHE_TTL_MS = 5000;
export function createLeaderboardCache(): TtlCache<Buffer> {
  return new TtlCache<Buffer>({ name: 'leaderboards', ttlMs: LEADERBOARD_CACHE_TTL_MS, maxEntries: 1000 });
}

let weekMemo: { minute: number; week: ReturnType<typeof weekOf>; key: string } | null = null;
/** The ISO week of `now` and its key, computed once per minute (weeks start on a minute boundary). */
export function currentWeek(now: Date): { week: ReturnType<typeof weekOf>; key: string } {
  const minute = Math.floor(now.getTime() / 60_000);
  if (weekMemo?.minute !== minute) {
    const week = weekOf(now);
    weekMemo = { minute, week, key: formatWeek(week) };
  }
  return weekMemo;
}

/** GET /leaderboards as its serialized body, through the cache. */
export async function getLeaderboardBody(
  db: Knex,
  cache: TtlCache<Buffer>,
  q: LeaderboardQuery,
  now: Date,
): Promise<Buffer> {
  const { week, category } = resolveLeaderboardQuery(q, now);
  const isCurrent = compareWeeks(week, currentWeek(now).week) === 0;
  const model = q.model ?? DEFAULT_MODEL;
  const key = `${formatWeek(week)}|${category}|${q.limit ?? LEADERBOARD.defaultLimit}|${isCurrent ? 'current' : 'past'}|${model}`;
  return cache.load(key, async () => jsonBytes(await getLeaderboard(db, q, now)));
}

/** Validates category and week (400 INVALID_CATEGORY / INVALID_WEEK); pure. */
function resolveLeaderboardQuery(q: LeaderboardQuery, now: Date) {
  const category = q.category ?? 'overall';
  if (!isCategory(category))
    throw new AppError('INVALID_CATEGORY', `Unknown category; use one of ${CATEGORIES.join(', ')}`);
  let week = currentWeek(now).week;
  if (q.week !== undefined) {
    const c = checkWeek(q.week, now);
    if (!c.ok) {
      const why =
        c.reason === 'future'
          ? 'is in the future'
          : c.reason === 'impossible'
            ? 'does not exist'
            : 'must match YYYY-Www';
      throw new AppError('INVALID_WEEK', `Week ${why}`);
    }
    week = c.week;
  }
  return { week, category };
}

export async function getLeaderboard(db: Knex, q: LeaderboardQuery, now: Date) {
  const { week, category } = resolveLeaderboardQuery(q, now);
  const current = weekOf(now);
  const key = formatWeek(week);
  const isCurrent = compareWeeks(week, current) === 0;
  const limit = q.limit ?? LEADERBOARD.defaultLimit;
  const row = await db(SNAPSHOT_TABLES[q.model ?? DEFAULT_MODEL])
    .where({ week: key, category })
    .first();
  let status: 'live' | 'final' | 'pending';
  let entries: LeaderboardEntry[] = [];
  let computedAt: string | null = null;
  if (row) {
    // A live snapshot of an ended week is the last one before freezing: shown, but pending.
    status = row.status === 'final' ? 'final' : isCurrent ? 'live' : 'pending';
    entries = row.entries;
    computedAt = iso(row.computed_at);
  } else if (isCurrent) {
    status = 'pending';
  } else {
    const first = await firstFreezableWeek(db, current);
    if (!first || compareWeeks(week, first) < 0)
      throw new AppError('LEADERBOARD_NOT_FOUND', `No leaderboard for ${key}: it is before the first activity`);
    status = 'pending';
  }
  return {
    data: {
      week: key,
      weekStart: weekStart(week).toISOString(),
      weekEnd: weekEnd(week).toISOString(),
      category,
      status,
      computedAt,
      entries: entries.slice(0, limit).map((e) => ({
        rank: e.rank,
        score: e.score,
        components: e.components,
        agent: { handle: '@' + e.agent.handle, displayName: e.agent.displayName },
      })),
    },
    meta: { categories: [...CATEGORIES] },
  };
}

export async function listWeeks(db: Knex, now: Date) {
  const current = weekOf(now);
  const currentKey = formatWeek(current);
  const rows = await db('leaderboard_snapshots')
    .select('week')
    .select(db.raw(`bool_and(status = 'final') as final`))
    .max('computed_at as computed_at')
    .groupBy('week')
    .orderBy('week', 'desc');
  const weeks = (rows as { week: string; final: boolean; computed_at: Date | null }[])
    .filter((r) => parseWeek(r.week) && compareWeeks(parseWeek(r.week)!, current) <= 0)
    .map((r) => ({
      week: r.week as string,
      status: r.final ? 'final' : r.week === currentKey ? 'live' : 'pending',
      computedAt: iso(r.computed_at),
    }));
  if (!weeks.some((w) => w.week === currentKey))
    weeks.unshift({ week: currentKey, status: 'pending', computedAt: null });
  return { currentWeek: currentKey, weeks };
}
