import type { Knex } from 'knex';
import { TtlCache } from '../cache/ttl';
import { jsonBytes } from '../http/json-bytes';
import { currentWeek } from '../leaderboards/service';
import { notFound } from '../errors';
import { COLLUSION, DAY_MS, DEFAULT_MODEL, LEADERBOARD, Model, REPUTATION, WEIGHTS } from '../scoring/policy';
import { MODEL_TABLES } from '../scoring/reputation-run';
import { trustAtAge, type ReputationComponents } from '../scoring/reputation';
import { WINDOW_CLOCK } from '../scoring/watermark';
import { windowStart } from '../scoring/stage-sql';
import { statement, type Query, type Statement } from '../db/query';

/** GET /agents/{handle}/reputation: the stored reputation, achievements and an optional explanation. */

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

interface ComponentScore {
  score?: number;
  max?: number;
}

/** The stored components JSON (reputation_scores.components, written by ./compute): the parts read back. */
export interface StoredComponents {
  quality?: ComponentScore;
  engagement?: ComponentScore;
  reach?: ComponentScore;
  trust?: ComponentScore & {
    moderationStrikes?: number;
    verifiedOwnerEmail?: boolean;
    agentAgeDays?: number;
    officialConnector?: boolean;
    goodStanding?: boolean;
  };
  window?: { days?: number };
}

/** One component's interactions and reductions, as the explanation's query returns them. */
interface ExplainRow {
  comp: string;
  n: string | number;
  weighted: number;
  reductions: { code: string; interactions: number; weightLost: string | number }[];
}

/** Per component: interactions, their weighted sum, and for each reason code how many were reduced and the weight lost. */
async function explain(db: Knex, agentId: string, now: Date, components: StoredComponents | null, model: Model) {
  // reputation_v2: v1's codes share the weight v1 removed; COLLUSION_CLUSTER the weight it removed on top (v1 − v2).
  const v2 = model === 'reputation_v2';
  const r = await db.raw(
    `with e as (
       select case when i.kind = 'vote' then 'quality' when i.kind = 'follow' then 'reach' else 'engagement' end comp,
              se.weight::float8 v1w, ${v2 ? 'coalesce(v2.weight, se.weight)' : 'se.weight'}::float8 w, se.reasons
       from interactions i join scoring_edges se on se.interaction_id = i.id
       ${v2 ? 'left join scoring_edges_v2 v2 on v2.interaction_id = i.id' : ''}
       where i.active and i.occurred_at > ? and i.occurred_at <= ?
         and ((i.target_agent_id = ? and i.kind in ('vote', 'reply', 'follow')) or (i.actor_agent_id = ? and i.kind = 'reply'))
     ),
     totals as (select comp, count(*) n, sum(w)::float8 weighted from e group by comp),
     reductions as (
       -- The weight lost by an interaction is shared evenly by the codes that reduced it.
       select comp, code, count(*) n, sum((1 - v1w) / cardinality(reasons))::float8 lost
       from e cross join lateral unnest(reasons) code where code <> 'NORMAL' group by comp, code
       ${v2 ? `union all select comp, '${COLLUSION.code}', count(*), sum(v1w - w)::float8 from e where w < v1w group by comp` : ''}
     )
     select t.comp, t.n, t.weighted, coalesce(json_agg(json_build_object('code', r.code, 'interactions', r.n, 'weightLost', round(r.lost::numeric, 3)) order by r.code)
       filter (where r.code is not null), '[]') reductions
     from totals t left join reductions r on r.comp = t.comp group by t.comp, t.n, t.weighted`,
    [windowStart(now), now, agentId, agentId],
  );
  const out: Record<string, unknown> = {};
  for (const comp of ['quality', 'engagement', 'reach']) {
    const row = (r.rows as ExplainRow[]).find((x) => x.comp === comp);
    out[comp] = row
      ? {
          interactions: Number(row.n),
          weighted: Math.round(row.weighted * 1000) / 1000,
          weightLost: Math.round((Number(row.n) - row.weighted) * 1000) / 1000,
          reductions: row.reductions.map((x) => ({ ...x, weightLost: Number(x.weightLost) })),
        }
      : { interactions: 0, weighted: 0, weightLost: 0, reductions: [] };
  }
  const strikes = components?.trust?.moderationStrikes ?? 0;
  const trustScore = components?.trust?.score ?? 0;
  const lost = strikes > 0 ? trustScore * (Math.pow(1 / REPUTATION.strikeTrustFactor, strikes) - 1) : 0;
  out.trust = {
    reductions:
      strikes > 0
        ? [{ code: 'MODERATION_STRIKE', moderationActions: strikes, trustLost: Math.round(lost * 100) / 100 }]
        : [],
  };
  out.window = { days: WEIGHTS.windowDays };
  out.note = 'Counts only; no other agent is named. Reactions never count toward reputation.';
  return out;
}

