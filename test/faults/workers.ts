import { createHash } from 'node:crypto';
import type { JobName } from '../../src/db/jobs';
import type { ChildProcess } from 'child_process';
import type { Knex } from 'knex';
import { recomputeWeights } from '../../src/scoring/engine';
import { lockScoring } from '../../src/scoring/transaction';
import { getWindowClock } from '../../src/scoring/watermark';
import { recomputeReputations } from '../../src/scoring/reputation-run';
import { weekTotals } from '../../src/scoring/leaderboard-snapshots';
import { rankCategory } from '../../src/scoring/leaderboard';
import { parseWeek, weekStart } from '../../src/scoring/week';
import { CATEGORIES } from '../../src/scoring/policy';
import { outputOf, sleep, spawnEntry } from './harness';
import { readerReputations } from '../helpers/reputations';

/** Helpers of the worker-crash fault test: real worker processes and scoring-state checks. */

/** graphile runners a worker process starts, each with its heartbeat row: main, delivery, fleet (src/worker-runner.ts). */
const RUNNERS = 3;

export interface WorkerProc {
  child: ChildProcess;
  /** the main runner's pool id (scoring jobs): what it writes into `locked_by` (from its heartbeat row) */
  poolId: string;
  /** the pool ids of all the process's runners (the delivery runner's locks the webhook jobs) */
  poolIds: string[];
}

