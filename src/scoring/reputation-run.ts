import type { Knex } from 'knex';
import { baseScore, clockDueMs, computeReputation, crossedMilestones, ReputationInputs, trust } from './reputation';
import type { ReputationSums } from './reputation-sums';
import { tuneScoped } from './transaction';
import { windowStart } from './stage-sql';
import { rebuildSums, SUM_COLUMNS, SUM_TABLES, unitsToWeight } from './reputation-store';
import { DAY_MS, Model, MODELS } from './policy';
import { copyInText, copyTextField } from './copy';
import { BUILD } from './build-tables';
import { milestoneInsertSql, notifyMilestones } from './milestones';

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
 * suffix 1: v1, 2: v2; weighted sums as doubles, counts int) from storedRows, or, from
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
} & { [sum in `${'up' | 'down' | 'rr' | 'ra' | 'fol'}${'1' | '2'}`]: number } & {
  [count in `${'ext' | 'conv'}${'1' | '2'}`]: string | number;
};

/**
 * reputation_v1 and reputation_v2 (or `models`) for a set of agents (null: every agent) from the
 * stored weights of the 90-day window (v2: scoring_edges_v2's weight where COLLUSION_CLUSTER
 * discounted the interaction, v1's otherwise): the pure formula scores, one upsert per model
 * writes. Runs inside the scoring lock. Milestone notifications follow v1 only.
 *
 * `sums`: a full weight run of this transaction already summed every agent's weights per model
 * (indexed by the agent numbers of its staging table sc_ag), so only the per-agent facts are read.
 * Otherwise the agents' sums are read from the stored sums (reputation-store.ts), written again
 * from the stored weights first unless `stored` (an incremental run moved them already). Both
 * paths sum exactly and round once, so they give the same doubles.
 *
 * `build` (a fleet run's partition): weights are read from the run's built edges and scores
 * written to its built reputations; milestones are kept for its publication (publishMilestones),
 * unless `milestones` is false (scores computed again: their v1 milestones are kept already).
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
    stored?: boolean;
  } = {},
): Promise<{ agents: number; milestones: number }> {
  const models = opts.models ?? MODELS;
  const ws = windowStart(now);
  const full = agents === null && models.every((m) => opts.sums?.[m]);
  // Staged rows carry the agent number of the full run's sums instead of SQL sums.
  if (agents !== null) await tuneScoped(trx);
  if (!opts.stored) await rebuildSums(trx, ws, now, agents, { build: opts.build, staged: full });
  const rows = full ? await stagedRows(trx, ws, now) : await storedRows(trx, ws, now, agents, opts.build);
  let milestones = 0;
  // v1's components of each row, by agent: v2 stores only the agents whose v2 result differs.
  const v1Json = new Map<string, string>();
  const inputsOf = (model: Model, row: AgentFactsRow): ReputationInputs => {
    const s = full ? opts.sums![model]! : null;
    const x = SUFFIX[model];
    const n = row.n;
    return {
      upvotesWeighted: s ? s.up[n] : row[`up${x}`],
      downvotesWeighted: s ? s.down[n] : row[`down${x}`],
      uniqueExternalOwners: s ? s.extOwners[n] : Number(row[`ext${x}`]),
      repliesReceivedWeighted: s ? s.rr[n] : row[`rr${x}`],
      repliesAuthoredWeighted: s ? s.ra[n] : row[`ra${x}`],
      distinctCounterparts: s ? s.counterparts[n] : Number(row[`conv${x}`]),
      followersWeighted: s ? s.fol[n] : row[`fol${x}`],
      verifiedOwnerEmail: row.verified,
      agentAgeDays: (now.getTime() - new Date(row.created_at).getTime()) / DAY_MS,
      officialConnector: row.official_connector,
      suspended: row.status === 'suspended',
      strikes: Number(row.strikes),
    };
  };
  for (const model of models) {
    const out: string[][] = [];
    const ms = { ids: [] as string[], milestones: [] as number[], scores: [] as number[] };
    for (const row of rows) {
      const inputs = inputsOf(model, row);
      const rep = computeReputation(inputs);
      // The same components under both models but for the version when nothing was discounted.
      const json = JSON.stringify(rep.components);
      if (model === 'reputation_v1') v1Json.set(row.id, json);
      else if (v1Json.get(row.id) === json) continue;
      rep.components.version = MODEL_TABLES[model].version;
      out.push([row.id, String(rep.score), copyTextField(JSON.stringify(rep.components))]);
      if (model !== 'reputation_v1') continue;
      // The parts only interactions move, under each model: what a clock-only update starts from,
      // and when the clock alone next changes a stored total.
      const base = baseScore(inputs);
      const base2 = models.includes('reputation_v2') ? baseScore(inputsOf('reputation_v2', row)) : null;
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
      await trx.raw(
        `delete from ${table} t where ${agents === null ? 'true' : 't.agent_id = any(:agents::uuid[])'}
           and not exists (select 1 from sc_rep r where r.agent_id = t.agent_id)`,
        agents === null ? {} : { agents },
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

const STRIKES = `strikes as (
    select agent_id, count(*) n from moderation_actions
    where upheld and created_at > :ws and created_at <= :now group by 1
  )`;

/**
 * Per-agent facts with the stored sums of both models (reputation-store.ts; build: a fleet run's),
 * the exact sums rounded to doubles as full runs round theirs.
 */
async function storedRows(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  agents: string[] | null,
  build = false,
): Promise<AgentFactsRow[]> {
  const scoped = agents !== null;
  const sums = build ? SUM_TABLES.build.sums : SUM_TABLES.live.sums;
  const cols = SUM_COLUMNS.flatMap((c) => [`${c}1`, `${c}2`]);
  const r = await trx.raw(
    `with ${STRIKES}
     select a.id, a.status, a.official_connector, a.created_at, (o.email_verified_at is not null) verified,
       ${cols.map((c) => `coalesce(s.${c}, 0)::text ${c}`).join(', ')},
       coalesce(s.ext1, 0) ext1, coalesce(s.ext2, 0) ext2, coalesce(s.conv1, 0) conv1, coalesce(s.conv2, 0) conv2,
       coalesce(strikes.n, 0) strikes, rs.score old_score
     from agents a
     left join owners o on o.id = a.owner_id
     left join ${sums} s on s.agent_id = a.id
     left join strikes on strikes.agent_id = a.id
     left join reputation_scores rs on rs.agent_id = a.id
     ${scoped ? 'where a.id = any(:agents::uuid[])' : ''}`,
    scoped ? { ws, now, agents } : { ws, now },
  );
  for (const row of r.rows) for (const c of cols) row[c] = unitsToWeight(row[c]);
  return r.rows;
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
