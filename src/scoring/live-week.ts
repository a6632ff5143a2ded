import type { Knex } from 'knex';
import { CATEGORIES, Category, LEADERBOARD, Model, MODELS, SCHEDULE } from './policy';
import { rankingScore, WeekTotals } from './leaderboard';
import {
  RankedWeek,
  rankWeek,
  SnapshotResult,
  SUPPORTERS_COLUMN,
  toWeekTotals,
  WeekTotalsRow,
  weekTotals,
  weekTotalsV2Only,
  writeRankedWeek,
} from './leaderboard-snapshots';
import { formatWeek, IsoWeek, weekEnd, weekStart } from './week';
import { copyInText } from './copy';

/**
 * The live week's snapshots at a cost that follows what changed since the last refresh, not the
 * week's volume. Per-agent totals of the week are kept in leaderboard_week_totals (reputation_v1's
 * for every agent, reputation_v2's for the agents whose v2 totals differ); a refresh sums again
 * only the agents whose received interactions changed since the previous one:
 * - the targets of this week's edges a scoring run rewrote (scoring_edges / scoring_edges_v2
 *   computed_at, stamped with the run's clock; scoped runs write only the edges that changed),
 * - the targets of this week's changed interactions (interactions.updated_at, on the database
 *   clock: a deactivated row, or rows marked after a suspension or a claim, whose edges may be
 *   unchanged).
 * Both looks reach back SCHEDULE.watermarkOverlapSeconds before the last refresh, so a run on a
 * clock a little behind, or a write committed late, is never missed. When more than
 * SCHEDULE.liveRebuildShare of the week's stored agents changed (late in a busy week, most of
 * them), the totals are rebuilt from the whole week instead: one pass per model, written by COPY,
 * cheaper than summing that many agents one lookup each. A full recompute rewrites
 * every edge: it marks the totals stale and the next refresh rebuilds them from the whole week
 * (as does a new week, or a clock set back); the full run's own edges are then left out of later
 * looks (`full_at`). A scoped run drops an interaction's scoring_edges_v2 row only when its v1
 * weight changed or its agents' cluster changed, and stamps its v1 edge in both cases.
 *
 * Each category's 50 entries come from its score's index: the best rows of eligible agents
 * (suspended and service agents never rank, read from agents at the time of the refresh), in the
 * ranking's own order (score rounded as compared, distinct supporting owners, the older agent,
 * the handle in code-point order), then ranked by the same pure rankCategory as a full
 * computation, so a live snapshot equals the one written from every weighted interaction.
 */

interface LiveState {
  week: string;
  at: Date;
  db_at: Date;
  stale: boolean;
  full_at: Date | null;
}

export interface LiveTotals {
  rebuilt: boolean;
  agents: number;
  changed: number | null;
}

export interface LiveResult extends SnapshotResult {
  /**
   * How the totals were brought up to date: summed again for `agents` agents, or rebuilt from the
   * whole week (`agents`: the week's); `changed`: the agents found changed since the previous
   * refresh (null when the totals were stale: a full recompute, a new week, a clock set back).
   */
  totals: LiveTotals;
}

/** Rows per insert statement when storing the totals of changed agents. */
const STORE_CHUNK = 5_000;

/** Called by a full recompute, which rewrites every edge (stamped `now`): the next refresh rebuilds. */
export async function invalidateLiveWeek(trx: Knex.Transaction, now: Date): Promise<void> {
  await trx.raw(
    `insert into leaderboard_live_state (week, at, db_at, stale, full_at) values ('', :now, clock_timestamp(), true, :now)
     on conflict (id) do update set stale = true, full_at = excluded.full_at`,
    { now },
  );
}

/** Brings the live week's totals up to date, then writes its six snapshots under both models. */
export async function writeLiveSnapshots(trx: Knex.Transaction, week: IsoWeek, now: Date): Promise<LiveResult> {
  const totals = await updateLiveTotals(trx, week, now);
  const ranked = {} as RankedWeek;
  for (const m of MODELS) ranked[m] = rankWeek(await bestOfWeek(trx, week, m), week);
  return { ...(await writeRankedWeek(trx, week, 'live', now, ranked)), totals };
}

