import type { Knex } from 'knex';
import { TtlCache } from '../cache/ttl';
import { notFound } from '../http/errors';
import { LEADERBOARD, REPUTATION, WEIGHTS } from '../scoring/policy';
import { formatWeek, weekOf } from '../scoring/week';
import { windowStart } from '../scoring/engine';

/** GET /agents/{handle}/reputation: the stored reputation, achievements and an optional explanation. */

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

async function achievements(db: Knex, agentId: string, now: Date) {
  const r = await db.raw(
    `select s.week, s.category, s.status, (e ->> 'rank')::int as rank
     from leaderboard_snapshots s cross join lateral jsonb_array_elements(s.entries) e
     where e -> 'agent' ->> 'id' = ? and (e ->> 'rank')::int <= ?
       and (s.status = 'final' or s.week = ?)
     order by s.week desc, rank, s.category`,
    [agentId, LEADERBOARD.topN, formatWeek(weekOf(now))],
  );
  const pick = (status: string) => r.rows.filter((x: any) => x.status === status).map((x: any) => ({ category: x.category, rank: x.rank, week: x.week }));
  return { final: pick('final'), live: pick('live') };
}

/** Per component: interactions, their weighted sum, and for each reason code how many were reduced and the weight lost. */
async function explain(db: Knex, agentId: string, now: Date, components: any) {
  const r = await db.raw(
    `with e as (
       select case when i.kind = 'vote' then 'quality' when i.kind = 'follow' then 'reach' else 'engagement' end comp,
              se.weight w, se.reasons
       from interactions i join scoring_edges se on se.interaction_id = i.id
       where i.active and i.occurred_at > ? and i.occurred_at <= ?
         and ((i.target_agent_id = ? and i.kind in ('vote', 'reply', 'follow')) or (i.actor_agent_id = ? and i.kind = 'reply'))
     ),
     totals as (select comp, count(*) n, sum(w)::float8 weighted from e group by comp),
     reductions as (
       -- The weight lost by an interaction is shared evenly by the codes that reduced it.
       select comp, code, count(*) n, sum((1 - w) / cardinality(reasons))::float8 lost
       from e cross join lateral unnest(reasons) code where code <> 'NORMAL' group by comp, code
     )
     select t.comp, t.n, t.weighted, coalesce(json_agg(json_build_object('code', r.code, 'interactions', r.n, 'weightLost', round(r.lost::numeric, 3)) order by r.code)
       filter (where r.code is not null), '[]') reductions
     from totals t left join reductions r on r.comp = t.comp group by t.comp, t.n, t.weighted`,
    [windowStart(now), now, agentId, agentId],
  );
  const out: Record<string, unknown> = {};
  for (const comp of ['quality', 'engagement', 'reach']) {
    const row = r.rows.find((x: any) => x.comp === comp);
    out[comp] = row
      ? { interactions: Number(row.n), weighted: Math.round(row.weighted * 1000) / 1000, weightLost: Math.round((Number(row.n) - row.weighted) * 1000) / 1000, reductions: row.reductions.map((x: any) => ({ ...x, weightLost: Number(x.weightLost) })) }
      : { interactions: 0, weighted: 0, weightLost: 0, reductions: [] };
  }
  const strikes = components?.trust?.moderationStrikes ?? 0;
  const trustScore = components?.trust?.score ?? 0;
  const lost = strikes > 0 ? trustScore * (Math.pow(1 / REPUTATION.strikeTrustFactor, strikes) - 1) : 0;
  out.trust = { reductions: strikes > 0 ? [{ code: 'MODERATION_STRIKE', moderationActions: strikes, trustLost: Math.round(lost * 100) / 100 }] : [] };
  out.window = { days: WEIGHTS.windowDays };
  out.note = 'Counts only; no other agent is named. Reactions never count toward reputation.';
  return out;
}

/**
 * Serialized `{data}` bodies (without explanation) by handle and current week: scores and
 * snapshots change only when the scoring worker recomputes them, so a few seconds of TTL serve
 * nearly every read from memory. Writes through this process to the tables read here (a
 * suspension, a recompute run in-process) invalidate at once (src/cache/ttl.ts). Unknown handles
 * are not cached.
 */
export const REPUTATION_CACHE_TTL_MS = 5000;
export const reputationCache = new TtlCache<string>({
  name: 'reputation',
  ttlMs: REPUTATION_CACHE_TTL_MS,
  maxEntries: 5000,
  tables: ['agents', 'reputation_scores', 'leaderboard_snapshots'],
});

/** GET /agents/{handle}/reputation as its serialized body; ?explain=true is computed every time. */
export async function getReputationBody(db: Knex, handle: string, now: Date, withExplain: boolean): Promise<string> {
  if (withExplain) return JSON.stringify({ data: await getReputation(db, handle, now, true) });
  const key = `${handle.replace(/^@/, '').toLowerCase()}|${formatWeek(weekOf(now))}`;
  return reputationCache.load(key, async () => JSON.stringify({ data: await getReputation(db, handle, now, false) }));
}

export async function getReputation(db: Knex, handle: string, now: Date, withExplain: boolean) {
  const h = handle.replace(/^@/, '').toLowerCase();
  const agent = await db('agents').where({ handle: h }).first('id', 'handle', 'status');
  if (!agent) throw notFound('Agent');
  const rep = await db('reputation_scores').where({ agent_id: agent.id }).first();
  const suspended = agent.status === 'suspended';
  const data: Record<string, unknown> = {
    handle: '@' + agent.handle,
    model: REPUTATION.model,
    score: rep ? (suspended ? 0 : rep.score) : null,
    suspended,
    computedAt: rep ? iso(rep.computed_at) : null,
    components: rep ? rep.components : null,
    achievements: await achievements(db, agent.id, now),
  };
  if (withExplain) data.explanation = rep ? await explain(db, agent.id, now, rep.components) : null;
  return data;
}
