import type { Knex } from 'knex';
import { windowStart, WINDOW } from './stage-sql';
import { clearMark, getMark, setMark } from './watermark';

/**
 * The window's repeated pairs (scoring_pair_counts, sql/129): every (actor, target, kind) of votes
 * and replies with two or more window rows, and how many. A rows-mode run stages the rows of the
 * pairs of its core rows so each pair's group is whole (PAIR_REPEAT, RECIPROCAL_PATTERN); nearly
 * every such pair holds only the core row itself, and proving that cost an index lookup in each
 * monthly partition of the window (at 4M interactions, 59k pairs: 0.4-0.5 s of a 30-minute cycle).
 * With this table a pair it does not list, or lists with no more rows than the run holds, is
 * skipped.
 *
 * It is exact while the `scoring_pairs` row of scoring_watermarks holds the window clock:
 * - a full recompute counts it again (one pass over the window) at its clock;
 * - an incremental run counts again the pairs of its changed rows (a pair's window rows change only
 *   when one of its rows is written, changes, or crosses a window edge, and each of those rows is
 *   in sc_ch): rows mode from its core rows, which hold every window row of those pairs; agent mode
 *   by index;
 * - a fleet publication forgets it (the next rows-mode run counts it again).
 * A row committed while a run stages (after sc_ch, before the core rows are read) can be weighed
 * without the one other row of a pair the table does not list; its write queued the next run, which
 * stages it as changed and weighs its pair whole, as for every group read while a run stages.
 */

const MARK = 'scoring_pairs';
const PAIR_KINDS = `kind in ('vote', 'reply')`;

/** Whether the counts are exact at the window clock `windowClock`. */
export async function pairCountsExact(trx: Knex.Transaction, windowClock: Date): Promise<boolean> {
  return (await getMark(trx, MARK))?.getTime() === windowClock.getTime();
}

/** The counts no longer describe the window (a fleet publication replaced what runs kept). */
export async function forgetPairCounts(trx: Knex.Transaction): Promise<void> {
  await clearMark(trx, MARK);
  await trx.raw('truncate scoring_pair_counts');
}

/** Counts every pair of the window at `now` again, and marks the counts exact. */
export async function countAllPairs(trx: Knex.Transaction, now: Date): Promise<void> {
  await trx.raw('truncate scoring_pair_counts');
  await trx.raw(
    `insert into scoring_pair_counts (actor_agent_id, target_agent_id, kind, n)
     select i.actor_agent_id, i.target_agent_id, i.kind, count(*) from interactions i
     where ${WINDOW} and i.${PAIR_KINDS} group by 1, 2, 3 having count(*) >= 2`,
    { ws: windowStart(now), now },
  );
  await setMark(trx, MARK, now);
}

/**
 * Counts the pairs of the changed rows (sc_ch) again. `core`: from sc_k, which holds every window
 * row of those pairs (rows.ts); else each pair by index.
 */
export async function recountChangedPairs(trx: Knex.Transaction, now: Date, source: 'core' | 'index'): Promise<void> {
  const changed = `select distinct a, t, kind from sc_ch where ${PAIR_KINDS}`;
  await trx.raw(
    `delete from scoring_pair_counts c using (${changed}) p
     where c.actor_agent_id = p.a and c.target_agent_id = p.t and c.kind = p.kind`,
  );
  await trx.raw(
    source === 'core'
      ? `insert into scoring_pair_counts (actor_agent_id, target_agent_id, kind, n)
         select k.actor_agent_id, k.target_agent_id, k.kind, count(distinct k.id) from sc_k k
         where (k.actor_agent_id, k.target_agent_id, k.kind) in (${changed})
         group by 1, 2, 3 having count(distinct k.id) >= 2`
      : `insert into scoring_pair_counts (actor_agent_id, target_agent_id, kind, n)
         select p.a, p.t, p.kind, c.n from (${changed}) p cross join lateral (
           select count(*)::int4 n from interactions i
           where i.actor_agent_id = p.a and i.target_agent_id = p.t and i.kind = p.kind and ${WINDOW}
         ) c where c.n >= 2`,
    { ws: windowStart(now), now },
  );
  await setMark(trx, MARK, now);
}
