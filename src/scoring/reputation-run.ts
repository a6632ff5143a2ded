import type { Knex } from 'knex';
import { baseScore, clockDueMs, computeReputation, crossedMilestones, ReputationInputs, trust } from './reputation';
import { MICRO, microSql, ReputationSums } from './reputation-sums';
import { reputationPartOf, tuneScoped } from './transaction';
import { idsParam, kindCode, windowStart, WINDOW } from './stage-sql';
import { DAY_MS, Model, MODELS } from './policy';
import { copyInText, copyTextField } from './copy';
import { BUILD } from './build-tables';
import { stageScopedSumRows } from './scoped-sum-rows';
import { milestoneInsertSql, notifyMilestones } from './milestones';
import { INPUT_COLUMNS, keepInputs } from './reputation-deltas';

/**
 * Where each model's scores live and the `version` its components carry. reputation_scores_v2
 * holds only the agents whose v2 result differs from v1's (COLLUSION_CLUSTER discounted something
 * they received or authored); any other agent's v2 is its v1 row with version 2.
 */
export const MODEL_TABLES: Record<Model, { scores: string; version: number }> = {
  reputation_v1: { scores: 'reputation_scores', version: 1 },
  reputation_v2: { scores: 'reputation_scores_v2', version: 2 },
};

/** Column suffix of each model in the rows read below. */
const SUFFIX: Record<Model, '1' | '2'> = { reputation_v1: '1', reputation_v2: '2' };

/**
 * One agent's facts for computeReputation: its own columns, then either its sums per model (column
 * suffix 1: v1, 2: v2; float8 sums are numbers, counts bigint text) from summedRows, or, from
 * stagedRows, its number `n` in the full run's sums.
 */
type AgentFactsRow = {
  id: string;
  status: string;
  official_connector: boolean;
  created_at: Date;
  verified: boolean;
  strikes: string | number;
  old_score: number | null;
  n: number;
} & { [sum in `${'up' | 'down' | 'rr' | 'ra' | 'fol'}${'1' | '2'}`]: string | number } & {
  [count in `${'ext' | 'conv'}${'1' | '2'}`]: string | number;
};

/**
 * reputation_v1 and reputation_v2 (or `models`) for a set of agents (null: every agent) from the
 * stored weights of the 90-day window (v2: scoring_edges_v2's weight where COLLUSION_CLUSTER
 * discounted the interaction, v1's otherwise). SQL sums both models in one pass (hash aggregates;
 * distinct owners counted as distinct pairs first), the pure formula scores, one upsert per model
 * writes. Runs inside the scoring lock. Milestone notifications follow v1 only.
 *
 * `sums`: a full weight run of this transaction already summed every agent's weights per model
 * (indexed by the agent numbers of its staging table sc_ag), so only the per-agent facts are read.
 * Weighted sums are of whole millionths on every path (exact in any order).
 *
 * `kept` (incremental runs, after stageInputDeltas): agents with kept inputs
 * (scoring_reputation_inputs) get theirs plus the run's differences (sc_dsum,
 * reputation-deltas.ts); the others are summed from their rows; every agent's inputs are kept for
 * the next run.
 *
 * `build` (a fleet run's partition): weights are read from the run's built edges and scores
 * written to its built reputations; milestones are kept for its publication (publishMilestones),
 * unless `milestones` is false (scores computed again: their v1 milestones are kept already).
 * With `part`, `agents` are that reputations partition's (SCHEDULE.reputationPartitions), summed
 * from the run's built rows (BUILD.rows) under v1's weights for both models: only cluster members
 * have a v2 score of their own, and the publication computes theirs again.
 */
