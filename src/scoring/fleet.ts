import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { addJob } from '../db/jobs';
import { recomputeWeights } from './engine';
import { recomputeReputations, publishMilestones } from './reputation-run';
import { clustersOfBuild } from './collusion-run';
import { lockScoring, partitionOf, reputationPartOf, SCORING_LOCK, tunePartition } from './transaction';
import { windowStart } from './stage-sql';
import { stagedPairs } from './collusion-support';
import { writeScopedFacts } from './scoped-facts';
import { BUILD, SWAPS } from './build-tables';
import { copyIndexes, dropIndexes } from './table-indexes';
import { resetWatermark, setWindowClock } from './watermark';
import { forgetPairCounts } from './pair-counts';
import { forgetInputs } from './reputation-deltas';
import { TOUCH_JOB } from './touch';
import { SCHEDULE } from './policy';
import { invalidateLiveWeek } from './live-week';

/**
 * A full recompute spread over the worker fleet. The run is phases, each of independent jobs
 * (partitions) that any worker process takes as `scoring_partition` jobs (one at a time per
 * process, the thread pool inside), or that one process runs in turn (runFleetInProcess):
 *
 * 1. facts: every agent's stored facts (scoring_agent_facts), per partition of the agents;
 * 2. weights: every interaction received by the partition's agents, scored as an incremental
 *    run scores them (each rule's group belongs to one target agent) from those facts, into the
 *    run's built edges, with their support pairs (a pair belongs to its target);
 * 3. reputations: both models' scores of the partition's agents from the built weights (replies
 *    authored count toward their actor, hence after every weight), into the built scores; and
 *    beside them, one `clusters` job: reputation_v2's clusters over the whole built support
 *    graph and the interactions they discount. Only cluster members have a v2 score other than
 *    their v1 one, so a partition need not wait for the clusters: the members' scores are
 *    computed again once both are done (in the publication, before its lock);
 * 4. publish (one job, every scoring lock): each built table swaps with its live table in one
 *    transaction, the reputation milestones reached are notified, the incremental watermark
 *    goes back to the run's start.
 *
 * A reader sees the previous results until the swap, then all of the new ones. A partition
 * commits its work and its row in scoring_run_partitions in one transaction, so a failed or
 * retried job is done once; the one completing its phase's last partition moves the run on
 * (a conditional update of the run's row) and queues the next phase's jobs, exactly once. The
 * results equal a full recompute's (runFull) over the same data.
 */

