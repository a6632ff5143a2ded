import type { Knex } from 'knex';

type Db = Knex | Knex.Transaction;

/** One flag per (post or comment, direction) with brigaded votes; re-detection refreshes it. */
export async function writeBrigadeFlags(trx: Db, ids: number[], now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await trx.raw(
    `insert into brigade_flags (post_id, comment_id, target_agent_id, direction, votes, first_vote_at, last_vote_at, flagged_at)
     select case when comment_id is null then post_id end, comment_id, (array_agg(t))[1], dir, count(*), min(ts), max(ts), :now
     from (select i.post_id, i.comment_id, i.target_agent_id t, case when i.value > 0 then 1 else -1 end dir, i.occurred_at ts
           from interactions i where i.id = any(:ids::bigint[])) x
     group by 1, 2, 4
     on conflict (post_id, comment_id, direction) do update set votes = excluded.votes,
       first_vote_at = excluded.first_vote_at, last_vote_at = excluded.last_vote_at, flagged_at = excluded.flagged_at`,
    { ids, now },
  );
  return r.rowCount;
}
