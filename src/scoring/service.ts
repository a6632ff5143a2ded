import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { recomputeWeights, WeightRunResult } from './engine';
import { lockScoring, tuneStagingStatistics } from './transaction';
import { getWatermark, getWindowClock, setWatermark, setWindowClock } from './watermark';
import { changedAgents, dropStaleEdges, ownerChangedAgents, stageChanges } from './changes';
import { createEdgeHistory, forgetInputs, keepAllInputs, stageInputDeltas } from './reputation-deltas';
import { windowStart } from './stage-sql';
import { clockAgents, refreshFacts, widenedTargets } from './closure';
import { stageCoreRows } from './rows';
import { countAllPairs, pairCountsExact, recountChangedPairs } from './pair-counts';
import { recomputeReputations } from './reputation-run';
import { recomputeClockReputations } from './clock-reputations';
import { freezeEndedWeeks, SnapshotResult, weeksToFreeze } from './leaderboard-snapshots';
import { invalidateLiveWeek, LiveResult, writeLiveSnapshots } from './live-week';
import { compareWeeks, formatWeek, IsoWeek, weekOf } from './week';
import { addJob, type JobPayload } from '../db/jobs';
import { MODELS, SCHEDULE } from './policy';
import { scoresChanged, type DataChange } from '../cache/change-bus';
import type { ScoringPool } from './pool';
import type { ReputationSums } from './reputation-sums';

/**
 * Scoring runs. Each run is one transaction holding the scoring advisory lock: two worker
 * processes (or a worker and the CLI) serialise, so nothing is counted twice and every
 * snapshot is written whole or not at all. Every run is idempotent. Once a run committed, it
 * announces what it wrote (`scores`, `snapshots`) to every process's read caches.
 */

export interface IncrementalResult {
  /** rows staged: updated since the watermark, or whose place in the window changed since the last run */
  changed: number;
  /** of those, rows no longer active in the window: their stored edges were removed */
  removed: number;
  /**
   * rows: the periodic and debounced runs (the core rows whose weights may change, written where
   * they do); agents: a per-agent recompute (everything its agents received)
   */
  mode: 'rows' | 'agents';
  /** agents whose stored facts changed in effect (they reach further than their own rows) */
  facts: number;
  /** rows mode: the core rows, whose weights were recomputed */
  core: number;
  /** agents whose received interactions were rescored (rows mode: some of them, the targets of core rows) */
  targets: number;
  weights: WeightRunResult | null;
  reputations: number;
  milestones: number;
  /** reputation rows the clock-only stage wrote (either model): agents due by their totals' next change, or struck */
  clockRows: number;
  /** no earlier run had recorded its clock: this one was a full recompute */
  full: boolean;
  /**
   * The reputations summed again (`summed`; the others of `reputations` were moved by the clock
   * alone, from their stored base), and why, per source (an agent may come from several): targets
   * and reply authors of the staged rows with the stamped agents (agent mode: every agent it
   * touched), agents of rewritten edges, members of reputation_v2 clusters that changed, agents
   * the clock moved that have no stored base.
   */
  reach: { summed: number; staged: number; edges: number; clusters: number; unscored: number };
  /** time of each stage (ms): staging and reach (facts, core rows or targets), weights, clock-only reputations, summed reputations */
  stages: { closure: number; weights: number; inputs: number; clock: number; reputations: number };
  ms: number;
}

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
  kept = false,
) {
  if (agents !== null && agents.length === 0) return { agents: 0, milestones: 0 };
  return recomputeReputations(trx, now, agents, {
    sums: { reputation_v1: sums?.sums, reputation_v2: sums?.sumsV2 },
    models: v2 ? MODELS : ['reputation_v1'],
    kept,
  });
}

async function dbClock(trx: Knex | Knex.Transaction): Promise<Date> {
  const r = await trx.raw('select clock_timestamp() t');
  return new Date(r.rows[0].t);
}

/**
 * An incremental step's result, with the agents whose stored reputation it may have rewritten or
 * whose received or authored weights it rewrote (`rescored`; null: anyone's, a full recompute):
 * what it announces to the read caches, not what it reports.
 */
type StepResult = Omit<IncrementalResult, 'ms'> & { rescored: string[] | null };

/**
 * The exact incremental step, inside the caller's locked transaction: afterwards every stored
 * weight, reason and reputation is what a full recompute at `now` writes (with the stored
 * reputation_v2 clusters). It stages the rows changed since the watermark or whose place in the
 * window changed since the last run's clock, drops the edges of those no longer in it, refreshes
 * the facts of their agents (and of `seeds`), then rescores:
 * - rows mode (no `seeds`: the periodic and debounced runs): the core rows whose weight may change,
 *   from the changed rows and the facts that changed in effect (rows.ts);
 * - agent mode (a per-agent recompute): everything the agents of the changed rows and `seeds`
 *   received, and the targets the changed facts reach (closure.ts).
 * Then it recomputes the reputations whose inputs changed: the targets of the staged rows, the
 * authors of staged replies, the stamped agents (agent mode: every agent of the staged rows and
 * `seeds`), and the agents of rewritten edges (their kept inputs plus what the recorded edges
 * changed, reputation-deltas.ts, or summed again), and those only the clock moves (from their
 * stored base: TRUST and the total only). Without a recorded clock (first run) it is a full
 * recompute.
 */