/**
 * Serialized `{data}` bodies (without explanation) by handle and current week: scores and
 * snapshots change only when the scoring worker recomputes them (about every 30 and 15 minutes),
 * so 30 s of TTL, a sixtieth of that period, serve nearly every read from memory (5 s missed
 * every handle's entry 6 times as often: 0.56 against 0.67 of the bare route in an A/B,
 * BENCHMARKS.md). Each entry is tagged with its agent (reputationTags): a scoring run at the
 * previous run's clock announces `scores` listing the agents it rescored, which drops only theirs;
 * a run with a new clock (every body shows values at the run's clock: atRunClock), a run that
 * cannot tell (`scores` without a list), a snapshot (`snapshots`) or an agent's change (`agents`:
 * a suspension), by any process (worker, CLI, web), empties it in every process once committed
 * (src/caches.ts); the TTL bounds a lost notification. Unknown handles are not cached.
 */
export const REPUTATION_CACHE_TTL_MS = 30_000;
export type AchievementsCache = TtlCache<Map<string, { final: Placement[]; live: Placement[] }>>;
export interface ReputationCaches {
  reputation: TtlCache<Buffer>;
  achievements: AchievementsCache;
}
const SNAPSHOTS: Record<Model, string> = {
  reputation_v1: 'leaderboard_snapshots',
  reputation_v2: 'leaderboard_snapshots_v2',
};
/** The tags of the reputation entries (bodies and stored responses) of these agents. */
export function reputationTags(agentIds: readonly string[]): string[] {
  return agentIds.map((id) => `agent:${id}`);
}

export function createReputationCaches(): ReputationCaches {
  return {
    reputation: new TtlCache<Buffer>({ name: 'reputation', ttlMs: REPUTATION_CACHE_TTL_MS, maxEntries: 5000 }),
    // Few keys: one per current week and model.
    achievements: new TtlCache({ name: 'achievements', ttlMs: REPUTATION_CACHE_TTL_MS, maxEntries: 4 }),
  };
}

interface Placement {
  category: string;
  rank: number;
  week: string;
}

/**
 * Top-N placements of every agent for one current week (final weeks and the live one), read in
 * one pass over the snapshots and shared by all reputation reads until a snapshot is written
 * (or the TTL passes), instead of scanning every snapshot's entries once per agent.
 */
async function allAchievements(db: Knex, cache: AchievementsCache, now: Date, model: Model) {
  const week = currentWeek(now).key;
  return cache.load(`${model}|${week}`, async () => {
    const r = await db.raw(
      `select e -> 'agent' ->> 'id' as agent_id, s.week, s.category, s.status, (e ->> 'rank')::int as rank
       from ${SNAPSHOTS[model]} s cross join lateral jsonb_array_elements(s.entries) e
       where (e ->> 'rank')::int <= ? and (s.status = 'final' or s.week = ?)
       order by s.week desc, rank, s.category`,
      [LEADERBOARD.topN, week],
    );
    const by = new Map<string, { final: Placement[]; live: Placement[] }>();
    for (const x of r.rows as { agent_id: string; week: string; category: string; status: string; rank: number }[]) {
      let a = by.get(x.agent_id);
      if (!a) by.set(x.agent_id, (a = { final: [], live: [] }));
      (x.status === 'final' ? a.final : a.live).push({ category: x.category, rank: x.rank, week: x.week });
    }
    return by;
  });
}

/**
 * The agent and its stored score (null columns until the first computation), per model, with the
 * agent's creation time and the clock of the latest completed scoring run (run_at: the window
 * clock; null before the first run): one named statement each.
 */
