import type { Knex } from 'knex';
import { ensureMonthPartitions, monthStart } from '../db/partitions';

/**
 * `interactions` is partitioned by UTC month of occurred_at. Months: scoring's 90-day window
 * then spans four partitions, and history beyond it stays in a few dozen partitions for years of
 * audits (weekly ones would be four times as many for every lookup that is not by time).
 */
export const INTERACTION_PARTITIONS = { table: 'interactions', column: 'occurred_at' } as const;

/** Partitions exist this many months ahead of the current one (the daily job can fail for weeks). */
export const PARTITION_MONTHS_AHEAD = 2;

/**
 * Creates the missing partitions of the current month and the next PARTITION_MONTHS_AHEAD,
 * moving into each the rows the DEFAULT partition held for its month; returns the created names.
 */
export async function ensureInteractionPartitions(db: Knex, now: Date): Promise<string[]> {
  const { table, column } = INTERACTION_PARTITIONS;
  return ensureMonthPartitions(db, table, column, monthStart(now), monthStart(now, PARTITION_MONTHS_AHEAD));
}