export async function recomputeReputations(
  trx: Knex.Transaction,
  now: Date,
  agents: string[] | null,
  opts: {
    sums?: Partial<Record<Model, ReputationSums>>;
    models?: readonly Model[];
    build?: boolean;
    milestones?: boolean;
    part?: number;
    kept?: boolean;
  } = {},
): Promise<{ agents: number; milestones: number }> {
  const models = opts.models ?? MODELS;
  const ws = windowStart(now);
  const full = agents === null && models.every((m) => opts.sums?.[m]);
  // Staged rows carry the agent number of the full run's sums instead of SQL sums.
  if (agents !== null) await tuneScoped(trx);
  const rows = full
    ? await stagedRows(trx, ws, now)
    : opts.kept && agents !== null
      ? await keptRows(trx, ws, now, agents)
      : await summedRows(trx, ws, now, agents, opts.build, opts.part);
  if (opts.kept) await keepInputs(trx, rows);
  let milestones = 0;
  // v1's components of each row, by agent: v2 stores only the agents whose v2 result differs.
  const v1Json = new Map<string, string>();
  const inputsOf = (model: Model, row: AgentFactsRow): ReputationInputs => {
    const s = full ? opts.sums![model]! : null;
    const x = SUFFIX[model];
    const n = row.n;
    return {
      upvotesWeighted: (s ? s.up[n] : Number(row[`up${x}`])) / MICRO,
      downvotesWeighted: (s ? s.down[n] : Number(row[`down${x}`])) / MICRO,
      uniqueExternalOwners: s ? s.extOwners[n] : Number(row[`ext${x}`]),
      repliesReceivedWeighted: (s ? s.rr[n] : Number(row[`rr${x}`])) / MICRO,
      repliesAuthoredWeighted: (s ? s.ra[n] : Number(row[`ra${x}`])) / MICRO,
      distinctCounterparts: s ? s.counterparts[n] : Number(row[`conv${x}`]),
      followersWeighted: (s ? s.fol[n] : Number(row[`fol${x}`])) / MICRO,
      verifiedOwnerEmail: row.verified,
      agentAgeDays: (now.getTime() - new Date(row.created_at).getTime()) / DAY_MS,
      officialConnector: row.official_connector,
      suspended: row.status === 'suspended',
      strikes: Number(row.strikes),
    };
  };
  // Agents whose inputs are the same under both models (nearly all: COLLUSION_CLUSTER discounted
  // nothing of theirs) have the same components under both: v2 is neither computed nor compared.
  // Every input is compared, not only the sums that differ today, so a new model-dependent input cannot slip past.
  const both = models.includes('reputation_v1') && models.includes('reputation_v2');
  const sameSums = (row: AgentFactsRow) => {
    const [a, b] = [inputsOf('reputation_v1', row), inputsOf('reputation_v2', row)];
    return (Object.keys(a) as (keyof ReputationInputs)[]).every((k) => Object.is(a[k], b[k]));
  };
  const same = both ? rows.map(sameSums) : null;
  for (const model of models) {
    const out: string[][] = [];
    const ms = { ids: [] as string[], milestones: [] as number[], scores: [] as number[] };
    for (const [r, row] of rows.entries()) {
      if (model === 'reputation_v2' && same?.[r]) continue;
      const inputs = inputsOf(model, row);
      const rep = computeReputation(inputs);
      // The same components under both models but for the version when nothing was discounted.
      if (model === 'reputation_v1') {
        if (both && !same![r]) v1Json.set(row.id, JSON.stringify(rep.components));
      } else if (v1Json.get(row.id) === JSON.stringify(rep.components)) continue;
      rep.components.version = MODEL_TABLES[model].version;
      out.push([row.id, String(rep.score), copyTextField(JSON.stringify(rep.components))]);
      if (model !== 'reputation_v1') continue;
      // The parts only interactions move, under each model: what a clock-only update starts from,
      // and when the clock alone next changes a stored total.
      const base = baseScore(inputs);
      const base2 = !models.includes('reputation_v2')
        ? null
        : same?.[r]
          ? base
          : baseScore(inputsOf('reputation_v2', row));
      const due = clockDueMs(inputs, trust(inputs).score, [base, base2], now.getTime());
      const dueText = Number.isFinite(due) ? new Date(due).toISOString() : 'infinity';
      out[out.length - 1].push(String(base), base2 === null ? '\\N' : String(base2), dueText);
      for (const m of crossedMilestones(row.old_score, rep.score)) {
        ms.ids.push(row.id);
        ms.milestones.push(m);
        ms.scores.push(rep.score);
      }
    }
    // Streamed with COPY into a staging table, then one upsert.
    await trx.raw('drop table if exists sc_rep');
    await trx.raw(
      'create temp table sc_rep (agent_id uuid, score int, components jsonb, base float8, base_v2 float8, due timestamptz) on commit drop',
    );
    await copyInText(trx, model === 'reputation_v1' ? 'sc_rep' : 'sc_rep (agent_id, score, components)', out);
    const table = opts.build ? BUILD.reputation[model] : MODEL_TABLES[model].scores;
    if (model !== 'reputation_v1') {
      // Agents of this run whose v2 equals v1 again lose their v2 row (reads fall back to v1's).
      const whose =
        agents === null
          ? 'true'
          : opts.part !== undefined
            ? `${reputationPartOf('t.agent_id')} = :part`
            : 't.agent_id = any(:agents::uuid[])';
      await trx.raw(
        `delete from ${table} t where ${whose} and not exists (select 1 from sc_rep r where r.agent_id = t.agent_id)`,
        agents === null ? {} : { agents, part: opts.part ?? null },
      );
    }
    const v1 = model === 'reputation_v1';
    await trx.raw(
      `insert into ${table} (agent_id, score, components, computed_at${v1 ? ', base, base_v2, clock_due_at' : ''})
       select agent_id, score, components, :now${v1 ? ', base, base_v2, due' : ''} from sc_rep
       on conflict (agent_id) do update set score = excluded.score, components = excluded.components, computed_at = excluded.computed_at
         ${v1 ? ', base = excluded.base, base_v2 = excluded.base_v2, clock_due_at = excluded.clock_due_at' : ''}`,
      { now },
    );
    if (!opts.build) milestones += await notifyMilestones(trx, ms, now);
    else if (ms.ids.length > 0 && opts.milestones !== false) {
      const r = await trx.raw(
        `insert into ${BUILD.milestones} (agent_id, milestone, score) select * from unnest(:ids::uuid[], :ms::int[], :scores::int[])`,
        { ids: ms.ids, ms: ms.milestones, scores: ms.scores },
      );
      milestones += r.rowCount ?? 0;
    }
  }
  return { agents: rows.length, milestones };
}

