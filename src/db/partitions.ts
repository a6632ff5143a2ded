import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/**
 * Monthly range partitions (UTC months) of a table partitioned on a timestamp column, each
 * named `<table>_YYYY_MM`, beside a `<table>_default` partition that catches the rest.
 */

/** The first instant of the UTC month of `at`, `months` later (or earlier when negative). */
export function monthStart(at: Date, months = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
}

export function monthPartitionName(table: string, month: Date): string {
  return `${table}_${month.getUTCFullYear()}_${String(month.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Creates the partition of `table` for the month of `month` unless it exists; true when it did.
 * The partition is built as a table of its own and then attached, which locks the parent only
 * against other DDL (reads and writes go on). Rows the DEFAULT partition holds for that month
 * move into it first, in the same transaction (attaching validates that none is left behind).
 */
export async function ensureMonthPartition(db: Db, table: string, column: string, month: Date): Promise<boolean> {
  const from = monthStart(month);
  const to = monthStart(month, 1);
  const name = monthPartitionName(table, from);
  return db.transaction(async (trx) => {
    // Two creators of one partition (a job and a migration) queue here; the second finds it made.
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [name]);
    if ((await trx.raw('select to_regclass(?) is not null as present', [name])).rows[0].present) return false;
    await trx.raw(`create table ${name} (like ${table} including defaults including constraints)`);
    await trx.raw(
      `with moved as (delete from ${table}_default where ${column} >= ? and ${column} < ? returning *)
       insert into ${name} select * from moved`,
      [from, to],
    );
    // DDL takes no bind parameters: the bounds are ISO literals of two Dates.
    await trx.raw(
      `alter table ${table} attach partition ${name} for values from ('${from.toISOString()}') to ('${to.toISOString()}')`,
    );
    return true;
  });
}

/** Ensures the partitions of every month from `from`'s to `to`'s (both included); returns the created names. */
export async function ensureMonthPartitions(
  db: Db,
  table: string,
  column: string,
  from: Date,
  to: Date,
): Promise<string[]> {
  const created: string[] = [];
  for (let m = monthStart(from); m <= to; m = monthStart(m, 1)) {
    if (await ensureMonthPartition(db, table, column, m)) created.push(monthPartitionName(table, m));
  }
  return created;
}
