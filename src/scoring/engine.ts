import type { Knex } from 'knex';
import { BIT, computeBatch } from './weights';
import type { ScoringPool } from './pool';
import { copyIn, copyOut } from './copy';
import { tuneScoped, tuneTempBuffers } from './transaction';
import {
  AGENTS_FULL_SQL,
  AGENTS_STAGED_SQL,
  CORE_FACT_COLUMNS,
  FACT_COLUMNS,
  factsSelect,
  FULL_FACTS_SQL,
  GROUPS_SQL,
  OWNER_DUP_SQL,
  PAIR_RANKS_SQL,
  PAIRS_SQL,
  RECIP_FLAG_SQL,
  recipSql,
  StageMode,
  stageSql,
  windowStart,
} from './stage-sql';
import type { Columns } from './copy';
import { buildBatches } from './batches';
import { writeScopedFacts } from './scoped-facts';
import { ReputationSums, sumReputation } from './reputation-sums';
import { copyEdges, storedWeights } from './edge-copy';
import { writeBrigadeFlags } from './brigade-flags';
import { clustersFull, clustersScoped } from './collusion-run';
import { recordEdgesSql } from './reputation-deltas';

/**
 * Weighted edges. SQL stages the scored interactions once (a temporary table holding every
 * per-row fact that joins can give), derives the group facts set-based (window functions for
 * pair ranks and owner duplicates, hash aggregates for reciprocity, rings and owner diversity),
 * and streams the facts out with binary COPY; the pure `computeBatch` turns them into weights in
 * the piscina pool; binary COPY streams the weights back.
 *
 * Full mode scores every active interaction of the 90-day window and rewrites scoring_edges and
 * scoring_agent_facts. Scoped mode scores every interaction received by a set of target agents:
 * all partitions a rule looks at (the pair actor→target, the target post/comment, the brigade
 * group) belong to one target agent, so they are complete. Per-agent facts (outgoing counts,
 * owner diversity, follow ring) change only when the agent acts or is acted on: scoped mode
 * refreshes them for the touched agents and reads the stored ones of every other actor. Rows
 * mode (incremental runs) scores the rows staged in sc_s (src/scoring/rows.ts): every group a
 * core row's weight reads is whole, so the core rows' weights are exact, and only they are written.
 */

export interface WeightRunResult {
  mode: 'full' | 'scoped' | 'rows';
  /** edges written (scoped mode skips unchanged ones) */
  rewritten: number;
  interactions: number;
  brigadeFlags: number;
  /** agents whose stored facts were refreshed */
  agentFacts: number;
  /**
   * reputation_v2: full mode, the clusters found, their members and the interactions they discount;
   * scoped and rows modes, the v2 rows written, the agents whose cluster changed and those peeled again.
   */
  collusion: { clusters: number; members: number; edges: number; peeled: number; steps?: Record<string, number> };
  ms: { facts: number; compute: number; write: number; collusion: number };
}

export interface WeightOptions {
  /** Scoped mode: refresh the stored facts of every actor of the scored rows too. */
  freshActors?: boolean;
  /**
   * Scoped mode: the agents whose stored facts are refreshed first (default: the targets; an
   * incremental run refreshed and compared them already and passes none). Actors never seen
   * before always get theirs.
   */
  facts?: string[];
  /** The process's thread pool (deps.scoringPool); without one every batch is computed inline. */
  pool?: ScoringPool;
  /** false: v1 only, reputation_v2's tables left as they are (the benchmark's baseline for v2's cost). */
  v2?: boolean;
  /**
   * Scoped mode for a partition of a fleet run (fleet.ts): every stored fact is fresh (its facts
   * phase wrote them all), every weight goes to this table (and to sc_w, id and weight, for the
   * rest of the transaction), reputation_v2 is left to the run.
   */
  into?: string;
  /**
   * Scoped modes of an incremental run: each edge as it was before this run rewrites it goes to
   * sc_was (reputation-deltas.ts: the reputation inputs kept by difference).
   */
  record?: boolean;
}