/** Each summed weight in millionths (reputation-sums.ts MICRO: exact in any order). */
const M1 = microSql('w1');
const M2 = microSql('w2');

/** An agent's own facts beside its sums: its owner (verified email), strikes, stored score. */
const FACT_JOINS = `left join owners o on o.id = a.owner_id
     left join strikes on strikes.agent_id = a.id
     left join reputation_scores rs on rs.agent_id = a.id`;

const STRIKES = `strikes as (
    select agent_id, count(*) n from moderation_actions
    where upheld and created_at > :ws and created_at <= :now group by 1
  )`;

/**
 * Per-agent facts and sums of both models in SQL: interactions of the window joined with their
 * stored weights (w1 v1's, w2 v2's; ind2 false where COLLUSION_CLUSTER discounted the row, which
 * then makes no distinct owner under v2).
 */
async function summedRows(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  agents: string[] | null,
  build = false,
  part?: number,
): Promise<AgentFactsRow[]> {
  const scoped = agents !== null;
  const [edges, edgesV2] = build ? [BUILD.edges, BUILD.edgesV2] : ['scoring_edges', 'scoring_edges_v2'];
  const staged = scoped && !build;
  if (staged) await stageScopedSumRows(trx, ws, now, agents, edges, edgesV2);
  // Staged rows are read from their analyzed table itself: behind a CTE the planner guessed a few
  // rows and sorted them for every sum, where it hashes them now.
  const e = staged ? 'sc_re' : 'e';
  const r = await trx.raw(
    `with ${
      staged
        ? ''
        : part !== undefined
          ? `e as materialized (
       select k, a, t, aown, town, value, w::float8 w1, w::float8 w2, true ind2 from ${BUILD.rows} where part = :part),`
          : `e as materialized (
       select ${kindCode('i')} k,
         i.actor_agent_id a, i.target_agent_id t, coalesce(aa.owner_id, aa.id) aown, coalesce(ta.owner_id, ta.id) town,
         i.value, se.weight::float8 w1, coalesce(v2.weight, se.weight)::float8 w2, v2.interaction_id is null ind2
       from ${
         scoped
           ? // Two index-friendly branches (received; replies authored to agents outside the set) instead of one OR.
             `(select * from interactions where target_agent_id = any(:agents::uuid[])
               union all
               select * from interactions where kind = 'reply' and actor_agent_id = any(:agents::uuid[])
                 and not (target_agent_id = any(:agents::uuid[])))`
           : 'interactions'
       } i join ${edges} se on se.interaction_id = i.id
       left join ${edgesV2} v2 on v2.interaction_id = i.id
       join agents aa on aa.id = i.actor_agent_id join agents ta on ta.id = i.target_agent_id
       where ${WINDOW}),`
    }
     recv as (
       select t agent,
         sum(${M1}) filter (where k = 0 and value = 1) up1, sum(${M2}) filter (where k = 0 and value = 1) up2,
         sum(${M1}) filter (where k = 0 and value = -1) down1, sum(${M2}) filter (where k = 0 and value = -1) down2,
         sum(${M1}) filter (where k = 1) rr1, sum(${M2}) filter (where k = 1) rr2,
         sum(${M1}) filter (where k = 2) fol1, sum(${M2}) filter (where k = 2) fol2
       from ${e} group by t
     ),
     ext as (
       select agent, count(*) filter (where e1) n1, count(*) filter (where e2) n2 from (
         select t agent, aown, bool_or(w1 > 0) e1, bool_or(w2 > 0 and ind2) e2
         from ${e} where k = 0 and value = 1 and aown <> town group by 1, 2
       ) d group by agent
     ),
     auth as (select a agent, sum(${M1}) ra1, sum(${M2}) ra2 from ${e} where k = 1 group by a),
     conv as (
       select agent, count(*) filter (where c1) n1, count(*) filter (where c2) n2 from (
         select agent, own, bool_or(c1) c1, bool_or(c2) c2 from (
           select t agent, aown own, w1 > 0 c1, w2 > 0 and ind2 c2 from ${e} where k = 1 and aown <> town
           union all
           select a agent, town own, w1 > 0 c1, w2 > 0 and ind2 c2 from ${e} where k = 1 and aown <> town
         ) x group by 1, 2
       ) y group by agent
     ),
     ${STRIKES}
     select a.id, a.status, a.official_connector, a.created_at, (o.email_verified_at is not null) verified,
       ${['1', '2']
         .map(
           (x) => `coalesce(recv.up${x}, 0)::int8 up${x}, coalesce(recv.down${x}, 0)::int8 down${x},
       coalesce(ext.n${x}, 0) ext${x}, coalesce(recv.rr${x}, 0)::int8 rr${x}, coalesce(recv.fol${x}, 0)::int8 fol${x},
       coalesce(auth.ra${x}, 0)::int8 ra${x}, coalesce(conv.n${x}, 0) conv${x},`,
         )
         .join('\n       ')}
       coalesce(strikes.n, 0) strikes, rs.score old_score
     from agents a
     left join recv on recv.agent = a.id
     left join ext on ext.agent = a.id
     left join auth on auth.agent = a.id
     left join conv on conv.agent = a.id
     ${FACT_JOINS}
     ${
       // A run's agents by primary key (a subquery's array): as a constant array of thousands of
       // ids, the planner scanned every agent (at 4M interactions, 412k rows for 14k agents). A
       // fleet partition's quarter of all agents scans.
       staged
         ? `where a.id = any(${idsParam('agents')})`
         : part !== undefined
           ? `where ${reputationPartOf('a.id')} = :part`
           : scoped
             ? 'where a.id = any(:agents::uuid[])'
             : ''
     }`,
    part !== undefined ? { ws, now, part } : scoped ? { ws, now, agents } : { ws, now },
  );
  return r.rows;
}

