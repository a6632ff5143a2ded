import type { Knex } from 'knex';
import { addJob } from '../db/jobs';

/** Debounce window of incremental scoring after a write. */
export const TOUCH_DEBOUNCE_MS = 30_000;

/**
 * Called in the transaction of every write that creates, changes or removes an interaction.
 * One debounced job (jobKey) covers a burst of writes; the job recomputes what changed since
 * its last watermark, so the payload needs no agent list.
 */
export async function enqueueScoringTouch(trx: Knex | Knex.Transaction, now = new Date()): Promise<void> {
  await addJob(trx, 'scoring_incremental', {}, {
    jobKey: 'scoring_incremental',
    jobKeyMode: 'preserve_run_at',
    runAt: new Date(now.getTime() + TOUCH_DEBOUNCE_MS),
  });
}