export interface WeightRun extends WeightRunResult {
  /** full mode: the reputation sums of every agent (indexed by sc_ag.n) */
  sums?: ReputationSums;
  /** full mode: the same sums under reputation_v2 */
  sumsV2?: ReputationSums;
  /** scoped and rows modes: the agents of the rewritten edges (their targets, a reply's author) */
  affected: string[] | null;
  /**
   * scoped and rows modes: those whose reputation inputs the rewritten edges moved: a vote, reply
   * or follow whose weight changed (reactions count in no reputation, and reasons only in explain).
   */
  moved: string[] | null;
  /** scoped and rows modes, reputation_v2: the members of clusters that appeared or went away */
  clustered: string[] | null;
}

/**
 * Scores interactions and writes scoring_edges (and brigade flags) inside `trx`, which holds
 * the scoring lock. `targets` null: full recompute (the table is rewritten, and every agent's
 * reputation inputs are summed on the way). 'rows': rows mode, over sc_s. Otherwise the
 * interactions received by `targets`.
 */
export async function recomputeWeights(
  trx: Knex.Transaction,
  now: Date,
  targets: string[] | null | 'rows',
  opts: WeightOptions = {},
): Promise<WeightRun> {
  const t0 = Date.now();
  const ws = windowStart(now);
  const mode: StageMode = targets === null ? 'full' : targets === 'rows' ? 'rows' : 'agents';
  const scoped = mode !== 'full';
  await tuneTempBuffers(trx);
  if (scoped) await tuneScoped(trx);
  await trx.raw('drop table if exists sc_ag, sc_r, sc_pc, sc_recip, sc_pk, sc_dup, sc_grp, sc_out, sc_up, sc_w');
  if (mode !== 'agents') {
    await trx.raw(mode === 'full' ? AGENTS_FULL_SQL : AGENTS_STAGED_SQL);
    await trx.raw('analyze sc_ag');
  }
  await trx.raw(stageSql(mode), mode === 'agents' ? { ws, now, targets } : { ws, now });
  await trx.raw('analyze sc_r');
  let agentFacts: number;
  if (opts.into) {
    agentFacts = 0;
  } else if (scoped) {
    // Touched agents (and actors never seen before, or every actor when asked) get fresh facts.
    const ids = await trx.raw(
      `select array(
         select unnest(:facts::uuid[])
         union ${
           opts.freshActors
             ? 'select distinct a from sc_r'
             : mode === 'rows'
               ? // sc_ag marked them, from one scan of the stored facts.
                 'select g.id from sc_ag g where g.unfacted and exists (select from sc_r r where r.a = g.id)'
               : // By primary key, actor by actor: an anti-join hashed every agent's facts.
                 'select x.a from (select distinct a from sc_r) x where not exists (select 1 from scoring_agent_facts f where f.agent_id = x.a offset 0)'
         }
       ) ids`,
      { facts: opts.facts ?? (mode === 'agents' ? targets : []) },
    );
    agentFacts = ids.rows[0].ids.length;
    await writeScopedFacts(trx, ws, now, ids.rows[0].ids);
  } else {
    await trx.raw('truncate scoring_agent_facts');
    agentFacts = (await trx.raw(FULL_FACTS_SQL, { now })).rowCount;
    await trx.raw('analyze scoring_agent_facts');
  }
  // Every derived table is analyzed: without statistics the planner joins them to the million
  // staged rows by nested loops.
  await trx.raw(PAIRS_SQL);
  await trx.raw('analyze sc_pc');
  await trx.raw('create temp table sc_recip (a uuid, t uuid, kind int2) on commit drop');
  const recips = (await trx.raw(recipSql(scoped), { ws, now })).rowCount;
  if (recips > 0) {
    await trx.raw('analyze sc_recip');
    await trx.raw(RECIP_FLAG_SQL);
  }
  await trx.raw(PAIR_RANKS_SQL);
  await trx.raw('analyze sc_pk');
  await trx.raw(OWNER_DUP_SQL);
  await trx.raw('analyze sc_dup');
  await trx.raw(GROUPS_SQL);
  await trx.raw('analyze sc_grp');
  const { n, cols } = await copyOut(
    trx,
    factsSelect(mode === 'rows'),
    mode === 'rows' ? CORE_FACT_COLUMNS : FACT_COLUMNS,
  );
  const core = mode === 'rows' ? (cols as Columns<typeof CORE_FACT_COLUMNS>).core : null;
  const t1 = Date.now();

  const weights = new Float32Array(n);
  const masks = new Int32Array(n);
  const { order, batches } = buildBatches(cols, n);
  await Promise.all(
    batches.map(async ({ from, batch }) => {
      const out = opts.pool ? await opts.pool.run(batch) : computeBatch(batch);
      for (let k = 0; k < out.weights.length; k++) {
        const r = order[from + k];
        weights[r] = out.weights[k];
        masks[r] = out.masks[k];
      }
    }),
  );
  const t2 = Date.now();

  const stored = storedWeights(weights);
  let rewritten = n;
  let affected: string[] | null = null;
  let moved: string[] | null = null;
  let clustered: string[] | null = null;
  if (opts.into) {
    await copyEdges(trx, opts.into, cols.id, stored, masks, now, { values: cols.value });
    // The weights again, which the fleet partition reads with sc_r (its rows for the reputations).
    // By COPY, as the edges: two partitions inserting row by row into one table wait on each other
    // to extend it.
    await trx.raw('create temp table sc_w (id int8, weight real) on commit drop');
    await copyIn(trx, 'sc_w (id, weight)', n, [
      { type: 'int8', values: cols.id },
      { type: 'float4', values: stored },
    ]);
  } else if (scoped) {
    await trx.raw('create temp table sc_out (like scoring_edges) on commit drop');
    // The rewritten rows (reputation_v2 sums their pairs' support again in rows mode).
    await trx.raw('create temp table sc_up (id int8) on commit drop');
    if (core) {
      const k = pick(core);
      await copyEdges(trx, 'sc_out', k(cols.id), k(stored), k(masks), now, { values: k(cols.value) });
    } else await copyEdges(trx, 'sc_out', cols.id, stored, masks, now, { values: cols.value });
    // Only rows whose weight, reasons or vote value change are written (with a new computed_at);
    // their targets and the authors of changed replies get their reputation recomputed.
    // `was` reads the edges as they were: every part of one statement sees the same snapshot.
    // In key order, the upsert walks scoring_edges' index and pages once, in order (at 4M: 1,490 -> 919 ms).
    // Unchanged rows are left out before the upsert, each probed by key (a subplan, kept one by
    // `offset 0`): ON CONFLICT locks every conflicting row, its WHERE false or not, which writes
    // each one's page and a WAL record, for the many core rows whose weight did not move.
    const up = await trx.raw(`with up as (
        insert into scoring_edges as se select o.* from (select * from sc_out order by interaction_id) o
        where not exists (select from scoring_edges e where e.interaction_id = o.interaction_id
          and e.weight is not distinct from o.weight and e.reasons is not distinct from o.reasons
          and e.value is not distinct from o.value offset 0)
        on conflict (interaction_id) do update set weight = excluded.weight, reasons = excluded.reasons,
          computed_at = excluded.computed_at, value = excluded.value
        where se.weight is distinct from excluded.weight or se.reasons is distinct from excluded.reasons
          or se.value is distinct from excluded.value
        returning interaction_id, weight),
      noted as (insert into sc_up select interaction_id from up),
      ur as materialized (
        select up.interaction_id id, r.a, r.t, r.kind, up.weight, was.weight was, was.value wasv
        from up join sc_r r on r.id = up.interaction_id
        left join lateral (select w.weight, w.value from scoring_edges w where w.interaction_id = up.interaction_id) was on true)${
          opts.record
            ? `,
      recorded as (${recordEdgesSql(`select id, a, t, kind, wasv, was,
        (select v.weight from scoring_edges_v2 v where v.interaction_id = ur.id) from ur`)})`
            : ''
        }
      select array(select t from ur union select a from ur where kind = 1) agents,
        array(select t from ur where weight is distinct from was and kind < 3
          union select a from ur where weight is distinct from was and kind = 1) moved,
        (select count(*) from up)::int n`);
    rewritten = up.rows[0].n;
    affected = up.rows[0].agents;
    moved = up.rows[0].moved;
  } else {
    // Bulk load without the index, then build it once (the lock is exclusive since the truncate anyway).
    await trx.raw('truncate scoring_edges');
    await trx.raw('alter table scoring_edges drop constraint scoring_edges_pkey');
    await copyEdges(trx, 'scoring_edges', cols.id, stored, masks, now, { values: cols.value });
    await trx.raw('alter table scoring_edges add primary key (interaction_id)');
    // A rewritten table has no statistics yet: without them later joins plan nested loops.
    await trx.raw('analyze scoring_edges');
  }
  // Rows mode: only the brigade groups holding a core row are whole.
  const whole = new Set<number>();
  if (core) for (let r = 0; r < n; r++) if (core[r]) whole.add(cols.grp[r]);
  const brigade: number[] = [];
  for (let r = 0; r < n; r++)
    if (masks[r] & BIT.BRIGADE_PATTERN && (!core || whole.has(cols.grp[r]))) brigade.push(cols.id[r]);
  const flags = await writeBrigadeFlags(trx, brigade, now);
  let t3 = Date.now();
  let sums: ReputationSums | undefined;
  let sumsV2: ReputationSums | undefined;
  let collusion: WeightRunResult['collusion'] = { clusters: 0, members: 0, edges: 0, peeled: 0 };
  if (!scoped) {
    const agents = (await trx.raw('select count(*)::int n from sc_ag')).rows[0].n;
    sums = sumReputation(cols, n, stored, agents);
    t3 = Date.now();
    // reputation_v2: the graph rule over the window's support graph, then the same sums with its weights.
    if (opts.v2 !== false) {
      const c = await clustersFull(trx, cols, n, stored, masks, agents, now);
      collusion = { clusters: c.clusters, members: c.members, edges: c.edges, peeled: 0 };
      sumsV2 = c.edges > 0 ? sumReputation(cols, n, c.weights, agents, c.discounted) : sums;
    }
  } else if (opts.v2 !== false && !opts.into) {
    const c = await clustersScoped(trx, targets as string[] | 'rows', now);
    collusion = { ...collusion, edges: c.edges, members: c.changed.length, peeled: c.peeled, steps: c.steps };
    clustered = c.changed;
  }
  const t4 = Date.now();
  return {
    mode: mode === 'agents' ? 'scoped' : mode,
    sums,
    sumsV2,
    affected,
    moved,
    clustered,
    rewritten,
    interactions: n,
    brigadeFlags: flags,
    agentFacts,
    collusion,
    // collusion: reputation_v2's clusters, their writes and sums (v1's sums count as write)
    ms: { facts: t1 - t0, compute: t2 - t1, write: t3 - t2, collusion: t4 - t3 },
  };
}

/** The entries of typed arrays where `keep` is set (rows mode: the core rows). */
function pick(keep: Uint8Array) {
  let m = 0;
  for (let r = 0; r < keep.length; r++) if (keep[r]) m++;
  return <A extends Float64Array | Float32Array | Int32Array | Int16Array>(xs: A): A => {
    const out = new (xs.constructor as new (n: number) => A)(m);
    for (let r = 0, k = 0; r < keep.length; r++) if (keep[r]) out[k++] = xs[r];
    return out;
  };
}
