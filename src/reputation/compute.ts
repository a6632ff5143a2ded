import type { Knex } from 'knex';
import { computeReputation, crossedMilestones } from '../scoring/reputation';
import type { ReputationSums } from '../scoring/reputation-sums';
import { tuneScoped } from '../scoring/transaction';
import { windowStart } from '../scoring/stage-sql';
import { DAY_MS, Model } from '../scoring/policy';
import { copyInText, copyTextField } from '../scoring/copy';

/** Where each model's scores live and how its weight of an interaction is read (v2: v1's unless discounted). */
export const MODEL_TABLES: Record<Model, { scores: string; version: number }> = {
  reputation_v1: { scores: 'reputation_scores', version: 1 },
  reputation_v2: { scores: 'reputation_scores_v2', version: 2 },
};

/**
 * reputation_v1 (or `model`) for a set of agents (null: every agent) from the stored weights of the 90-day
 * window. SQL sums (hash aggregates; distinct owners counted as distinct pairs first), the pure
 * formula scores, one upsert writes. Runs inside the scoring lock.
 *
 * `sums`: a full weight run of this transaction already summed every agent's weights (indexed by
 * the agent numbers of its staging table sc_ag), so only the per-agent facts are read. Weighted
 * sums accumulate in double precision on both paths.
 */
export async function recomputeReputations(
  trx: Knex.Transaction,
  now: Date,
  agents: string[] | null,
  opts: { sums?: ReputationSums; model?: Model } = {},
): Promise<{ agents: number; milestones: number }> {
  const model = opts.model ?? 'reputation_v1';
  const table = MODEL_TABLES[model];
  const ws = windowStart(now);
  const s = opts.sums && agents === null ? opts.sums : null;
  // Staged rows carry the agent number of the full run's sums instead of SQL sums.
  if (agents !== null) await tuneScoped(trx);
  const rows = s ? await stagedRows(trx, ws, now, table.scores) : await summedRows(trx, ws, now, agents, model);
  const out: string[][] = [];
  const ms = { ids: [] as string[], milestones: [] as number[], scores: [] as number[] };
  for (const row of rows) {
    const n = row.n;
    const rep = computeReputation({
      upvotesWeighted: s ? s.up[n] : row.up,
      downvotesWeighted: s ? s.down[n] : row.down,
      uniqueExternalOwners: s ? s.extOwners[n] : Number(row.ext_owners),
      repliesReceivedWeighted: s ? s.rr[n] : row.rr,
      repliesAuthoredWeighted: s ? s.ra[n] : row.ra,
      distinctCounterparts: s ? s.counterparts[n] : Number(row.conv),
      followersWeighted: s ? s.fol[n] : row.fol,
      verifiedOwnerEmail: row.verified,
      agentAgeDays: (now.getTime() - new Date(row.created_at).getTime()) / DAY_MS,
      officialConnector: row.official_connector,
      suspended: row.status === 'suspended',
      strikes: Number(row.strikes),
    });
    rep.components.version = table.version;
    out.push([row.id, String(rep.score), copyTextField(JSON.stringify(rep.components))]);
    // Milestone notifications follow the default model only.
    if (model !== 'reputation_v1') continue;
    for (const m of crossedMilestones(row.old_score, rep.score)) {
      ms.ids.push(row.id);
      ms.milestones.push(m);
      ms.scores.push(rep.score);
    }
  }
  // Streamed with COPY into a staging table, then one upsert.
  await trx.raw('drop table if exists sc_rep');
  await trx.raw('create temp table sc_rep (agent_id uuid, score int, components jsonb) on commit drop');
  await copyInText(trx, 'sc_rep', out);
  await trx.raw(
    `insert into ${table.scores} (agent_id, score, components, computed_at)
     select agent_id, score, components, :now from sc_rep
     on conflict (agent_id) do update set score = excluded.score, components = excluded.components, computed_at = excluded.computed_at`,
    { now },
  );
  const milestones = await notifyMilestones(trx, ms, now);
  return { agents: out.length, milestones };
}

const STRIKES = `strikes as (
    select agent_id, count(*) n from moderation_actions
    where upheld and created_at > :ws and created_at <= :now group by 1
  )`;