async function incrementalStep(
  trx: Knex.Transaction,
  now: Date,
  pool: ScoringPool,
  opts: { v2?: boolean; seeds?: string[] } = {},
): Promise<StepResult> {
  const v2 = opts.v2 !== false;
  const mode = opts.seeds ? 'agents' : 'rows';
  const prevNow = await getWindowClock(trx);
  if (!prevNow) {
    const { weights, reps } = await recomputeAll(trx, now, pool, v2);
    const res = { reputations: reps.agents, milestones: reps.milestones, clockRows: 0, full: true };
    const stages = { closure: 0, weights: 0, inputs: 0, clock: 0, reputations: 0 };
    const reach = { summed: reps.agents, staged: 0, edges: 0, clusters: 0, unscored: 0 };
    const all = { core: weights.interactions, targets: reps.agents };
    return {
      changed: weights.interactions,
      removed: 0,
      mode,
      facts: 0,
      ...all,
      weights,
      ...res,
      reach,
      stages,
      rescored: null,
    };
  }
  const t0 = Date.now();
  await tuneStagingStatistics(trx);
  const mark = await dbClock(trx);
  const since = (await getWatermark(trx)) ?? new Date(0);
  const { changed, left } = await stageChanges(trx, since, prevNow, now);
  const agents = await changedAgents(trx, since);
  const seeds = [...new Set([...agents.all, ...(opts.seeds ?? [])])];
  // Every edge this run drops or rewrites is recorded first: reputation inputs kept by difference.
  await createEdgeHistory(trx);
  const removed = left > 0 ? await dropStaleEdges(trx) : 0;
  const facts = await refreshFacts(trx, now, seeds, [...agents.stamped, ...(opts.seeds ?? [])]);
  const clock = await clockAgents(trx, prevNow, now);
  // The window's repeated pairs: kept by the runs, counted again where nothing kept them.
  const pairsKept = await pairCountsExact(trx, prevNow);
  if (!pairsKept) await countAllPairs(trx, now);
  let scope: string[] | 'rows' | null;
  let core = 0;
  let targets: number;
  if (mode === 'rows') {
    const rows = await stageCoreRows(trx, now);
    if (pairsKept) await recountChangedPairs(trx, now, 'core');
    core = rows.core;
    targets = rows.targets;
    // Rows that only left (K may be empty) still change reputation_v2's support pairs.
    scope = core > 0 || changed > 0 ? 'rows' : null;
  } else {
    if (pairsKept) await recountChangedPairs(trx, now, 'index');
    const seedSet = new Set(seeds);
    const all = [...seeds, ...(await widenedTargets(trx, now)).filter((id) => !seedSet.has(id))];
    targets = all.length;
    scope = all.length > 0 ? all : null;
  }
  let weights: WeightRunResult | null = null;
  // Agent mode keeps every agent it touched; rows mode those whose inputs moved (changedAgents).
  const repAgents = new Set(mode === 'rows' ? agents.reputations : seeds);
  const reach = { summed: 0, staged: repAgents.size, edges: 0, clusters: 0, unscored: 0 };
  let rewrote: string[] = [];
  const clusteredAgents: string[] = [];
  const t1 = Date.now();
  if (scope) {
    const { affected, moved, clustered, ...w } = await recomputeWeights(trx, now, scope, {
      pool,
      v2,
      facts: [],
      record: true,
    });
    weights = w;
    if (mode === 'agents') core = w.interactions;
    reach.edges = (moved ?? []).length;
    reach.clusters = (clustered ?? []).length;
    for (const id of moved ?? []) repAgents.add(id);
    for (const id of clustered ?? []) repAgents.add(id);
    clusteredAgents.push(...(clustered ?? []));
    rewrote = affected ?? [];
  }
  const tw = Date.now();
  // Kept inputs by difference (reputation_v1 alone, the benchmark's baseline, leaves v2's edges
  // behind: no input is kept then). Agents whose owners or clusters changed are summed again.
  if (v2) {
    const fresh = [...new Set([...(await ownerChangedAgents(trx, agents.stamped)), ...clusteredAgents])];
    for (const id of await stageInputDeltas(trx, windowStart(now), now, fresh)) repAgents.add(id);
  } else await forgetInputs(trx);
  const t2 = Date.now();
  // Agents only the clock moved: from their stored base, unless they have none yet.
  const models = v2 ? MODELS : (['reputation_v1'] as const);
  const clockOnly = clock.filter((id) => !repAgents.has(id));
  const light = await recomputeClockReputations(trx, now, clockOnly, models);
  for (const id of light.rest) repAgents.add(id);
  reach.unscored = light.rest.length;
  reach.summed = repAgents.size;
  const t3 = Date.now();
  const summed = await recomputeModels(trx, now, [...repAgents], undefined, v2, v2);
  const reps = { agents: summed.agents + light.agents, milestones: summed.milestones + light.milestones };
  await setWatermark(trx, mark);
  await setWindowClock(trx, now);
  // The rest of the transaction (a leaderboard refresh) analyzes with the default sample.
  await trx.raw('set local default_statistics_target to default');
  return {
    changed,
    removed,
    mode,
    facts,
    core,
    targets,
    weights,
    reputations: reps.agents,
    milestones: reps.milestones,
    full: false,
    reach,
    clockRows: light.written,
    stages: { closure: t1 - t0, weights: tw - t1, inputs: t2 - tw, clock: t3 - t2, reputations: Date.now() - t3 },
    // A new clock changes what every reader is shown (TRUST and the age are composed at the
    // run's clock, and it is their computedAt): everyone's. At the same clock, the agents whose
    // stored reputation this run may have rewritten: summed ones, the clock-only ones, the agents
    // of every rewritten edge (explain reads its reasons), and repAgents those of dropped edges
    // (targets, reply authors) and v2's changed ones.
    rescored: prevNow.getTime() !== now.getTime() ? null : [...new Set([...repAgents, ...rewrote, ...clockOnly])],
  };
}