async function updateLiveTotals(trx: Knex.Transaction, week: IsoWeek, now: Date): Promise<LiveTotals> {
  const key = formatWeek(week);
  const dbNow: Date = (await trx.raw('select clock_timestamp() t')).rows[0].t;
  const st: LiveState | undefined = (await trx.raw('select * from leaderboard_live_state')).rows[0];
  let out: LiveTotals;
  const agents = !st || st.stale || st.week !== key || now < st.at ? null : await changedAgents(trx, week, st);
  if (agents === null || agents.length > SCHEDULE.liveRebuildShare * (await storedAgents(trx, week))) {
    out = { rebuilt: true, agents: await rebuildTotals(trx, week), changed: agents ? agents.length : null };
  } else {
    if (agents.length > 0) {
      await storeTotals(trx, week, 'reputation_v1', agents, await weekTotals(trx, week, 'reputation_v1', agents));
      await storeTotals(trx, week, 'reputation_v2', agents, await weekTotalsV2Only(trx, week, agents));
    }
    out = { rebuilt: false, agents: agents.length, changed: agents.length };
  }
  await trx.raw(
    `insert into leaderboard_live_state (week, at, db_at, stale) values (:key, :now, :dbNow, false)
     on conflict (id) do update set week = excluded.week, at = excluded.at, db_at = excluded.db_at, stale = false`,
    { key, now, dbNow },
  );
  return out;
}

/** Agents whose reputation_v1 totals of `week` are stored (every agent of the week with a weighted interaction). */
async function storedAgents(trx: Knex.Transaction, week: IsoWeek): Promise<number> {
  const r = await trx.raw(
    `select count(*)::int n from leaderboard_week_totals where model = 'reputation_v1' and week = ?`,
    [formatWeek(week)],
  );
  return r.rows[0].n;
}

/**
 * The week's totals from the whole week in one pass per model, written into the emptied table by
 * COPY (no conflicts to look for): returns the agents of the week.
 */
async function rebuildTotals(trx: Knex.Transaction, week: IsoWeek): Promise<number> {
  await trx.raw('truncate leaderboard_week_totals');
  const v1 = await weekTotals(trx, week);
  const rows = [
    ...totalsRows(week, 'reputation_v1', v1),
    ...totalsRows(week, 'reputation_v2', await weekTotalsV2Only(trx, week)),
  ];
  if (rows.length > 0)
    await copyInText(trx, `leaderboard_week_totals (model, week, agent_id, ${NAMES.join(', ')})`, rows);
  // Without statistics on the rewritten table the planner reads the tops by nested scans.
  await trx.raw('analyze leaderboard_week_totals');
  return v1.length;
}

/** Agents whose totals of `week` may differ from the stored ones (see the module comment). */
async function changedAgents(trx: Knex.Transaction, week: IsoWeek, st: LiveState): Promise<string[]> {
  const since = new Date(new Date(st.at).getTime() - SCHEDULE.watermarkOverlapSeconds * 1000);
  const full = st.full_at ? new Date(st.full_at) : null;
  // Two index ranges around the full run's stamp rather than one range that would hold all its edges.
  const stamped = (c: string) =>
    full && full >= since ? `((${c} >= :since and ${c} < :full) or ${c} > :full)` : `${c} >= :since`;
  const r = await trx.raw(
    `select array(
       select i.target_agent_id from scoring_edges se join interactions i on i.id = se.interaction_id
       where ${stamped('se.computed_at')} and i.occurred_at >= :ws and i.occurred_at <= :we
       union
       select i.target_agent_id from scoring_edges_v2 v join interactions i on i.id = v.interaction_id
       where ${stamped('v.computed_at')} and i.occurred_at >= :ws and i.occurred_at <= :we
       union
       select target_agent_id from interactions
       where updated_at > :dbSince and occurred_at >= :ws and occurred_at <= :we
     ) ids`,
    {
      since,
      dbSince: new Date(new Date(st.db_at).getTime() - SCHEDULE.watermarkOverlapSeconds * 1000),
      ws: weekStart(week),
      we: weekEnd(week),
      ...(full && full >= since ? { full } : {}),
    },
  );
  return r.rows[0].ids;
}

/** The totals' score column of each category (rising shares overall's score, only where it applies). */
const scoreColumn = (c: Category) => `score_${c}`;

type ColumnValue = (t: WeekTotals, ws: Date) => number | null;

/** leaderboard_week_totals' value columns: name, SQL type, value from an agent's totals (`ws`: weekStart). */
const COLUMNS: [string, 'float8' | 'int', ColumnValue][] = [
  ['up', 'float8', (t) => t.upvotes],
  ['down', 'float8', (t) => t.downvotes],
  ['rr', 'float8', (t) => t.repliesReceived],
  ['cup', 'float8', (t) => t.commentUpvotes],
  ['smart', 'float8', (t) => t.smart],
  ['funny', 'float8', (t) => t.funny],
  ['fire', 'float8', (t) => t.fire],
  ['savage', 'float8', (t) => t.savage],
  ['crr', 'float8', (t) => t.commentRepliesReceived],
  ['deb', 'int', (t) => t.debaterCounterparts],
  ['s_overall', 'int', (t) => t.supporters.overall],
  ['s_helpful', 'int', (t) => t.supporters.helpful],
  ['s_funny', 'int', (t) => t.supporters.funny],
  ['s_savage', 'int', (t) => t.supporters.savage],
  ...CATEGORIES.map((c): [string, 'float8', ColumnValue] => [
    scoreColumn(c),
    'float8',
    (t, ws) => rankingScore(c, t, ws),
  ]),
];
const NAMES = COLUMNS.map(([n]) => n);