/** Starts `src/worker.ts` and waits for the heartbeat rows of all its runners (the worker is then taking jobs). */
export async function startWorkerProc(db: Knex, env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<WorkerProc> {
  const child = spawnEntry('worker', env);
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode}): ${outputOf(child)}`);
    // The main runner starts (and beats) first.
    const rows = await db('worker_heartbeats').where({ pid: child.pid }).orderBy('started_at').select('worker_id');
    if (rows.length >= RUNNERS) return { child, poolId: rows[0].worker_id, poolIds: rows.map((r) => r.worker_id) };
    await sleep(50);
  }
  throw new Error(`worker did not register its heartbeat in ${timeoutMs} ms: ${outputOf(child)}`);
}

export async function sigkill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const done = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await done;
}

export async function waitFor(cond: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
  return Date.now() - start;
}

/** Queued (not yet completed) jobs of these tasks, with their lock holder. */
export async function queuedJobs(
  db: Knex,
  tasks: JobName[],
): Promise<{ id: string; task: string; locked_by: string | null; attempts: number; last_error: string | null }[]> {
  const r = await db.raw(
    `select j.id, t.identifier task, j.locked_by, j.attempts, j.last_error from graphile_worker._private_jobs j
     join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = any(?) order by j.id`,
    [tasks],
  );
  return r.rows;
}

/**
 * Samples the scoring state every few ms while workers run and die: a week's snapshots are
 * all six categories or none, a reputation run is all agents or none, and no job is ever held
 * by two lock holders (a live worker's job released under it would show as a second holder).
 */
export class Observer {
  readonly violations: string[] = [];
  readonly holders = new Map<string, Set<string>>();
  /** first and last time each (job, holder) lock was seen */
  private spans = new Map<string, [number, number]>();
  readonly repCounts = new Set<number>();
  readonly errors = new Set<string>();
  samples = 0;
  private running = false;
  private loop: Promise<void> | null = null;
  constructor(private db: Knex) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          const r = await this.db.raw(`select
            (select coalesce(json_agg(x), '[]') from (select week, count(*)::int n, count(distinct status)::int statuses from leaderboard_snapshots group by week) x) weeks,
            (select count(*)::int from reputation_scores) reps,
            (select coalesce(json_agg(json_build_object('id', id::text, 'by', locked_by)), '[]') from graphile_worker._private_jobs where locked_by is not null) locks,
            (select coalesce(json_agg(distinct last_error), '[]') from graphile_worker._private_jobs where last_error is not null) errors`);
          const s = r.rows[0];
          for (const w of s.weeks) {
            if (w.n !== CATEGORIES.length || w.statuses !== 1)
              this.violations.push(`week ${w.week}: ${w.n} snapshots, ${w.statuses} statuses`);
          }
          this.repCounts.add(s.reps);
          for (const e of s.errors) this.errors.add(e);
          for (const l of s.locks) {
            const set = this.holders.get(l.id) ?? new Set<string>();
            set.add(l.by);
            this.holders.set(l.id, set);
            const key = `${l.id}/${l.by}`;
            const span = this.spans.get(key);
            if (span) span[1] = Date.now();
            else this.spans.set(key, [Date.now(), Date.now()]);
          }
          this.samples++;
        } catch (e) {
          this.violations.push(`sample failed: ${(e as Error).message}`);
        }
        await sleep(25);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  lockHolders(): Set<string> {
    const all = new Set<string>();
    for (const s of this.holders.values()) for (const h of s) all.add(h);
    return all;
  }

  longestHoldMs(): number {
    return Math.max(0, ...[...this.spans.values()].map(([a, b]) => b - a));
  }

  /** Jobs that were locked by more than one holder while observed. */
  doublyHeld(): string[] {
    return [...this.holders.entries()].filter(([, s]) => s.size > 1).map(([id, s]) => `${id}: ${[...s].join(', ')}`);
  }
}

export interface ScoringState {
  edges: { n: number; md5: string };
  reputations: { n: number; md5: string };
  snapshots: Map<string, { status: string; entries: unknown }>;
}

async function readState(db: Knex | Knex.Transaction): Promise<ScoringState> {
  const e = await db.raw(
    `select count(*)::int n, md5(coalesce(string_agg(interaction_id || ':' || weight || ':' || array_to_string(reasons, ','), ';' order by interaction_id), '')) md5 from scoring_edges`,
  );
  // As readers get them: TRUST's score and the age at the last run's clock.
  const reps = await readerReputations(db, 'reputation_scores');
  const md5 = createHash('md5')
    .update(reps.map((x) => `${x.id}:${x.score}:${JSON.stringify(x.components)}`).join(';'))
    .digest('hex');
  const s = await db.raw(`select week, category, status, entries from leaderboard_snapshots`);
  const snapshots = new Map<string, { status: string; entries: unknown }>();
  for (const row of s.rows) snapshots.set(`${row.week}/${row.category}`, { status: row.status, entries: row.entries });
  return { edges: e.rows[0], reputations: { n: reps.length, md5 }, snapshots };
}

export const storedState = (db: Knex) => readState(db);

/**
 * A clean single-process recompute of what the workers left, inside a transaction that is
 * rolled back: weights and every reputation from scratch at the clock of the last run (its
 * window clock: incremental runs are exact, so everything stored equals a full recompute at that
 * moment, though they rewrite only the edges and reputations that changed and leave the others'
 * computed_at as it was), and every stored week's six rankings recomputed from those weights.
 * Returns the state it would have written.
 */
export async function cleanRecompute(db: Knex): Promise<ScoringState> {
  const ROLLBACK = new Error('rollback');
  let out: ScoringState | null = null;
  try {
    await db.transaction(async (trx) => {
      await lockScoring(trx);
      const clock = await getWindowClock(trx);
      if (!clock) throw new Error('no scoring run has recorded its clock');
      const weeks = (await trx.raw(`select distinct week from leaderboard_snapshots`)).rows.map(
        (r: { week: string }) => r.week,
      );
      await trx.raw('delete from reputation_scores');
      await recomputeWeights(trx, clock, null);
      await recomputeReputations(trx, clock, null);
      const base = await readState(trx);
      const snapshots = new Map<string, { status: string; entries: unknown }>();
      for (const wk of weeks) {
        const w = parseWeek(wk)!;
        const totals = await weekTotals(trx, w);
        for (const c of CATEGORIES)
          snapshots.set(`${wk}/${c}`, {
            status: '',
            entries: JSON.parse(JSON.stringify(rankCategory(c, totals, weekStart(w)))),
          });
      }
      out = { ...base, snapshots };
      throw ROLLBACK;
    });
  } catch (e) {
    if (e !== ROLLBACK) throw e;
  }
  return out!;
}
