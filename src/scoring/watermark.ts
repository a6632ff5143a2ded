import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/** Where the last incremental run stopped: interactions updated after it are scored next. */

export const WATERMARK = 'scoring_incremental';

export const getWatermark = (db: Db) => getMark(db, WATERMARK);

export async function setWatermark(db: Db, at: Date): Promise<void> {
  await db.raw(
    `insert into scoring_watermarks (name, watermark, updated_at) values (?, ?, now())
     on conflict (name) do update set watermark = greatest(scoring_watermarks.watermark, excluded.watermark), updated_at = now()`,
    [WATERMARK, at],
  );
}

/**
 * The service clock of the last run that brought the stored weights up to date: the next
 * incremental run takes the rows whose place in the 90-day window changed since (changes.ts).
 */
export const WINDOW_CLOCK = 'scoring_window';

export const getWindowClock = (db: Db) => getMark(db, WINDOW_CLOCK);

/** Unlike the watermark it may move back: the service clock of tests and replays does. */
export const setWindowClock = (db: Db, now: Date) => setMark(db, WINDOW_CLOCK, now);

/** A named time of scoring_watermarks, or null. */
export async function getMark(db: Db, name: string): Promise<Date | null> {
  const row = await db('scoring_watermarks').where({ name }).first();
  return row ? new Date(row.watermark) : null;
}

/** Sets a named time of scoring_watermarks to `at`, backwards too. */
export async function setMark(db: Db, name: string, at: Date): Promise<void> {
  await db.raw(
    `insert into scoring_watermarks (name, watermark, updated_at) values (?, ?, now())
     on conflict (name) do update set watermark = excluded.watermark, updated_at = now()`,
    [name, at],
  );
}

/** Removes a named time of scoring_watermarks: what it marked is no longer known. */
export async function clearMark(db: Db, name: string): Promise<void> {
  await db.raw('delete from scoring_watermarks where name = ?', [name]);
}

/** Sets the watermark to `at`, backwards too (a fleet run's publication); returns the one it replaced. */
export async function resetWatermark(db: Db, at: Date): Promise<Date | null> {
  const r = await db.raw(
    `with prev as (select watermark from scoring_watermarks where name = ? for update)
     insert into scoring_watermarks (name, watermark, updated_at) values (?, ?, now())
     on conflict (name) do update set watermark = excluded.watermark, updated_at = now()
     returning (select watermark from prev) prev`,
    [WATERMARK, WATERMARK, at],
  );
  const prev = r.rows[0].prev;
  return prev ? new Date(prev) : null;
}
