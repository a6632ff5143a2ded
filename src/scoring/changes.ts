import type { Knex } from 'knex';
import { SCHEDULE } from './policy';

type Db = Knex | Knex.Transaction;

/**
 * Agents whose received interactions must be rescored after the rows changed since `since`:
 * targets and actors of changed rows, and authors of replies whose comment was voted on
 * (LOW_SCORE_REPLY follows the reply's score).
 */
export async function touchedTargets(db: Db, since: Date): Promise<{ targets: string[]; changed: number }> {
  const from = new Date(since.getTime() - SCHEDULE.watermarkOverlapSeconds * 1000);
  const r = await db.raw(
    `with ch as (select * from interactions where updated_at > ?)
     select array(
       select target_agent_id from ch
       union select actor_agent_id from ch
       union select rep.target_agent_id from ch join interactions rep
         on rep.kind = 'reply' and rep.reply_comment_id = ch.comment_id
       where ch.kind = 'vote' and ch.comment_id is not null
     ) targets, (select count(*) from ch) changed`,
    [from],
  );
  return { targets: r.rows[0].targets, changed: Number(r.rows[0].changed) };
}
