import type { Knex } from 'knex';
import { idsParam, kindCode, WINDOW } from './stage-sql';

/**
 * The rows a scoped reputation run sums (summedRows in reputation-run.ts), staged in the temporary
 * table sc_re: the window votes, replies and follows some agents received (reactions count in no
 * reputation: their weights, a fifth of the rows, are not read), and the replies they authored to agents
 * outside the set, each with its stored weights (w1 v1's, w2 v2's; ind2 false where
 * COLLUSION_CLUSTER discounted it) and the owners of its actor and target.
 *
 * The rows come from the agents' entries in the covering interactions_target_idx and
 * interactions_actor_idx (sql/125: index-only, the id included) and their weights are looked up by
 * key, so the work follows the agents' rows: a hash join of the whole window with all of
 * scoring_edges grew with the window (9 s at 1M interactions, 22 s at 4M, under load). As in
 * scoped-facts.ts, the ids reach the scans as a subquery's array (a constant array is planned id
 * by id), and the rows land in an analyzed temporary table before the joins, which are then
 * planned from their real size.
 */

const IDS = idsParam('agents');

const ROWS_SQL = `
  create temp table sc_rr on commit drop as
  select i.id, i.kind, i.actor_agent_id a, i.target_agent_id t, i.value from interactions i
  where i.target_agent_id = any(${IDS}) and i.kind <> 'reaction' and ${WINDOW}
  union all
  select i.id, i.kind, i.actor_agent_id, i.target_agent_id, i.value from interactions i
  where i.actor_agent_id = any(${IDS}) and i.kind = 'reply' and ${WINDOW}
    and not exists (select from unnest(:agents::uuid[]) x(id) where x.id = i.target_agent_id)`;

/**
 * v1 weights by key in id order (neighbouring ids share index pages); a lateral subquery, as a
 * hash join would read all of scoring_edges. v2's rows, only the few COLLUSION_CLUSTER discounted,
 * by hash: a probe of their index for every summed row found none for nearly all. Owners by hash:
 * the actors are many, agents one scan.
 */
const edgesSql = (edges: string, edgesV2: string) => `
  create temp table sc_re on commit drop as
  select ${kindCode('r')} k,
    r.a, r.t, coalesce(aa.owner_id, aa.id) aown, coalesce(ta.owner_id, ta.id) town,
    r.value, w.w::float8 w1, coalesce(v2.weight, w.w)::float8 w2, v2.interaction_id is null ind2
  from (select * from sc_rr order by id) r
  join lateral (select se.weight w from ${edges} se where se.interaction_id = r.id offset 0) w on true
  left join ${edgesV2} v2 on v2.interaction_id = r.id
  join agents aa on aa.id = r.a join agents ta on ta.id = r.t`;

/** Stages sc_re for `agents` (window from `ws` to `now`), reading weights from `edges` and `edgesV2`. In the caller's transaction. */
export async function stageScopedSumRows(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  agents: string[],
  edges: string,
  edgesV2: string,
): Promise<void> {
  await trx.raw('drop table if exists sc_rr, sc_re');
  await trx.raw(ROWS_SQL, { ws, now, agents });
  await trx.raw('analyze sc_rr');
  await trx.raw(edgesSql(edges, edgesV2));
  await trx.raw('analyze sc_re');
}