/**
 * Incremental runs: the agents with kept inputs from those inputs and the run's differences
 * (sc_dsum: stageInputDeltas removed the kept inputs it could not move), the others summed from
 * their rows (summedRows).
 */
async function keptRows(trx: Knex.Transaction, ws: Date, now: Date, agents: string[]): Promise<AgentFactsRow[]> {
  const r = await trx.raw(
    `select array(select x.id from unnest(:agents::uuid[]) x(id)
       where not exists (select from scoring_reputation_inputs s where s.agent_id = x.id)) ids`,
    { agents },
  );
  const summed: string[] = r.rows[0].ids;
  const resum = new Set(summed);
  const kept = agents.filter((id) => !resum.has(id));
  const out = summed.length > 0 ? await summedRows(trx, ws, now, summed) : [];
  if (kept.length === 0) return out;
  const k = await trx.raw(
    `with ${STRIKES}
     select a.id, a.status, a.official_connector, a.created_at, (o.email_verified_at is not null) verified,
       ${INPUT_COLUMNS.map((c) => `s.${c} + coalesce(d.${c}, 0) ${c}`).join(', ')},
       coalesce(strikes.n, 0) strikes, rs.score old_score
     from agents a join scoring_reputation_inputs s on s.agent_id = a.id
     left join sc_dsum d on d.agent = a.id
     ${FACT_JOINS}
     where a.id = any(${idsParam('agents')})`,
    { ws, now, agents: kept },
  );
  return [...out, ...k.rows];
}

/** Per-agent facts of every staged agent, with its number `n` in the full run's sums. */
async function stagedRows(trx: Knex.Transaction, ws: Date, now: Date): Promise<AgentFactsRow[]> {
  const r = await trx.raw(
    `with ${STRIKES}
     select ag.n, a.id, a.status, a.official_connector, a.created_at, ag.verified, coalesce(strikes.n, 0) strikes, rs.score old_score
     from sc_ag ag join agents a on a.id = ag.id
     left join strikes on strikes.agent_id = a.id
     left join reputation_scores rs on rs.agent_id = a.id`,
    { ws, now },
  );
  return r.rows;
}

/** A fleet run's publication: the milestones its built reputations reach, notified as a run would. */
export async function publishMilestones(trx: Knex.Transaction, now: Date): Promise<number> {
  const r = await trx.raw(milestoneInsertSql(`(select agent_id id, milestone m, score from ${BUILD.milestones}) u`), {
    now,
  });
  return r.rowCount ?? 0;
}