/**
 * Brings every weight and reputation up to date, in time proportional to what changed
 * (incrementalStep): the debounced run after writes and the 30-minute periodic run.
 * `v1Only`: the benchmark's baseline for v2's cost.
 */
export async function runIncremental(deps: Deps, opts: { v1Only?: boolean } = {}): Promise<IncrementalResult> {
  const started = Date.now();
  const { rescored: _announced, ...r } = await inLock(
    deps,
    async (trx) => ({
      ...(await incrementalStep(trx, deps.now(), deps.scoringPool, { v2: !opts.v1Only })),
      ms: Date.now() - started,
    }),
    (r) => (r.rescored === null || r.core > 0 || r.reputations > 0 ? scoresChanged(r.rescored) : []),
  );
  return r;
}

export interface FullResult {
  weights: WeightRunResult;
  reputations: number;
  milestones: number;
  ms: number;
}

/**
 * Full recompute: every weight of the window, then every reputation, under both models.
 * `agentId`: the incremental run with that agent's facts, received interactions and reputation
 * recomputed too (what a change to the agent itself needs). `v1Only` leaves reputation_v2's
 * tables as they are: the benchmark's baseline for v2's cost.
 */
export async function runFull(deps: Deps, opts: { agentId?: string; v1Only?: boolean } = {}): Promise<FullResult> {
  const started = Date.now();
  const { rescored: _announced, ...r } = await inLock(
    deps,
    async (trx): Promise<FullResult & { rescored: string[] | null }> => {
      const now = deps.now();
      if (opts.agentId) {
        const r = await incrementalStep(trx, now, deps.scoringPool, { seeds: [opts.agentId] });
        const res = { reputations: r.reputations, milestones: r.milestones, rescored: r.rescored };
        return { weights: r.weights!, ...res, ms: Date.now() - started };
      }
      const { weights, reps } = await recomputeAll(trx, now, deps.scoringPool, !opts.v1Only);
      return {
        weights,
        reputations: reps.agents,
        milestones: reps.milestones,
        ms: Date.now() - started,
        rescored: null,
      };
    },
    (r) => scoresChanged(r.rescored),
  );
  return r;
}

/** Every weight of the window, then every reputation; the watermark and the window clock move to this run. */
async function recomputeAll(trx: Knex.Transaction, now: Date, pool: ScoringPool, v2 = true) {
  const mark = await dbClock(trx);
  const { sums, sumsV2, affected: _everyone, ...weights } = await recomputeWeights(trx, now, null, { pool, v2 });
  // Every agent's inputs, for the incremental runs to keep by difference (none without v2's).
  if (sums && sumsV2) await keepAllInputs(trx, sums, sumsV2);
  else await forgetInputs(trx);
  await countAllPairs(trx, now);
  const reps = await recomputeModels(trx, now, null, { sums, sumsV2 }, v2);
  await setWatermark(trx, mark);
  await setWindowClock(trx, now);
  // Every edge was rewritten: the live week's totals are rebuilt at its next refresh.
  await invalidateLiveWeek(trx, now);
  return { weights, reps };
}

/**
 * Freezes ended weeks (all missing ones, or `only`) inside the lock. A final snapshot never
 * changes, so the weights it is written from are first brought up to date in this transaction
 * (incrementalStep, exact: equal to a full recompute at this moment, with the stored clusters).
 */
async function freezeFresh(
  trx: Knex.Transaction,
  pool: ScoringPool,
  now: Date,
  only?: IsoWeek,
): Promise<SnapshotResult[]> {
  if ((await weeksToFreeze(trx, now, only)).length > 0) await incrementalStep(trx, now, pool);
  return freezeEndedWeeks(trx, now, only);
}

export interface LeaderboardRun {
  incremental: IncrementalResult;
  live: LiveResult | null;
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
      const live = await writeLiveSnapshots(trx, current, now);
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
