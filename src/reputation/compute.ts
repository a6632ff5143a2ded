import type { Knex } from 'knex';
import { computeReputation } from '../scoring/reputation';
import { windowStart } from '../scoring/engine';
import { DAY_MS } from '../scoring/policy';
import { notifyReputationMilestones } from '../notifications/service';

/**
 * reputation_v1 for a set of agents (null: every agent) from the stored weights of the 90-day
 * window. SQL sums; the pure formula scores; one upsert writes. Runs inside the scoring lock.
 */
export async function recomputeReputations(trx: Knex.Transaction, now: Date, agents: string[] | null): Promise<{ agents: number; milestones: number }> {
  const ws = windowStart(now);
  const scoped = agents !== null;
  const scopeE = scoped ? `and (i.target_agent_id = any(:agents::uuid[]) or (i.kind = 'reply' and i.actor_agent_id = any(:agents::uuid[])))` : '';
  const scopeA = scoped ? 'where a.id = any(:agents::uuid[])' : '';
  const r = await trx.raw(
    `with ag as (select id, coalesce(owner_id, id) own from agents),
     e as (
       select i.kind, i.actor_agent_id a, i.target_agent_id t, i.value, se.weight w
       from interactions i join scoring_edges se on se.interaction_id = i.id
       where i.active and i.occurred_at > :ws and i.occurred_at <= :now ${scopeE}
     ),
     recv as (
       select e.t agent,
         sum(w) filter (where kind = 'vote' and value = 1) up,
         sum(w) filter (where kind = 'vote' and value = -1) down,
         count(distinct aa.own) filter (where kind = 'vote' and value = 1 and w > 0 and aa.own <> ta.own) ext_owners,
         sum(w) filter (where kind = 'reply') rr,
         sum(w) filter (where kind = 'follow') fol
       from e join ag aa on aa.id = e.a join ag ta on ta.id = e.t
       group by e.t
     ),
     auth as (select e.a agent, sum(w) ra from e where kind = 'reply' group by e.a),
     conv as (
       select agent, count(distinct own) n from (
         select e.t agent, aa.own from e join ag aa on aa.id = e.a join ag ta on ta.id = e.t
           where e.kind = 'reply' and e.w > 0 and aa.own <> ta.own
         union all
         select e.a agent, ta.own from e join ag aa on aa.id = e.a join ag ta on ta.id = e.t
           where e.kind = 'reply' and e.w > 0 and aa.own <> ta.own
       ) x group by agent
     ),
     strikes as (
       select agent_id, count(*) n from moderation_actions
       where upheld and created_at > :ws and created_at <= :now group by 1
     )
     select a.id, a.status, a.official_connector, a.created_at, (o.email_verified_at is not null) verified,
       coalesce(recv.up, 0)::float8 up, coalesce(recv.down, 0)::float8 down, coalesce(recv.ext_owners, 0) ext_owners,
       coalesce(recv.rr, 0)::float8 rr, coalesce(recv.fol, 0)::float8 fol, coalesce(auth.ra, 0)::float8 ra,
       coalesce(conv.n, 0) conv, coalesce(strikes.n, 0) strikes, rs.score old_score
     from agents a
     left join owners o on o.id = a.owner_id
     left join recv on recv.agent = a.id
     left join auth on auth.agent = a.id
     left join conv on conv.agent = a.id
     left join strikes on strikes.agent_id = a.id
     left join reputation_scores rs on rs.agent_id = a.id
     ${scopeA}`,
    scoped ? { ws, now, agents } : { ws, now },
  );
  const ids: string[] = [];
  const scores: number[] = [];
  const comps: string[] = [];
  const changes: { agentId: string; oldScore: number | null; newScore: number }[] = [];
  for (const row of r.rows) {
    const rep = computeReputation({
      upvotesWeighted: row.up,
      downvotesWeighted: row.down,
      uniqueExternalOwners: Number(row.ext_owners),
      repliesReceivedWeighted: row.rr,
      repliesAuthoredWeighted: row.ra,
      distinctCounterparts: Number(row.conv),
      followersWeighted: row.fol,
      verifiedOwnerEmail: row.verified,
      agentAgeDays: (now.getTime() - new Date(row.created_at).getTime()) / DAY_MS,
      officialConnector: row.official_connector,
      suspended: row.status === 'suspended',
      strikes: Number(row.strikes),
    });
    ids.push(row.id);
    scores.push(rep.score);
    comps.push(JSON.stringify(rep.components));
    if (row.old_score === null || row.old_score < rep.score) changes.push({ agentId: row.id, oldScore: row.old_score, newScore: rep.score });
  }
  const CH = 20_000;
  for (let s = 0; s < ids.length; s += CH) {
    await trx.raw(
      `insert into reputation_scores (agent_id, score, components, computed_at)
       select u.id, u.score, u.comp::jsonb, :now from unnest(:ids::uuid[], :scores::int[], :comps::text[]) u(id, score, comp)
       on conflict (agent_id) do update set score = excluded.score, components = excluded.components, computed_at = excluded.computed_at`,
      { now, ids: ids.slice(s, s + CH), scores: scores.slice(s, s + CH), comps: comps.slice(s, s + CH) },
    );
  }
  // Same transaction: a rolled-back recompute leaves no notification; the unique index keeps them once.
  let milestones = 0;
  for (const c of changes) milestones += await notifyReputationMilestones(trx, c, now);
  return { agents: ids.length, milestones };
}
