import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { recomputeWeights, WeightRunResult } from './engine';
import { lockScoring } from './transaction';
import { getWatermark, setWatermark } from './watermark';
import { touchedTargets } from './changes';
import { recomputeReputations } from './reputation-run';
import { freezeEndedWeeks, SnapshotResult, weeksToFreeze, writeWeekSnapshots } from './leaderboard-snapshots';
import { compareWeeks, formatWeek, IsoWeek, weekOf } from './week';
import { addJob, type JobPayload } from '../db/jobs';
import { MODELS, SCHEDULE } from './policy';
import type { DataChange } from '../cache/change-bus';
import type { ScoringPool } from './pool';
import type { ReputationSums } from './reputation-sums';

/**
 * Scoring runs. Each run is one transaction holding the scoring advisory lock: two worker
 * processes (or a worker and the CLI) serialise, so nothing is counted twice and every
 * snapshot is written whole or not at all. Every run is idempotent. Once a run committed, it
 * announces what it wrote (`scores`, `snapshots`) to every process's read caches.
 */

export interface IncrementalResult {
  changed: number;
  targets: number;
  weights: WeightRunResult | null;
  reputations: number;
  milestones: number;
  ms: number;
}

const SCORES: DataChange[] = [{ kind: 'scores' }];
const EVERYTHING: DataChange[] = [{ kind: 'scores' }, { kind: 'snapshots' }];

/** Runs `fn` under the scoring lock, then tells the read caches of every process what it wrote. */
async function inLock<T>(
  deps: Deps,
  fn: (trx: Knex.Transaction) => Promise<T>,
  wrote: (r: T) => DataChange[],
): Promise<T> {
  const r = await deps.db.transaction(async (trx) => {
    await lockScoring(trx);
    return fn(trx);
  });
  await deps.caches.changed(...wrote(r));
  return r;
}

/** Both models' reputations of `agents` (null: every agent; then from the full run's sums when given). */
async function recomputeModels(
  trx: Knex.Transaction,
  now: Date,
  agents: string[] | null,
  sums?: { sums?: ReputationSums; sumsV2?: ReputationSums },
  v2 = true,
) {
  return recomputeReputations(trx, now, agents, {
    sums: { reputation_v1: sums?.sums, reputation_v2: sums?.sumsV2 },
    models: v2 ? MODELS : ['reputation_v1'],
  });
}

async function dbClock(trx: Knex | Knex.Transaction): Promise<Date> {
  const r = await trx.raw('select clock_timestamp() t');
  return new Date(r.rows[0].t);
}

/**
 * Rescores what changed since the watermark: interactions received by touched agents, then their
 * reputation under both models (`v1Only`: the benchmark's baseline for v2's cost).
 */
export async function runIncremental(deps: Deps, opts: { v1Only?: boolean } = {}): Promise<IncrementalResult> {
  const started = Date.now();
  return inLock(
    deps,
    async (trx) => {
      const now = deps.now();
      const mark = await dbClock(trx);
      const since = (await getWatermark(trx)) ?? new Date(0);
      const { targets, changed } = await touchedTargets(trx, since);
      let weights: WeightRunResult | null = null;
      let reps = { agents: 0, milestones: 0 };
      if (targets.length > 0) {
        const { affected, ...w } = await recomputeWeights(trx, now, targets, {
          pool: deps.scoringPool,
          v2: !opts.v1Only,
        });
        weights = w;
        reps = await recomputeModels(trx, now, affected, undefined, !opts.v1Only);
      }
      await setWatermark(trx, mark);
      return {
        changed,
        targets: targets.length,
        weights,
        reputations: reps.agents,
        milestones: reps.milestones,
        ms: Date.now() - started,
      };
    },
    (r) => (r.targets > 0 ? SCORES : []),
  );
}

export interface FullResult {
  weights: WeightRunResult;
  reputations: number;
  milestones: number;
  ms: number;
}

/**
 * Full recompute: every weight of the window, then every reputation (or one agent's), under both
 * models. `v1Only` leaves reputation_v2's tables as they are: the benchmark's baseline for v2's cost.
 */
export async function runFull(deps: Deps, opts: { agentId?: string; v1Only?: boolean } = {}): Promise<FullResult> {
  const started = Date.now();
  return inLock(
    deps,
    async (trx) => {
      const now = deps.now();
      if (opts.agentId) {
        const { affected, ...weights } = await recomputeWeights(trx, now, [opts.agentId], {
          freshActors: true,
          pool: deps.scoringPool,
        });
        const reps = await recomputeModels(trx, now, affected);
        return { weights, reputations: reps.agents, milestones: reps.milestones, ms: Date.now() - started };
      }
      const { weights, reps } = await recomputeAll(trx, now, deps.scoringPool, !opts.v1Only);
      return { weights, reputations: reps.agents, milestones: reps.milestones, ms: Date.now() - started };
    },
    () => SCORES,
  );
}

