import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/** Where the last incremental run stopped: interactions updated after it are scored next. */

export const WATERMARK = 'scoring_incremental';

export async function getWatermark(db: Db): Promise<Date | null> {
  const row = await db('scoring_watermarks').where({ name: WATERMARK }).first();
  return row ? new Date(row.watermark) : null;
}

export async function setWatermark(db: Db, at: Date): Promise<void> {
  await db.raw(
    `insert into scoring_watermarks (name, watermark, updated_at) values (?, ?, now())
     on conflict (name) do update set watermark = greatest(scoring_watermarks.watermark, excluded.watermark), updated_at = now()`,
    [WATERMARK, at],
  );
}
