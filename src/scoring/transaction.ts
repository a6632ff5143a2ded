import type { Knex } from 'knex';
import { SCHEDULE } from './policy';

/** Settings of the transaction a scoring run writes in: the lock that serialises runs, memory and planner costs. */

/**
 * Scoring locks are transaction-level advisory locks (SCORING_LOCK, partition), one per partition
 * of the agents (partitionOf): a run that writes what the agents of some partitions received
 * (an incremental run, a fleet partition's facts) takes those, in ascending order so two runs
 * never wait for each other in a cycle; a run over the whole graph takes them all.
 */
export const SCORING_LOCK = 0x5c0e1;

/** SQL: the scoring partition of the agent id `col` (0 … SCHEDULE.partitions − 1). */
export function partitionOf(col: string): string {
  return `((uuid_hash(${col}) & 2147483647) % ${SCHEDULE.partitions})`;
}

/**
 * Batches over millions of rows outlive the pool's default statement timeout; sorts and hashes
 * of a million rows must stay in memory; JIT compiles these one-off statements for seconds. Set
 * before any lock wait, which may last as long as another run.
 */
export async function tuneRun(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`set local statement_timeout = 0; set local work_mem = '${SCHEDULE.workMem}';
    set local maintenance_work_mem = '${SCHEDULE.workMem}'; set local jit = off`);
}

/** Every partition: runs over the whole graph (full recompute in one transaction, snapshots, a fleet publication). */
export async function lockScoring(trx: Knex.Transaction): Promise<void> {
  await tuneRun(trx);
  await trx.raw(`select pg_advisory_xact_lock(?, p) from generate_series(0, ?) p`, [
    SCORING_LOCK,
    SCHEDULE.partitions - 1,
  ]);
}

/** The partitions of `agents`, in ascending order (the transaction is tuned by the caller). */
export async function lockPartitions(trx: Knex.Transaction, agents: string[]): Promise<void> {
  await trx.raw(
    `select pg_advisory_xact_lock(?, p) from (
       select distinct ${partitionOf('a')} p from unnest(?::uuid[]) a order by 1) x`,
    [SCORING_LOCK, agents],
  );
}

/** Scoped runs look rows up by index: price random reads as the in-memory reads they are. */
export async function tuneScoped(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`set local random_page_cost = ${SCHEDULE.scopedRandomPageCost}`);
}

/**
 * Staging tables live in local buffers; their size can only be raised before the session's
 * first temporary table, so this tries once per connection inside a savepoint.
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