/** One model's totals as rows of COPY's text format (model, week, agent, then COLUMNS; `\\N` is null). */
function totalsRows(week: IsoWeek, model: Model, totals: WeekTotals[]): string[][] {
  const ws = weekStart(week);
  const key = formatWeek(week);
  return totals.map((t) => [model, key, t.agentId, ...COLUMNS.map(([, , f]) => String(f(t, ws) ?? '\\N'))]);
}

/**
 * Stores one model's totals of the week for `agents` (every agent of `totals`, plus those of
 * `agents` that no longer have any: their rows go). A row whose values did not change is left
 * as it is, so its score indexes are not rewritten.
 */
async function storeTotals(
  trx: Knex.Transaction,
  week: IsoWeek,
  model: Model,
  agents: string[],
  totals: WeekTotals[],
): Promise<void> {
  const ws = weekStart(week);
  const key = formatWeek(week);
  if (agents.length > 0)
    await trx.raw(
      `delete from leaderboard_week_totals where model = ? and week = ? and agent_id = any(?::uuid[])
         and agent_id <> all(?::uuid[])`,
      [model, key, agents, totals.map((t) => t.agentId)],
    );
  for (let from = 0; from < totals.length; from += STORE_CHUNK) {
    const chunk = totals.slice(from, from + STORE_CHUNK);
    await trx.raw(
      `insert into leaderboard_week_totals as lt (model, week, agent_id, ${NAMES.join(', ')})
       select ?, ?, u.* from unnest(?::uuid[], ${COLUMNS.map(([, type]) => `?::${type}[]`).join(', ')}) u
       on conflict (model, week, agent_id) do update set ${NAMES.map((n) => `${n} = excluded.${n}`).join(', ')}
       where (${NAMES.map((n) => `lt.${n}`).join(', ')}) is distinct from (${NAMES.map((n) => `excluded.${n}`).join(', ')})`,
      // (a column's values may hold null: rising's score where it does not apply)
      [
        model,
        key,
        chunk.map((t) => t.agentId),
        ...COLUMNS.map(([, , f]) => chunk.map((t) => f(t, ws))),
      ] as unknown[] as Knex.RawBinding[],
    );
  }
}

/**
 * Every agent among some category's best LEADERBOARD.entriesKept of the week under `model`, as
 * the totals they are ranked from; ranking these again gives each category's full top. Under
 * reputation_v2 an agent's row is its v2 row where it has one (a discounted interaction received),
 * else its v1 row.
 */
async function bestOfWeek(trx: Knex.Transaction, week: IsoWeek, model: Model): Promise<WeekTotals[]> {
  const best = (c: Category, rows: 'own' | 'v1 without v2') =>
    `(select t.model, t.agent_id from leaderboard_week_totals t join agents a on a.id = t.agent_id
      where t.model = ${rows === 'own' ? ':model' : `'reputation_v1'`} and t.week = :week and t.${scoreColumn(c)} > 0
        and (a.status = 'suspended' or a.is_service_agent) is not true
        ${
          rows === 'own'
            ? ''
            : `and not exists (select 1 from leaderboard_week_totals o
                 where o.model = :model and o.week = :week and o.agent_id = t.agent_id)`
        }
      order by t.${scoreColumn(c)} desc, t.${SUPPORTERS_COLUMN[c]} desc, date_trunc('milliseconds', a.created_at),
        a.handle collate "C"
      limit :keep)`;
  const parts = CATEGORIES.flatMap((c) =>
    model === 'reputation_v1' ? [best(c, 'own')] : [best(c, 'own'), best(c, 'v1 without v2')],
  );
  const r = await trx.raw(
    `with best as (${parts.join(' union ')})
     select t.agent_id t, a.handle, a.display_name, a.created_at, false excluded, t.up, t.down, t.rr, t.cup, t.smart,
       t.funny, t.fire, t.savage, t.crr, t.deb, t.s_overall, t.s_helpful, t.s_funny, t.s_savage
     from best join leaderboard_week_totals t on t.model = best.model and t.week = :week and t.agent_id = best.agent_id
     join agents a on a.id = t.agent_id`,
    { model, week: formatWeek(week), keep: LEADERBOARD.entriesKept },
  );
  return (r.rows as WeekTotalsRow[]).map(toWeekTotals);
}