/** Every weight of the window, then every reputation; the watermark moves to the run's start. */
async function recomputeAll(trx: Knex.Transaction, now: Date, pool: ScoringPool, v2 = true) {
  const mark = await dbClock(trx);
  const { sums, sumsV2, affected: _everyone, ...weights } = await recomputeWeights(trx, now, null, { pool, v2 });
  const reps = await recomputeModels(trx, now, null, { sums, sumsV2 }, v2);
  await setWatermark(trx, mark);
  return { weights, reps };
}

/**
 * Freezes ended weeks (all missing ones, or `only`) inside the lock. A final snapshot never
 * changes, so before one is written every weight of the window is recomputed (and every
 * reputation with it): incremental runs rescore only what the touched agents received, and the
 * weights an actor's own facts decide (influence, reciprocity shares, follow ring) toward
 * untouched targets lag until the next full run. Frozen from them, a week would keep, for
 * instance, a RECIPROCAL_PATTERN on one side of a pair that the data no longer shows.
 */
async function freezeFresh(
  trx: Knex.Transaction,
  pool: ScoringPool,
  now: Date,
  only?: IsoWeek,
): Promise<SnapshotResult[]> {
  if ((await weeksToFreeze(trx, now, only)).length > 0) await recomputeAll(trx, now, pool);
  return freezeEndedWeeks(trx, now, only);
}

export interface LeaderboardRun {
  incremental: IncrementalResult;
  live: SnapshotResult | null;
  finalized: SnapshotResult[];
}

/**
 * The 15-minute run: catch up weights, write the current week's live snapshots, and freeze any
 * ended week still missing its final snapshots. With `week`: an ended week is finalized (if it
 * is not final yet), the current week refreshed.
 */
export async function runLeaderboards(deps: Deps, week?: IsoWeek): Promise<LeaderboardRun> {
  const incremental = await runIncremental(deps);
  return inLock(
    deps,
    async (trx) => {
      const now = deps.now();
      const current = weekOf(now);
      if (week && compareWeeks(week, current) < 0) {
        return { incremental, live: null, finalized: await freezeFresh(trx, deps.scoringPool, now, week) };
      }
      const finalized = await freezeFresh(trx, deps.scoringPool, now);
      const live = await writeWeekSnapshots(trx, current, 'live', now);
      return { incremental, live, finalized };
    },
    () => EVERYTHING,
  );
}

/** Job key of the live-week refresh deferred until the snapshot is old enough (one at a time). */
export const DEFERRED_REFRESH_KEY = 'leaderboards_refresh:after-activity';

/**
 * The debounced job after writes: rescore what changed, then refresh the live week when that
 * changed something and its snapshots are missing or older than
 * SCHEDULE.liveRefreshAfterActivitySeconds. A change that finds them fresher queues that refresh
 * for when they reach that age (`deferred`), so it shows within about a minute whatever comes
 * after it, not at the next 15-minute run (a suspension or a last vote with no activity after it).
 */
export async function runIncrementalAndRefresh(
  deps: Deps,
): Promise<{ incremental: IncrementalResult; refreshed: boolean; deferred: boolean }> {
  const incremental = await runIncremental(deps);
  if (incremental.changed === 0) return { incremental, refreshed: false, deferred: false };
  const now = deps.now();
  const snap = await deps
    .db('leaderboard_snapshots')
    .where({ week: formatWeek(weekOf(now)), category: 'overall' })
    .first('computed_at');
  const ageSeconds = snap ? (now.getTime() - new Date(snap.computed_at).getTime()) / 1000 : Infinity;
  if (ageSeconds > SCHEDULE.liveRefreshAfterActivitySeconds) {
    await runLeaderboards(deps);
    return { incremental, refreshed: true, deferred: false };
  }
  // preserve_run_at: later changes before it runs join it instead of pushing it back.
  const delaySeconds = Math.max(1, Math.ceil(SCHEDULE.liveRefreshAfterActivitySeconds - ageSeconds));
  await addJob(
    deps.db,
    'leaderboards_refresh',
    {},
    { jobKey: DEFERRED_REFRESH_KEY, jobKeyMode: 'preserve_run_at', delaySeconds },
  );
  return { incremental, refreshed: false, deferred: true };
}

/** The Monday run: freeze ended weeks (all missing ones, or `week`). */
export async function runFreeze(deps: Deps, week?: IsoWeek): Promise<SnapshotResult[]> {
  await runIncremental(deps);
  return inLock(
    deps,
    (trx) => freezeFresh(trx, deps.scoringPool, deps.now(), week),
    () => EVERYTHING,
  );
}

/** Queues a scoring job on demand (the CLI, a strike, a claim); returns its identifier. */
export async function enqueue<K extends 'reputation_recompute' | 'leaderboards_refresh' | 'leaderboards_freeze'>(
  db: Knex,
  job: K,
  payload: JobPayload<K>,
): Promise<K> {
  // jobKey: repeated requests for the same work collapse into one queued job.
  await addJob(db, job, payload, { jobKey: `${job}:${JSON.stringify(payload)}`, jobKeyMode: 'replace' });
  return job;
}

export function weekLabel(w: IsoWeek): string {
  return formatWeek(w);
}
