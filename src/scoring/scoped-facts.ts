import type { Knex } from 'knex';
import { idsParam, WINDOW } from './stage-sql';
import { WEIGHTS } from './policy';

/**
 * The stored facts (scoring_agent_facts) of some agents, from their own window rows, as
 * FULL_FACTS_SQL (stage-sql.ts) derives everyone's: what each sent (out_votes, out_replies, and
 * follow_ring with the follows back) and the distinct owners of what it received (ext_owners).
 *
 * Their rows are read as sets through the covering indexes of interactions (sql/124: index-only,
 * one descent per agent and partition), so the work follows the agents and their rows, not the
 * window: a scan of the whole window cost 1.1-1.5 s at 1M interactions and grew with it. The ids
 * reach the scans as a subquery's array: as a constant, 20k ids cost over a second of planning
 * (selectivity estimated id by id), and a subquery's array is sized at a few rows, so the rows
 * land in analyzed temporary tables and the joins after them are planned from their real sizes
 * (by hash: a nested loop over a few estimated rows meant a key lookup of agents per received row).
 */

/**
 * Votes, replies and follows sent to others by :sent (sc_fo), and the rows :received (sc_fi)
 * received that count for diversity or a follow ring.
 */
const ROWS_SQL = {
  sent: `create temp table sc_fo on commit drop as
   select i.actor_agent_id a, i.target_agent_id t, i.kind from interactions i
   where i.actor_agent_id = any(${idsParam('sent')}) and ${WINDOW} and i.actor_agent_id <> i.target_agent_id
     and i.kind in ('vote', 'reply', 'follow')`,
  received: `create temp table sc_fi on commit drop as
   select i.target_agent_id t, i.actor_agent_id a, i.kind from interactions i
   where i.target_agent_id = any(${idsParam('received')}) and ${WINDOW}
     and ((i.kind = 'vote' and i.value = 1) or i.kind in ('reply', 'follow'))`,
};

/**
 * The agents of sc_fo that follow enough others for a follow ring: the follows back they received
 * decide theirs, so their received rows are read too.
 */
const RING_CANDIDATES_SQL = `select array(select a from sc_fo where kind = 'follow' group by a
  having count(*) >= ${WEIGHTS.followRingMinFollows}) ids`;

/**
 * The facts of :ids (x, with their owner or themselves and, where only one side is derived again,
 * their stored facts, looked up by key in key order: a hash of every agent or every agent's facts
 * cost more than the lookups) from sc_fo and sc_fi: what an agent sent (out_votes,
 * out_replies, follow_ring) where :sent marks it, what it received (ext_owners) where :received
 * does, its stored facts otherwise. A follow back of an agent's follow is a follow it received (in
 * sc_fi); ext_owners counts the distinct owners of the senders (hashed: one scan of agents for the
 * received rows' many senders) other than the agent's own.
 */
const FACTS_SQL = `
  insert into scoring_agent_facts (agent_id, out_votes, out_replies, ext_owners, follow_ring, computed_at)
  with x as materialized (
    select x.id, x.s, x.r, a.own, f.* from (select * from unnest(:ids::uuid[], :s::bool[], :r::bool[]) x(id, s, r) order by 1) x
    left join lateral (select coalesce(a.owner_id, a.id) own from agents a where a.id = x.id offset 0) a on true
    left join lateral (select f.out_votes, f.out_replies, f.ext_owners, f.follow_ring from scoring_agent_facts f
                       where not (x.s and x.r) and f.agent_id = x.id offset 0) f on true
  )
  select x.id,
    case when x.s then coalesce(o.ov, 0) else x.out_votes end,
    case when x.s then coalesce(o.orp, 0) else x.out_replies end,
    case when x.r then coalesce(e.n, 0) else x.ext_owners end,
    case when x.s then coalesce(o.ring, false) else x.follow_ring end,
    :now
  from x
  left join (
    select s.a, count(*) filter (where s.kind = 'vote') ov, count(*) filter (where s.kind = 'reply') orp,
      count(*) filter (where s.kind = 'follow') >= ${WEIGHTS.followRingMinFollows}
        and count(b.a) >= ${WEIGHTS.followRingMinShare} * count(*) filter (where s.kind = 'follow') ring
    from sc_fo s left join sc_fi b on s.kind = 'follow' and b.kind = 'follow' and b.a = s.t and b.t = s.a
    group by 1
  ) o on o.a = x.id
  left join (
    select d.t, count(*) n from (
      select distinct r.t, coalesce(aa.owner_id, aa.id) own from sc_fi r join agents aa on aa.id = r.a
    ) d join x on x.id = d.t where x.r and d.own <> x.own group by 1
  ) e on e.t = x.id
  on conflict (agent_id) do update set out_votes = excluded.out_votes, out_replies = excluded.out_replies,
    ext_owners = excluded.ext_owners, follow_ring = excluded.follow_ring, computed_at = excluded.computed_at`;

/**
 * Which facts of an agent to derive again: those of what it sent (out_votes, out_replies,
 * follow_ring: its sent rows, and for a ring the follows back it received) and of what it
 * received (ext_owners: its received rows and their senders' owners, its own owner). An agent
 * of `ids` in neither keeps its stored facts; one without stored facts must be in both.
 */
export interface FactsScope {
  sent: string[];
  received: string[];
}

/**
 * Writes the facts of `ids` at `now` (window from `ws`): every fact, or those `scope` names. In the
 * caller's transaction.
 */
export async function writeScopedFacts(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  ids: string[],
  scope: FactsScope = { sent: ids, received: ids },
): Promise<void> {
  if (ids.length === 0) return;
  await trx.raw('drop table if exists sc_fo, sc_fi');
  await trx.raw(ROWS_SQL.sent, { ws, now, sent: scope.sent });
  const ring: string[] = (await trx.raw(RING_CANDIDATES_SQL)).rows[0].ids;
  const received = [...new Set([...scope.received, ...ring])];
  await trx.raw(ROWS_SQL.received, { ws, now, received });
  await trx.raw('analyze sc_fo; analyze sc_fi');
  const [sent, recv] = [new Set(scope.sent), new Set(scope.received)];
  await trx.raw(FACTS_SQL, { now, ids, s: ids.map((id) => sent.has(id)), r: ids.map((id) => recv.has(id)) });
}
