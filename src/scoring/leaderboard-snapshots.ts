import type { Knex } from 'knex';
import { CATEGORIES, Category, LEADERBOARD, Model, MODELS, SCHEDULE } from './policy';
import { LeaderboardEntry, rankCategory, WeekTotals } from './leaderboard';
import { addWeeks, compareWeeks, formatWeek, IsoWeek, parseWeek, weekEnd, weekOf, weekStart } from './week';
import { notifyFromLeaderboard } from '../notifications/service';

/**
 * Weekly snapshots. SQL sums the week's weighted interactions per agent; the pure ranking
 * orders them; all six categories of a week are written in one statement, inside the scoring
 * lock. A final snapshot is never rewritten (the upsert skips it and a trigger forbids it).
 */

/**
 * The weights are real (float4); summed as real, the totals would depend on the order the rows
 * arrive in (float4 rounding at every step) and a score could differ in its third decimal between
 * two runs over the same data. As float8 every such sum is exact, so any run gives the same totals.
 */
/** Snapshot table of each model; v1's is the one the contract names, v2's has the same shape. */
export const SNAPSHOT_TABLES: Record<Model, string> = {
  reputation_v1: 'leaderboard_snapshots',
  reputation_v2: 'leaderboard_snapshots_v2',
};

/**
 * One agent's sums of a week as the query returns them: float8 sums as numbers, counts of
 * distinct owners as bigint text.
 */
export interface WeekTotalsRow {
  t: string;
  handle: string;
  display_name: string;
  created_at: Date;
  excluded: boolean;
  up: number;
  down: number;
  rr: number;
  cup: number;
  smart: number;
  funny: number;
  fire: number;
  savage: number;
  crr: number;
  deb: string;
  s_overall: string;
  s_helpful: string;
  s_funny: string;
  s_savage: string;
}

/** The column of WeekTotalsRow counting each category's distinct supporting owners (its tie-break). */
export const SUPPORTERS_COLUMN = {
  overall: 's_overall',
  rising: 's_overall',
  helpful: 's_helpful',
  funny: 's_funny',
  savage: 's_savage',
  debater: 'deb',
} as const satisfies Record<Category, keyof WeekTotalsRow>;

export function toWeekTotals(x: WeekTotalsRow): WeekTotals {
  return {
    agentId: x.t,
    handle: x.handle,
    displayName: x.display_name,
    createdAt: new Date(x.created_at),
    excluded: x.excluded,
    upvotes: x.up,
    downvotes: x.down,
    repliesReceived: x.rr,
    commentUpvotes: x.cup,
    smart: x.smart,
    funny: x.funny,
    fire: x.fire,
    savage: x.savage,
    commentRepliesReceived: x.crr,
    debaterCounterparts: Number(x.deb),
    supporters: Object.fromEntries(CATEGORIES.map((c) => [c, Number(x[SUPPORTERS_COLUMN[c]])])) as Record<
      Category,
      number
    >,
  };
}

/**
 * reputation_v2 reads an interaction's weight from scoring_edges_v2 when COLLUSION_CLUSTER
 * discounted it; such a row adds its weight but its owner does not count as a distinct supporter
 * or counterpart (aown null: count(distinct) skips it).
 */
export async function weekTotals(
  db: Knex | Knex.Transaction,
  week: IsoWeek,
  model: Model = 'reputation_v1',
  /** only these target agents (reputation_v2's shortcut below) */
  targets?: string[],
): Promise<WeekTotals[]> {
  const v2 = model === 'reputation_v2';
  const r = await db.raw(
    `with ag as (select id, coalesce(owner_id, id) own from agents),
     e as (
       select i.kind, i.target_agent_id t, i.value, i.comment_id, i.reaction_type rt,
         ${v2 ? 'coalesce(v2.weight, se.weight)' : 'se.weight'}::float8 w,
         ${v2 ? 'case when v2.interaction_id is null then aa.own end' : 'aa.own'} aown
       from interactions i
       join scoring_edges se on se.interaction_id = i.id
       ${v2 ? 'left join scoring_edges_v2 v2 on v2.interaction_id = i.id' : ''}
       join ag aa on aa.id = i.actor_agent_id
       where i.active and i.occurred_at >= :start and i.occurred_at <= :end and se.weight > 0
         ${targets ? 'and i.target_agent_id = any(:targets::uuid[])' : ''}
     ),
     s as (
       select t,
         coalesce(sum(w) filter (where kind = 'vote' and value = 1), 0)::float8 up,
         coalesce(sum(w) filter (where kind = 'vote' and value = -1), 0)::float8 down,
         coalesce(sum(w) filter (where kind = 'reply'), 0)::float8 rr,
         coalesce(sum(w) filter (where kind = 'vote' and value = 1 and comment_id is not null), 0)::float8 cup,
         coalesce(sum(w) filter (where kind = 'reaction' and rt = 'smart'), 0)::float8 smart,
         coalesce(sum(w) filter (where kind = 'reaction' and rt = 'funny'), 0)::float8 funny,
         coalesce(sum(w) filter (where kind = 'reaction' and rt = 'fire'), 0)::float8 fire,
         coalesce(sum(w) filter (where kind = 'reaction' and rt = 'savage'), 0)::float8 savage,
         coalesce(sum(w) filter (where kind = 'reply' and comment_id is not null), 0)::float8 crr,
         count(distinct aown) filter (where kind = 'reply' and comment_id is not null) deb,
         count(distinct aown) filter (where (kind = 'vote' and value = 1) or kind = 'reply') s_overall,
         count(distinct aown) filter (where (kind = 'vote' and value = 1 and comment_id is not null) or (kind = 'reaction' and rt = 'smart')) s_helpful,
         count(distinct aown) filter (where kind = 'reaction' and rt in ('funny', 'fire')) s_funny,
         count(distinct aown) filter (where kind = 'reaction' and rt in ('savage', 'fire')) s_savage
       from e group by t
     )
     select s.*, a.handle, a.display_name, a.created_at, (a.status = 'suspended' or a.is_service_agent) excluded
     from s join agents a on a.id = s.t`,
    { start: weekStart(week), end: weekEnd(week), ...(targets ? { targets } : {}) },
  );
  return (r.rows as WeekTotalsRow[]).map(toWeekTotals);
}

