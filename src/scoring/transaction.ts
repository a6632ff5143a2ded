import type { Knex } from 'knex';
import { SCHEDULE } from './policy';

/** Settings of the transaction a scoring run writes in: the lock that serialises runs, memory and planner costs. */

/** Transaction-level advisory lock key serialising every scoring write to the live tables (any process). */
export const SCORING_LOCK = 0x5c0e1;

/** SQL: the partition of the agent id `col` in a fleet run (0 … parts − 1). */
export function partitionOf(col: string, parts: number = SCHEDULE.partitions): string {
  return `((uuid_hash(${col}) & 2147483647) % ${parts})`;
}

/** SQL: the reputations partition of the agent id `col` in a fleet run (SCHEDULE.reputationPartitions). */
export function reputationPartOf(col: string): string {
  return partitionOf(col, SCHEDULE.reputationPartitions);
}

/**
 * Batches over millions of rows outlive the pool's default statement timeout; sorts and hashes
 * of a million rows must stay in memory; JIT compiles these one-off statements for seconds. Set
 * before any lock wait, which may last as long as another run.
 */
export async function tuneRun(trx: Knex.Transaction): Promise<void> {
  await tuneTempBuffers(trx);
  await trx.raw(`set local statement_timeout = 0; set local work_mem = '${SCHEDULE.workMem}';
    set local maintenance_work_mem = '${SCHEDULE.workMem}'; set local jit = off`);
}

/**
 * A fleet partition's transaction: a run's settings, without parallel query. The fleet already
 * runs a partition per worker process on every core; a partition's parallel workers only take
 * cores from the others (a 1M fleet run on 2 cores: 1.6 s of them in one reputations phase, which
 * took 15.6 s against 11.7).
 */
export async function tunePartition(trx: Knex.Transaction): Promise<void> {
  await tuneRun(trx);
  await trx.raw('set local max_parallel_workers_per_gather = 0');
}

/** The scoring lock, alone (a fleet run's facts partitions share it; its other partitions build beside the live tables without it). */
export async function lockScoring(trx: Knex.Transaction): Promise<void> {
  await tuneRun(trx);
  await trx.raw('select pg_advisory_xact_lock(?)', [SCORING_LOCK]);
}

/**
 * An incremental run analyzes a dozen staging tables of up to a few hundred thousand rows, for
 * their sizes and the spread of their join keys; the default sample (30,000 rows, 100 buckets
 * per column) cost about 0.45 s of a 30-minute cycle at 4M interactions. A tenth of it sizes
 * them alike. In the run's transaction only: full runs analyze the tables they rewrite whole.
 */
export async function tuneStagingStatistics(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`set local default_statistics_target = ${SCHEDULE.stagingStatisticsTarget}`);
}

/** Scoped runs look rows up by index: price random reads as the in-memory reads they are. */
export async function tuneScoped(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`set local random_page_cost = ${SCHEDULE.scopedRandomPageCost}`);
}

/**
 * Staging tables live in local buffers; their size can only be raised before the session's
 * first temporary table, so every run tries first thing (tuneRun), inside a savepoint: an
 * incremental run creates its first staging table long before its weights, and a connection
 * that met a temporary table at the default size keeps that size (8 MB: the staged rows of a
 * 30-minute cycle went to disk and back).
 */
export async function tuneTempBuffers(trx: Knex.Transaction): Promise<void> {
  try {
    await trx.transaction(async (sp) => {
      await sp.raw(`set temp_buffers = '${SCHEDULE.tempBuffers}'`);
    });
  } catch {
    // Temporary tables were already used on this connection: keep its current size.
  }
}