/** Per-agent facts and sums in SQL: interactions of the window joined with their stored weights. */
async function summedRows(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  agents: string[] | null,
  model: Model,
): Promise<any[]> {
  const scoped = agents !== null;
  const v2 = model === 'reputation_v2';
  const r = await trx.raw(
    `with e as materialized (
       select (case i.kind when 'vote' then 0 when 'reply' then 1 when 'follow' then 2 else 3 end) k,
         i.actor_agent_id a, i.target_agent_id t, coalesce(aa.owner_id, aa.id) aown, coalesce(ta.owner_id, ta.id) town,
         i.value, ${v2 ? 'coalesce(v2.weight, se.weight)' : 'se.weight'}::float8 w, ${v2 ? 'v2.interaction_id is null' : 'true'} ind
       from ${
         scoped
           ? // Two index-friendly branches (received; replies authored to agents outside the set) instead of one OR.
             `(select * from interactions where target_agent_id = any(:agents::uuid[])
               union all
               select * from interactions where kind = 'reply' and actor_agent_id = any(:agents::uuid[])
                 and not (target_agent_id = any(:agents::uuid[])))`
           : 'interactions'
       } i join scoring_edges se on se.interaction_id = i.id
       ${v2 ? 'left join scoring_edges_v2 v2 on v2.interaction_id = i.id' : ''}
       join agents aa on aa.id = i.actor_agent_id join agents ta on ta.id = i.target_agent_id
       where i.active and i.occurred_at > :ws and i.occurred_at <= :now
     ),
     recv as (
       select t agent,
         sum(w) filter (where k = 0 and value = 1) up,
         sum(w) filter (where k = 0 and value = -1) down,
         sum(w) filter (where k = 1) rr,
         sum(w) filter (where k = 2) fol
       from e group by t
     ),
     ext as (
       select agent, count(*) n from (select distinct t agent, aown from e where k = 0 and value = 1 and w > 0 and ind and aown <> town) d group by agent
     ),
     auth as (select a agent, sum(w) ra from e where k = 1 group by a),
     conv as (
       select agent, count(*) n from (
         select t agent, aown own from e where k = 1 and w > 0 and ind and aown <> town
         union
         select a agent, town own from e where k = 1 and w > 0 and ind and aown <> town
       ) x group by agent
     ),
     ${STRIKES}
     select a.id, a.status, a.official_connector, a.created_at, (o.email_verified_at is not null) verified,
       coalesce(recv.up, 0)::float8 up, coalesce(recv.down, 0)::float8 down, coalesce(ext.n, 0) ext_owners,
       coalesce(recv.rr, 0)::float8 rr, coalesce(recv.fol, 0)::float8 fol, coalesce(auth.ra, 0)::float8 ra,
       coalesce(conv.n, 0) conv, coalesce(strikes.n, 0) strikes, rs.score old_score
     from agents a
     left join owners o on o.id = a.owner_id
     left join recv on recv.agent = a.id
     left join ext on ext.agent = a.id
     left join auth on auth.agent = a.id
     left join conv on conv.agent = a.id
     left join strikes on strikes.agent_id = a.id
     left join ${MODEL_TABLES[model].scores} rs on rs.agent_id = a.id
     ${scoped ? 'where a.id = any(:agents::uuid[])' : ''}`,
    scoped ? { ws, now, agents } : { ws, now },
  );
  return r.rows;
}

/** Per-agent facts of every staged agent, with its number `n` in the full run's sums. */
async function stagedRows(trx: Knex.Transaction, ws: Date, now: Date, scores: string): Promise<any[]> {
  const r = await trx.raw(
    `with ${STRIKES}
     select ag.n, a.id, a.status, a.official_connector, a.created_at, ag.verified, coalesce(strikes.n, 0) strikes, rs.score old_score
     from sc_ag ag join agents a on a.id = ag.id
     left join strikes on strikes.agent_id = a.id
     left join ${scores} rs on rs.agent_id = a.id`,
    { ws, now },
  );
  return r.rows;
}

/**
 * reputation_milestone notifications in one statement, the rows notifyReputationMilestones
 * (src/notifications/service.ts) writes one by one: same type, scope key, data and link, in the
 * same transaction (a rolled-back recompute leaves none), kept once by the same unique index.
 */
async function notifyMilestones(
  trx: Knex.Transaction,
  ms: { ids: string[]; milestones: number[]; scores: number[] },
  now: Date,
): Promise<number> {
  if (ms.ids.length === 0) return 0;
  const r = await trx.raw(
    `insert into notifications (owner_id, type, agent_id, category, week, scope_key, data, href, created_at)
     select a.owner_id, 'reputation_milestone', a.id, null, null, u.m::text,
       jsonb_build_object('category', null, 'week', null, 'rank', null, 'handle', '@' || a.handle, 'milestone', u.m, 'score', u.score),
       '/a/' || a.handle, :now
     from unnest(:ids::uuid[], :ms::int[], :scores::int[]) u(id, m, score) join agents a on a.id = u.id
     where a.owner_id is not null
     on conflict do nothing`,
    { ids: ms.ids, ms: ms.milestones, scores: ms.scores, now },
  );
  return r.rowCount;
}