/**
 * reputation_v2's totals of the agents whose v2 totals of a week may differ from v1's: those that
 * received an interaction COLLUSION_CLUSTER discounted that week (`among`: of these agents only).
 * Every other agent's v2 totals are its v1 totals.
 */
export async function weekTotalsV2Only(
  db: Knex | Knex.Transaction,
  week: IsoWeek,
  among?: string[],
): Promise<WeekTotals[]> {
  const r = await db.raw(
    `select array(select distinct i.target_agent_id from scoring_edges_v2 v join interactions i on i.id = v.interaction_id
       where i.active and i.occurred_at >= :start and i.occurred_at <= :end
         ${among ? 'and i.target_agent_id = any(:among::uuid[])' : ''}) targets`,
    { start: weekStart(week), end: weekEnd(week), ...(among ? { among } : {}) },
  );
  const targets: string[] = r.rows[0].targets;
  return targets.length === 0 ? [] : weekTotals(db, week, 'reputation_v2', targets);
}

/**
 * reputation_v2's totals of a week from v1's: only the agents that received an interaction
 * COLLUSION_CLUSTER discounted that week differ, so only theirs are summed again (under v2); every
 * other agent's are v1's. Equal to weekTotals(db, week, 'reputation_v2').
 */
export async function weekTotalsV2(
  db: Knex | Knex.Transaction,
  week: IsoWeek,
  v1: WeekTotals[],
): Promise<WeekTotals[]> {
  const fixed = new Map((await weekTotalsV2Only(db, week)).map((t) => [t.agentId, t]));
  return fixed.size === 0 ? v1 : v1.map((t) => fixed.get(t.agentId) ?? t);
}

export interface SnapshotResult {
  week: string;
  status: 'live' | 'final';
  /** categories actually written (a final one is never rewritten) */
  written: number;
  entries: Record<Category, number>;
  notifications: number;
}

/** Each model's ranked entries of each category of a week. */
export type RankedWeek = Record<Model, Record<Category, LeaderboardEntry[]>>;

/** The six categories ranked from one model's totals of a week. */
export function rankWeek(totals: WeekTotals[], week: IsoWeek): Record<Category, LeaderboardEntry[]> {
  const ranked = {} as Record<Category, LeaderboardEntry[]>;
  for (const c of CATEGORIES) ranked[c] = rankCategory(c, totals, weekStart(week));
  return ranked;
}

/**
 * Computes and writes the six snapshots of one week under both models from every weighted
 * interaction of the week (a freeze; the live week is kept up to date by live-week.ts).
 */
export async function writeWeekSnapshots(
  trx: Knex.Transaction,
  week: IsoWeek,
  status: 'live' | 'final',
  now: Date,
): Promise<SnapshotResult> {
  const totals = await weekTotals(trx, week);
  const v2 = await weekTotalsV2(trx, week, totals);
  return writeRankedWeek(trx, week, status, now, {
    reputation_v1: rankWeek(totals, week),
    reputation_v2: rankWeek(v2, week),
  });
}

/**
 * Writes the six snapshots of one week under both models; notifies Top 10 / rank 1 / weekly
 * results from the default model's (v1) only.
 */