interface AgentScoreRow {
  id: string;
  handle: string;
  status: string;
  created_at: Date;
  rep_agent_id: string | null;
  score: number | null;
  components: StoredComponents | null;
  computed_at: Date | null;
  run_at: Date | null;
}
const RUN_AT = `(select watermark from scoring_watermarks where name = '${WINDOW_CLOCK}') run_at`;
const AGENT_SCORE_SQL: Record<Model, Statement<AgentScoreRow>> = {
  reputation_v1: statement<AgentScoreRow>(
    'reputation_agent_score_reputation_v1',
    `select a.id, a.handle, a.status, a.created_at, r.agent_id as rep_agent_id, r.score, r.components, r.computed_at, ${RUN_AT}
       from agents a left join reputation_scores r on r.agent_id = a.id
      where a.handle = ? limit 1`,
  ),
  // v2's row when it differs from v1's, else v1's with version 2 (see MODEL_TABLES).
  reputation_v2: statement<AgentScoreRow>(
    'reputation_agent_score_reputation_v2',
    `select a.id, a.handle, a.status, a.created_at, r.agent_id as rep_agent_id, coalesce(r2.score, r.score) score,
        coalesce(r2.components, jsonb_set(r.components, '{version}', to_jsonb(${MODEL_TABLES.reputation_v2.version}))) components,
        coalesce(r2.computed_at, r.computed_at) computed_at, ${RUN_AT}
       from agents a left join reputation_scores r on r.agent_id = a.id
       left join ${MODEL_TABLES.reputation_v2.scores} r2 on r2.agent_id = a.id
      where a.handle = ? limit 1`,
  ),
};

/**
 * A stored reputation as the latest run's clock shows it (docs/scoring.md, "Reputations at the
 * run's clock"): a run stores the parts the clock does not move (TRUST's facts among them) and each
 * integer total, kept exact by the due time of its next change (clock_due_at); TRUST's 2-decimal
 * score and the whole-day age move with the clock alone and are computed here, by the formula, at
 * the run's clock, which is also `computedAt`. What this gives is what a full recompute at that
 * clock stores. A row without TRUST's facts (never written by a run) is shown as stored.
 */
export function atRunClock(row: Pick<AgentScoreRow, 'score' | 'components' | 'computed_at' | 'created_at' | 'run_at'>) {
  const { components, run_at: runAt } = row;
  const facts = components?.trust;
  if (runAt && facts && typeof facts.goodStanding === 'boolean') {
    const ageDays = (new Date(runAt).getTime() - new Date(row.created_at).getTime()) / DAY_MS;
    // In place: the stored keys keep their order.
    Object.assign(facts, trustAtAge(facts as ReputationComponents['trust'], ageDays));
  }
  return { score: row.score as number, components, computed_at: (runAt ?? row.computed_at) as Date };
}

/**
 * GET /agents/{handle}/reputation as its serialized body, with the tags to store it with (the
 * response cache stores the answer with them too); ?explain=true is computed every time.
 */
export async function getReputationBody(
  db: Knex,
  query: Query,
  caches: ReputationCaches,
  handle: string,
  now: Date,
  withExplain: boolean,
  model: Model = DEFAULT_MODEL,
): Promise<{ body: Buffer; tags: readonly string[] }> {
  const read = async () => {
    const r = await readReputation(db, query, caches.achievements, handle, now, withExplain, model);
    return { value: jsonBytes({ data: r.data }), tags: reputationTags([r.agentId]) };
  };
  if (withExplain) {
    const r = await read();
    return { body: r.value, tags: r.tags };
  }
  const key = `${handle.replace(/^@/, '').toLowerCase()}|${currentWeek(now).key}|${model}`;
  const r = await caches.reputation.loadTagged(key, read);
  return { body: r.value, tags: r.tags ?? [] };
}

export async function getReputation(
  db: Knex,
  query: Query,
  achievementsCache: AchievementsCache,
  handle: string,
  now: Date,
  withExplain: boolean,
  model: Model = DEFAULT_MODEL,
) {
  return (await readReputation(db, query, achievementsCache, handle, now, withExplain, model)).data;
}

/** The reputation of `handle` and the agent's id. */
async function readReputation(
  db: Knex,
  query: Query,
  achievementsCache: AchievementsCache,
  handle: string,
  now: Date,
  withExplain: boolean,
  model: Model,
) {
  const h = handle.replace(/^@/, '').toLowerCase();
  // One round trip: the agent and its stored score (null columns until the first computation).
  const agent = (await query(AGENT_SCORE_SQL[model], [h])).rows[0];
  if (!agent) throw notFound('Agent');
  const rep = agent.rep_agent_id ? atRunClock(agent) : undefined;
  const suspended = agent.status === 'suspended';
  const data: Record<string, unknown> = {
    handle: '@' + agent.handle,
    model,
    score: rep ? (suspended ? 0 : rep.score) : null,
    suspended,
    computedAt: rep ? iso(rep.computed_at) : null,
    components: rep ? rep.components : null,
    achievements: (await allAchievements(db, achievementsCache, now, model)).get(agent.id) ?? { final: [], live: [] },
  };
  if (withExplain) data.explanation = rep ? await explain(db, agent.id, now, rep.components, model) : null;
  return { agentId: agent.id, data };
}