/** Kinds of partition job (scoring_run_partitions.phase). */
export const PHASES = ['facts', 'weights', 'clusters', 'reputations', 'publish'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * The phases of a run (scoring_runs.phase), in order, with the jobs each runs together; the
 * clusters job first, being the longest.
 */
const STAGES = {
  facts: ['facts'],
  weights: ['weights'],
  reputations: ['clusters', 'reputations'],
  publish: ['publish'],
} as const satisfies Record<string, readonly Phase[]>;
type Stage = keyof typeof STAGES;
const STAGE_ORDER = Object.keys(STAGES) as Stage[];

function stageOf(phase: Phase): Stage {
  return STAGE_ORDER.find((s) => (STAGES[s] as readonly Phase[]).includes(phase))!;
}

/** Partitions of a kind of job: the whole-graph steps are one. */
function partsOf(phase: Phase): number {
  if (phase === 'clusters' || phase === 'publish') return 1;
  return phase === 'reputations' ? SCHEDULE.reputationPartitions : SCHEDULE.partitions;
}

/** The jobs of a phase of the run, in the order they are queued. */
function jobsOf(stage: Stage): { phase: Phase; part: number }[] {
  return STAGES[stage].flatMap((phase) => Array.from({ length: partsOf(phase) }, (_, part) => ({ phase, part })));
}

/** Partitions of a whole run, every phase. */
export function runTotal(): number {
  return PHASES.reduce((n, p) => n + partsOf(p), 0);
}

export interface PartitionJob {
  run: number;
  phase: Phase;
  part: number;
}

export function isPartitionJob(p: unknown): p is PartitionJob {
  const j = p as Partial<PartitionJob> | null;
  return (
    !!j &&
    Number.isInteger(j.run) &&
    PHASES.includes(j.phase as Phase) &&
    Number.isInteger(j.part) &&
    j.part! >= 0 &&
    j.part! < partsOf(j.phase as Phase)
  );
}

interface RunRow {
  id: string;
  phase: Stage | 'done' | 'abandoned';
  fleet: boolean;
  scored_at: Date;
  mark: Date;
  started_at: Date;
}

async function queuePhase(trx: Knex.Transaction, run: number, stage: Stage): Promise<void> {
  // Fetched by priority: in the order queued (jobs queued together share their run_at).
  let priority = 0;
  for (const { phase, part } of jobsOf(stage))
    await addJob(
      trx,
      'scoring_partition',
      { run, phase, part },
      { jobKey: `scoring_partition:${run}:${phase}:${part}`, priority: priority++ },
    );
}

/**
 * Starts a run scoring the window that ends now, or finds the unfinished one (one at a time; a
 * run without progress for SCHEDULE.fleetStaleMinutes is abandoned first). `fleet`: its
 * partitions are queued as jobs; otherwise the caller runs them (runFleetInProcess).
 */
export async function startRun(
  deps: Deps,
  opts: { fleet: boolean },
): Promise<{ id: number; started: boolean; abandoned: number[] }> {
  return deps.db.transaction(async (trx) => {
    const stale = await trx.raw(
      `update scoring_runs set phase = 'abandoned', finished_at = clock_timestamp()
       where finished_at is null and progressed_at < clock_timestamp() - ? * interval '1 minute' returning id`,
      [SCHEDULE.fleetStaleMinutes],
    );
    const abandoned = stale.rows.map((r: { id: string }) => Number(r.id));
    const r = await trx.raw(
      `insert into scoring_runs (partitions, phase, phase_parts, fleet, scored_at, mark)
       values (?, 'facts', ?, ?, ?, clock_timestamp())
       on conflict ((true)) where finished_at is null do nothing returning id`,
      [SCHEDULE.partitions, jobsOf('facts').length, opts.fleet, deps.now()],
    );
    if (r.rows.length === 0) {
      const active = await trx('scoring_runs').whereNull('finished_at').first('id');
      return { id: Number(active.id), started: false, abandoned };
    }
    const id = Number(r.rows[0].id);
    // What an earlier run left unpublished (abandoned, or a failed publication).
    await trx.raw(`truncate ${SWAPS.map(([, built]) => built).join(', ')}, ${BUILD.milestones}, ${BUILD.rows}`);
    // The weights partitions write the built edges and support pairs without indexes, which the
    // clusters job builds (copyIndexes, rebuildSupport): kept up by the partitions' COPYs, they
    // cost each row an index insert and its WAL, and two partitions waited on each other's.
    await dropIndexes(trx, BUILD.edges);
    await dropIndexes(trx, BUILD.support);
    // The built rows' list partition of each reputations partition (sql/126).
    for (let part = 0; part < SCHEDULE.reputationPartitions; part++)
      await trx.raw(
        `create unlogged table if not exists ${BUILD.rows}_${part} partition of ${BUILD.rows} for values in (${part})`,
      );
    if (opts.fleet) await queuePhase(trx, id, 'facts');
    return { id, started: true, abandoned };
  });
}

async function partitionAgents(
  trx: Knex.Transaction,
  part: number,
  parts: number = SCHEDULE.partitions,
): Promise<string[]> {
  const r = await trx.raw(`select array(select id from agents where ${partitionOf('id', parts)} = ?) ids`, [part]);
  return r.rows[0].ids;
}

/** The work of one partition of a phase; returns the rows it wrote. */
const WORK: Record<Phase, (trx: Knex.Transaction, deps: Deps, run: RunRow, part: number) => Promise<number>> = {
  async facts(trx, _deps, run, part) {
    // The live facts of the partition's agents. The scoring lock shared: runs writing the live
    // tables (which take it alone) wait, the other facts partitions (other agents) do not.
    await trx.raw('select pg_advisory_xact_lock_shared(?)', [SCORING_LOCK]);
    const ids = await partitionAgents(trx, part);
    await writeScopedFacts(trx, windowStart(run.scored_at), run.scored_at, ids);
    return ids.length;
  },
  async weights(trx, deps, run, part) {
    const w = await recomputeWeights(trx, run.scored_at, await partitionAgents(trx, part), {
      pool: deps.scoringPool,
      into: BUILD.edges,
    });
    // The rows the reputations read, from the staged rows and their weights (sc_r, sc_w): those
    // the partition's agents received, under their reputations partitions, and the replies again
    // under their authors' where that differs.
    await trx.raw(
      `insert into ${BUILD.rows} (part, own, k, a, t, aown, town, value, w)
       with j as materialized (
         select r.kind, r.a, r.t, r.aown, r.town, r.value, w.weight from sc_r r join sc_w w on w.id = r.id)
       select ${reputationPartOf('j.t')}, true, j.* from j
       union all select ${reputationPartOf('j.a')}, false, j.* from j where j.kind = 1 and ${reputationPartOf('j.a')} <> ${reputationPartOf('j.t')}`,
    );
    // The support pairs of those rows for reputation_v2's clusters: a pair's rows all have its
    // target, so each pair is summed whole here, and the serial clusters job does not sum them.
    await trx.raw(
      `insert into ${BUILD.support} (a, t, weight)
       ${stagedPairs('(select r.kind k, r.a, r.t, r.value, w.weight w from sc_r r join sc_w w on w.id = r.id) j')}`,
    );
    return w.interactions;
  },
  async clusters(trx, _deps, run) {
    await copyIndexes(trx, 'scoring_edges', BUILD.edges);
    await copyIndexes(trx, 'scoring_support', BUILD.support);
    // Statistics of the weights for the joins below and for the live table they become (the
    // reputations partitions plan the same without them: the table's size is read at planning).
    await trx.raw(`analyze ${BUILD.edges}`);
    const c = await clustersOfBuild(trx, run.scored_at);
    await trx.raw(`analyze ${BUILD.edgesV2}`);
    return c.edges;
  },
  async reputations(trx, _deps, run, part) {
    const agents = await partitionAgents(trx, part, SCHEDULE.reputationPartitions);
    const r = await recomputeReputations(trx, run.scored_at, agents, { build: true, part });
    return r.agents;
  },
  async publish(trx, _deps, run) {
    // The cluster members' scores again, from the v2 edges their partition may have run without.
    const members: string[] = (await trx.raw(`select array(select agent_id from ${BUILD.clusters}) ids`)).rows[0].ids;
    if (members.length > 0) await recomputeReputations(trx, run.scored_at, members, { build: true, milestones: false });
    // Statistics of the scores (every other built table has them from its job), before the lock;
    // not of the components, which no statement filters or joins on (their JSON is most of the
    // sampling's cost).
    for (const built of Object.values(BUILD.reputation))
      await trx.raw(
        `analyze ${built} (agent_id, score, computed_at${built === BUILD.reputation.reputation_v1 ? ', base, base_v2' : ''})`,
      );
    await lockScoring(trx);
    for (const [live, built] of SWAPS) await swapTables(trx, live, built);
    // Every weight was replaced: incremental runs sum each agent's inputs again before keeping them.
    await forgetInputs(trx);
    await forgetPairCounts(trx);
    const milestones = await publishMilestones(trx, run.scored_at);
    // The live tables now hold this run's results at its clock, from data read since its start:
    // changes after it are rescored by the next incremental run, queued now if one already ran
    // meanwhile (what it wrote was just replaced).
    const prev = await resetWatermark(trx, run.mark);
    await setWindowClock(trx, run.scored_at);
    // Every edge was replaced: the live week's totals are rebuilt at its next refresh.
    await invalidateLiveWeek(trx, run.scored_at);
    if (prev && prev > run.mark) await addJob(trx, TOUCH_JOB, {}, { jobKey: TOUCH_JOB, jobKeyMode: 'preserve_run_at' });
    await trx.raw(`truncate ${SWAPS.map(([, built]) => built).join(', ')}, ${BUILD.milestones}, ${BUILD.rows}`);
    return milestones;
  },
};

/**
 * Swaps two tables of one shape by name, with their indexes' names (each `<table>_<suffix>`), so
 * that a built table's indexes keep the names the next run drops and builds (O(1), inside the
 * publication).
 */
async function swapTables(trx: Knex.Transaction, live: string, built: string): Promise<void> {
  const r = await trx.raw(
    `select indexname from pg_indexes where schemaname = current_schema() and tablename = ? and left(indexname, ?) = ?`,
    [live, live.length + 1, `${live}_`],
  );
  const suffixes: string[] = r.rows.map((x: { indexname: string }) => x.indexname.slice(live.length + 1));
  await trx.raw(`alter table ${live} rename to scoring_swap;
    alter table ${built} rename to ${live};
    alter table scoring_swap rename to ${built};
    ${suffixes
      .map(
        (x) => `alter index ${live}_${x} rename to scoring_swap_${x};
    alter index ${built}_${x} rename to ${live}_${x};
    alter index scoring_swap_${x} rename to ${built}_${x};`,
      )
      .join('\n    ')}`);
}

export type PartitionOutcome = 'done' | 'skipped';

/** Jobs reading the run's built rows (BUILD.rows), which the weights partitions wrote. */
const READS_ROWS: readonly Phase[] = ['reputations'];

async function restartedSince(trx: Knex.Transaction, at: Date): Promise<boolean> {
  return (await trx.raw('select pg_postmaster_start_time() > ? restarted', [at])).rows[0].restarted;
}

/**
 * Runs one partition of a phase in one transaction with its row in scoring_run_partitions; the
 * last of its phase moves the run on. A partition already done, or of a run that has moved on
 * or was abandoned, is skipped.
 */
export async function runPartition(deps: Deps, job: PartitionJob): Promise<PartitionOutcome> {
  const outcome = await deps.db.transaction(async (trx): Promise<PartitionOutcome> => {
    await tunePartition(trx);
    const run: RunRow | undefined = await trx('scoring_runs').where({ id: job.run }).first();
    if (!run || run.phase !== stageOf(job.phase)) return 'skipped';
    // Waits while another attempt of the same partition is in flight, then skips if it committed.
    const mine = await trx.raw(
      `insert into scoring_run_partitions (run_id, phase, part) values (?, ?, ?) on conflict do nothing`,
      [job.run, job.phase, job.part],
    );
    if (mine.rowCount === 0) return 'skipped';
    if (READS_ROWS.includes(job.phase) && (await restartedSince(trx, run.started_at))) {
      // The built rows are unlogged: a restart of the database may have emptied them.
      await trx.raw(`update scoring_runs set phase = 'abandoned', finished_at = clock_timestamp() where id = ?`, [
        job.run,
      ]);
      return 'skipped';
    }
    const rows = await WORK[job.phase](trx, deps, run, job.part);
    await trx.raw(
      `update scoring_run_partitions set rows = ?, done_at = clock_timestamp() where run_id = ? and phase = ? and part = ?`,
      [rows, job.run, job.phase, job.part],
    );
    await advance(trx, job);
    return 'done';
  });
  if (outcome === 'done' && job.phase === 'publish') await deps.caches.changed({ kind: 'scores' });
  return outcome;
}

/** Counts the partition; the last one of its phase moves the run to the next phase (queued for a fleet run). */
async function advance(trx: Knex.Transaction, job: PartitionJob): Promise<void> {
  const stage = stageOf(job.phase);
  const r = await trx.raw(
    `update scoring_runs set phase_done = phase_done + 1, progressed_at = clock_timestamp()
     where id = ? and phase = ? returning phase_done, phase_parts, fleet`,
    [job.run, stage],
  );
  const row = r.rows[0];
  if (!row || row.phase_done < row.phase_parts) return;
  const next = STAGE_ORDER[STAGE_ORDER.indexOf(stage) + 1];
  await trx.raw(
    `update scoring_runs set phase = ?, phase_done = 0, phase_parts = ?,
       finished_at = case when ? then clock_timestamp() end where id = ?`,
    [next ?? 'done', next ? jobsOf(next).length : 0, !next, job.run],
  );
  if (next && row.fleet) await queuePhase(trx, job.run, next);
}

export interface RunProgress {
  id: number;
  /** facts, weights, reputations (with the clusters), publish; then done or abandoned */
  phase: RunRow['phase'];
  /** partitions done, every phase */
  done: number;
  total: number;
  elapsedSeconds: number;
  /** partitions per second so far */
  rate: number;
  /** seconds left at that rate (null before the first partition) */
  etaSeconds: number | null;
  finished: boolean;
}

export async function runProgress(db: Knex, id: number): Promise<RunProgress> {
  const r = await db.raw(
    `select r.phase, r.finished_at is not null finished,
       extract(epoch from coalesce(r.finished_at, clock_timestamp()) - r.started_at)::float8 elapsed,
       (select count(*)::int from scoring_run_partitions p where p.run_id = r.id) done
     from scoring_runs r where r.id = ?`,
    [id],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`no scoring run ${id}`);
  const total = runTotal();
  const elapsed = Math.max(row.elapsed, 1e-3);
  const rate = row.done / elapsed;
  return {
    id,
    phase: row.phase,
    done: row.done,
    total,
    elapsedSeconds: row.elapsed,
    rate,
    etaSeconds: row.done > 0 ? (total - row.done) / rate : null,
    finished: row.finished,
  };
}

/**
 * A fleet run in this process: each phase's partitions by `concurrency` connections at once (1:
 * what one worker process does). Throws when another run is unfinished.
 */
export async function runFleetInProcess(
  deps: Deps,
  opts: { concurrency?: number; onPartition?: (p: RunProgress) => void } = {},
): Promise<RunProgress> {
  const { id, started } = await startRun(deps, { fleet: false });
  if (!started) throw new Error(`scoring run ${id} is still unfinished`);
  for (const stage of STAGE_ORDER) {
    const jobs = jobsOf(stage);
    let next = 0;
    const lane = async () => {
      for (let k = next++; k < jobs.length; k = next++) {
        await runPartition(deps, { run: id, ...jobs[k] });
        opts.onPartition?.(await runProgress(deps.db, id));
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 1) }, lane));
  }
  return runProgress(deps.db, id);
}