export async function writeRankedWeek(
  trx: Knex.Transaction,
  week: IsoWeek,
  status: 'live' | 'final',
  now: Date,
  ranked: RankedWeek,
): Promise<SnapshotResult> {
  const key = formatWeek(week);
  const writtenCats = await writeModelSnapshots(trx, week, status, now, 'reputation_v1', ranked.reputation_v1);
  await writeModelSnapshots(trx, week, status, now, 'reputation_v2', ranked.reputation_v2);
  let notifications = 0;
  for (const c of CATEGORIES) {
    if (!writtenCats.has(c)) continue;
    notifications += await notifyFromLeaderboard(
      trx,
      {
        category: c,
        week: key,
        status,
        entries: ranked.reputation_v1[c]
          .slice(0, LEADERBOARD.topN)
          .map((e) => ({ rank: e.rank, agentId: e.agent.id, handle: e.agent.handle })),
      },
      now,
    );
  }
  return {
    week: key,
    status,
    written: writtenCats.size,
    entries: Object.fromEntries(CATEGORIES.map((c) => [c, ranked.reputation_v1[c].length])) as Record<Category, number>,
    notifications,
  };
}

/** One model's six snapshots of a week, in one statement (a final one is never rewritten); the categories written. */
async function writeModelSnapshots(
  trx: Knex.Transaction,
  week: IsoWeek,
  status: 'live' | 'final',
  now: Date,
  model: Model,
  ranked: Record<Category, LeaderboardEntry[]>,
): Promise<Set<string>> {
  const key = formatWeek(week);
  const table = SNAPSHOT_TABLES[model];
  const written = await trx.raw(
    `insert into ${table} (week, category, status, week_start, week_end, computed_at, entries)
     select :week, u.category, :status, :ws, :we, :now, u.entries::jsonb
     from unnest(:cats::text[], :entries::text[]) u(category, entries)
     on conflict (week, category) do update set status = excluded.status, computed_at = excluded.computed_at,
       entries = excluded.entries
     where ${table}.status = 'live'
     returning category`,
    {
      week: key,
      status,
      ws: weekStart(week),
      we: weekEnd(week),
      now,
      cats: [...CATEGORIES],
      entries: CATEGORIES.map((c) => JSON.stringify(ranked[c])),
    },
  );
  return new Set<string>(written.rows.map((r: { category: string }) => r.category));
}

/** Most weeks one freeze run backfills (first deployment over old data). */
const MAX_FREEZE_WEEKS = 60;

/**
 * The first week the freeze writes: that of the first activity or snapshot, at most
 * MAX_FREEZE_WEEKS back; null before any activity. An ended week from it on without a final
 * snapshot is pending (the freeze will write it); an earlier one has none to expect.
 */
export async function firstFreezableWeek(db: Knex, current: IsoWeek): Promise<IsoWeek | null> {
  const first = await db.raw(
    `select least((select min(occurred_at) from interactions), (select min(week_start) from leaderboard_snapshots)) first`,
  );
  if (!first.rows[0].first) return null;
  const w = weekOf(new Date(first.rows[0].first));
  const lowest = addWeeks(current, -MAX_FREEZE_WEEKS);
  return compareWeeks(w, lowest) < 0 ? lowest : w;
}

/** The first week not ended long enough to be frozen (SCHEDULE.freezeGraceSeconds). */
function unfreezable(now: Date): IsoWeek {
  return weekOf(new Date(now.getTime() - SCHEDULE.freezeGraceSeconds * 1000));
}

/**
 * The ended weeks a freeze has to write: `only` when it is ended and not wholly final yet, or
 * else every week from the first freezable one up to last week without a complete final snapshot.
 */
export async function weeksToFreeze(trx: Knex | Knex.Transaction, now: Date, only?: IsoWeek): Promise<IsoWeek[]> {
  const current = unfreezable(now);
  // A week is done when every model has its final snapshots (v2's appear beside v1's from its first freeze on).
  const finals = await trx.raw(
    `select week from (${MODELS.map((m) => `select week, category from ${SNAPSHOT_TABLES[m]} where status = 'final'`).join(' union all ')}) f
     group by week having count(*) = ?`,
    [CATEGORIES.length * MODELS.length],
  );
  const done = new Set<string>(finals.rows.map((r: { week: string }) => r.week));
  if (only) return compareWeeks(only, current) < 0 && !done.has(formatWeek(only)) ? [only] : [];
  const out: IsoWeek[] = [];
  let w = await firstFreezableWeek(trx as Knex, current);
  if (!w) return out;
  for (; compareWeeks(w, current) < 0; w = addWeeks(w, 1)) if (!done.has(formatWeek(w))) out.push(w);
  return out;
}

/**
 * Freezes every ended week from the week of the first activity (or the first snapshot) up to
 * last week that has no complete final snapshot (or only `only`, ended). Idempotent.
 */
export async function freezeEndedWeeks(trx: Knex.Transaction, now: Date, only?: IsoWeek): Promise<SnapshotResult[]> {
  const out: SnapshotResult[] = [];
  if (only) {
    if (compareWeeks(only, unfreezable(now)) >= 0) return out;
    out.push(await writeWeekSnapshots(trx, only, 'final', now));
    return out;
  }
  for (const w of await weeksToFreeze(trx, now)) out.push(await writeWeekSnapshots(trx, w, 'final', now));
  return out;
}

export { parseWeek };
