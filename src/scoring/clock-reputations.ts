import type { Knex } from 'knex';
import { DAY_MS, Model, MODELS, REPUTATION } from './policy';
import { windowStart } from './stage-sql';
import { tuneScoped } from './transaction';
import { MODEL_TABLES } from './reputation-run';
import { crossedMilestonesSql, milestoneInsertSql } from './milestones';
import { CLOCK_DUE_SLACK } from './reputation';

/**
 * Stored reputations that only the clock (or the agent's own standing) moves, recomputed in
 * PostgreSQL from the stored base (QUALITY + ENGAGEMENT + REACH, unrounded, per model): TRUST, the
 * total and the trust part of the components, bit for bit what computeReputation (reputation.ts)
 * gives. Readers compose TRUST's score and the whole-day age at the latest run's clock themselves
 * (atRunClock, src/reputation/service.ts), so a run comes here only for the agents whose stored
 * integer total the clock moves (due by clock_due_at: about every 1.5 days per agent under 90 days
 * old, for its milestones and reputation_v2's rows) or whose strikes entered or left the window.
 * Nothing crosses to Node: reading, comparing and writing back components there cost about 65 µs
 * per agent.
 *
 * Float8 in PostgreSQL is the same IEEE double as a JS number, so the formula's operations, done
 * in the same order, give the same values. Three things differ and are written out:
 * - Math.round rounds ties up, PostgreSQL's round(float8) to even: jsRound below;
 * - a JS Date holds whole milliseconds (node-pg drops the microseconds of created_at);
 * - JSON numbers: float8 → numeric prints 15 significant digits, which is the shortest form of
 *   every 2-decimal TRUST score (what JSON.stringify writes); the rest are integers.
 */

/** SQL of JS Math.round(x): the nearest integer, ties toward +∞ (x − floor(x) is exact in float8). */
export function jsRound(x: string): string {
  return `(floor(${x}) + case when (${x}) - floor(${x}) >= 0.5 then 1 else 0 end)`;
}

const T = REPUTATION.trust;
/**
 * PostgreSQL raises an error where a float8 product underflows to 0 (JS gives 0). Past this many
 * strikes TRUST is under 2^-990: its 2-decimal score is 0 and added to a base it cannot reach a
 * rounding tie (no double lies that close to k + 0.5), so 0 gives the same results.
 */
const MAX_STRIKES = 1000;
const f8 = (n: number) => `${n}::float8`;

/**
 * SQL: the relation `src` (columns ver, off, susp: booleans; strikes: int; created_ms: float8, the
 * creation time in whole milliseconds; base, base_v2: float8, either may be null) with TRUST's
 * components (`trust`, jsonb: trustComponents), both models' totals (`score1`, `score2`:
 * totalScore) and when the clock alone next changes them (`due`, timestamptz: clockDueMs), at the
 * clock bound to :nowMs (milliseconds).
 */
export function clockScoresSql(src: string): string {
  const total = (base: string) =>
    `case when ${base} is null then null when x.susp then 0 else greatest(${REPUTATION.min}, least(${REPUTATION.max}, ${jsRound(`${base} + t.t`)}))::int end`;
  // clockDueMs's days to each total's next rounding boundary (least() skips a null base); from 90
  // days of age on, never (to_timestamp gives infinity).
  const until = (x: string) =>
    `(${jsRound(x)} + ${f8(0.5)} - (${x}) - (abs(${x}) + 1) * ${f8(CLOCK_DUE_SLACK)}) / r.rate`;
  const days = `case when d.age < ${f8(T.ageFullDays)} then greatest(${f8(0)}, least(${f8(T.ageFullDays)} - d.age,
        ${until('x.base + t.t')}, ${until('x.base_v2 + t.t')}))
      else 'infinity'::float8 end`;
  return `select x.*, t.t,
      jsonb_build_object('score', (${jsRound(`t.t * ${f8(100)}`)} / ${f8(100)})::numeric, 'max', ${T.max},
        'verifiedOwnerEmail', x.ver, 'agentAgeDays', greatest(0, floor(d.age))::int, 'officialConnector', x.off,
        'goodStanding', g.gs, 'moderationStrikes', x.strikes) trust,
      ${total('x.base')} score1, ${total('x.base_v2')} score2,
      to_timestamp((:nowMs::float8 + (${days}) * ${f8(DAY_MS)} - ${f8(1000)}) / ${f8(1000)}) due
    from ${src} x,
      lateral (select (:nowMs::float8 - x.created_ms) / ${f8(DAY_MS)} age) d,
      lateral (select not x.susp and x.strikes = 0 gs) g,
      lateral (select case when x.strikes > ${MAX_STRIKES} then ${f8(0)}
        else (${T.verifiedOwner} * x.ver::int + ${T.age} * greatest(${f8(0)}, least(${f8(1)}, d.age / ${f8(T.ageFullDays)}))
          + ${T.officialConnector} * x.off::int + ${T.goodStanding} * g.gs::int)
          * power(${f8(REPUTATION.strikeTrustFactor)}, greatest(0, x.strikes)::float8) end t) t,
      lateral (select greatest(${f8(1e-300)}, case when x.strikes > ${MAX_STRIKES} then ${f8(0)}
        else ${f8(T.age)} / ${f8(T.ageFullDays)} * power(${f8(REPUTATION.strikeTrustFactor)}, greatest(0, x.strikes)::float8) end) rate) r`;
}

/**
 * The clock-only update of `agents`: each one's next due time is written (clock_due_at), its
 * score, components and computed_at only where they change, v2 rows kept only
 * where v2's components differ from v1's (a v2 row without a difference left is removed),
 * milestones notified as the summing path does (v1 only). One statement. Agents without a stored
 * base (never scored, or v2's not stored yet) are returned (`rest`) for the summing path.
 */
export async function recomputeClockReputations(
  trx: Knex.Transaction,
  now: Date,
  agents: string[],
  models: readonly Model[] = MODELS,
): Promise<{ agents: number; milestones: number; written: number; rest: string[] }> {
  if (agents.length === 0) return { agents: 0, milestones: 0, written: 0, rest: [] };
  const withV2 = models.includes('reputation_v2');
  await tuneScoped(trx);
  const [t1, t2] = [MODEL_TABLES.reputation_v1, MODEL_TABLES.reputation_v2];
  /** Components `c` with the clock's parts of a model (version, total, trust). */
  const next = (c: string, version: number, score: string) =>
    `${c} || jsonb_build_object('version', ${version}, 'total', ${score}, 'trust', n.trust)`;
  /** Whether stored components `c` differ from next(c, …): the clock moves only these parts. */
  const moved = (c: string, version: number, score: string) =>
    `(${c}->'trust' is distinct from n.trust or ${c}->'total' is distinct from to_jsonb(${score})
      or ${c}->'version' is distinct from to_jsonb(${version}))`;
  // v2's writes look at the few agents with a v2 row or a v2 total apart from v1's, and their
  // stored components (v1's as they were before this statement). same2: v2's components equal
  // v1's but for the version (without a v2 row, its other parts are v1's).
  const v2Writes = `,
     v as materialized (
       select n.*, c.c1, c.c2, n.score2 = n.score1 and (c.c2 is null
           or c.c2 - 'version' - 'total' - 'trust' = c.c1 - 'version' - 'total' - 'trust') same2
       from n, lateral (select (select components from ${t1.scores} where agent_id = n.id) c1,
         (select components from ${t2.scores} where agent_id = n.id) c2) c
       where n.has2 or n.score2 <> n.score1
     ),
     gone as (
       delete from ${t2.scores} x using v where x.agent_id = v.id and v.c2 is not null and v.same2
       returning 1
     ),
     w2 as (
       insert into ${t2.scores} (agent_id, score, components, computed_at)
       select n.id, n.score2, ${next('coalesce(n.c2, n.c1)', t2.version, 'n.score2')}, :now from v n
       where not n.same2 and (n.c2 is null or ${moved('n.c2', t2.version, 'n.score2')})
       on conflict (agent_id) do update
         set score = excluded.score, components = excluded.components, computed_at = excluded.computed_at
       returning 1
     )`;
  // Only narrow rows pass between the steps: the components are read where they are rewritten.
  const r = await trx.raw(
    `with strikes as (
       select agent_id, count(*)::int n from moderation_actions
       where upheld and created_at > :ws and created_at <= :now and agent_id = any(:agents::uuid[])
       group by 1
     ),
     f as materialized (
       select a.id, rs.score old, rs.base, rs.base_v2, v2.agent_id is not null has2,
         a.status = 'suspended' susp, a.official_connector off, o.email_verified_at is not null ver,
         coalesce(s.n, 0) strikes, floor(extract(epoch from a.created_at) * 1000)::float8 created_ms,
         rs.base is not null ${withV2 ? 'and rs.base_v2 is not null' : ''} ok
       from agents a
       left join owners o on o.id = a.owner_id
       left join strikes s on s.agent_id = a.id
       left join ${t1.scores} rs on rs.agent_id = a.id
       left join ${t2.scores} v2 on v2.agent_id = a.id
       where a.id = any(:agents::uuid[])
     ),
     n as materialized (
       select x.id, x.old, x.has2, x.score1, x.score2, x.trust, x.due from (${clockScoresSql('(select * from f where ok)')}) x
     ),
     w1 as (
       update ${t1.scores} r set clock_due_at = n.due, score = n.score1,
         components = case when ${moved('r.components', t1.version, 'n.score1')} then ${next('r.components', t1.version, 'n.score1')} else r.components end,
         computed_at = case when n.score1 is distinct from n.old or ${moved('r.components', t1.version, 'n.score1')} then :now else r.computed_at end
       from n where r.agent_id = n.id and r.agent_id = any(:agents::uuid[])
         and (n.score1 is distinct from n.old or r.clock_due_at is distinct from n.due or ${moved('r.components', t1.version, 'n.score1')})
       returning n.id, n.old, n.score1 score
     ),
     up as materialized (
       select w1.id, c.m, w1.score from w1, lateral ${crossedMilestonesSql('w1.old', 'w1.score')} c
     ),
     ms as (${milestoneInsertSql('up u')} returning 1)${withV2 ? v2Writes : ''}
     select (select count(*) from n)::int done, (select count(*) from ms)::int milestones,
       ((select count(*) from w1)${withV2 ? ' + (select count(*) from w2) + (select count(*) from gone)' : ''})::int written,
       array(select id from f where not ok) rest`,
    { ws: windowStart(now), now, nowMs: now.getTime(), agents },
  );
  const row = r.rows[0];
  return { agents: row.done, milestones: row.milestones, written: row.written, rest: row.rest };
}
