import type { Knex } from 'knex';
import { windowStart } from './stage-sql';
import { CHANGED_SHARE_PAIRS } from './closure';

/**
 * Rows mode of an incremental run: the window rows whose weight may change, and the rows their
 * rules read. A weight depends only on its own row with its agents', owners' and content's state
 * (every change of those touches the row's updated_at: touch.ts rescoreAgents,
 * content/interactions.ts), on its actor's stored facts, on the rows of its pair (a, t, kind:
 * PAIR_REPEAT ranks, RECIPROCAL_PATTERN counts) and the reverse pair's count, on the rows of its
 * object of the same kind (OWNER_DUPLICATE partitions, BRIGADE_PATTERN groups with their actors'
 * influence), and, for a reply, on its comment's score (LOW_SCORE_REPLY). So the core rows K
 * (temporary table sc_k) are:
 *  1. the live changed rows (sc_ch);
 *  2. the rows of the pairs and reverse pairs of changed votes and replies;
 *  3. the rows of the objects of changed rows, same kind;
 *  4. through facts changed in effect (sc_fd, closure.ts): influence, every window row of the
 *     agent and every vote on the objects of its votes; follow ring, its follows; outgoing votes or
 *     replies, the rows of its candidate reciprocal pairs both ways;
 *  5. the replies whose own comment was voted on in a changed row.
 * The staged rows S (temporary table sc_s, `core` marking K) add the rows of the pairs and
 * objects of K rows, so every group a K row's weight reads is whole; the weights of the other
 * staged rows are computed but never written. Rows of S carry the columns of interactions.
 */

const COLS = `i.id, i.kind, i.actor_agent_id, i.target_agent_id, i.post_id, i.comment_id, i.reply_comment_id, i.value,
  i.occurred_at, i.active`;
const WINDOW = 'i.active and i.occurred_at > :ws and i.occurred_at <= :now';

/** Window rows of the pairs (a, t, kind) listed by `pairs`. */
const pairRows = (pairs: string) => `
  select ${COLS} from (${pairs}) p
  join interactions i on i.actor_agent_id = p.a and i.target_agent_id = p.t and i.kind = p.kind
  where ${WINDOW}`;

/**
 * Window rows on the objects of `src` (a table or subquery with kind, t, post_id, comment_id), same kind: the
 * followed agent of a follow, the comment or else the post of a vote, reaction or reply (those
 * always have a post). One subquery: a UNION around it applies to all of it.
 */
const objectRows = (src: string) => `
  select * from (
  select ${COLS} from (select distinct t from ${src} s where kind = 'follow') o
  join interactions i on i.target_agent_id = o.t and i.kind = 'follow' where ${WINDOW}
  union all
  select ${COLS} from (select distinct kind, comment_id from ${src} s where kind <> 'follow' and comment_id is not null) o
  join interactions i on i.comment_id = o.comment_id and i.kind = o.kind where ${WINDOW}
  union all
  select ${COLS} from (select distinct kind, post_id from ${src} s where kind <> 'follow' and comment_id is null) o
  join interactions i on i.post_id = o.post_id and i.comment_id is null and i.kind = o.kind where ${WINDOW}) x`;

/** sc_ch's live rows under interactions' column names. */
const CHANGED_LIVE = `
  select id, kind, a actor_agent_id, t target_agent_id, post_id, comment_id, reply_comment_id, value, occurred_at, active
  from sc_ch where live`;

/**
 * Builds sc_k (K) and sc_s (S) from sc_ch and sc_fd, inside the scoring lock; returns their sizes
 * and how many agents received core rows.
 */
export async function stageCoreRows(
  trx: Knex.Transaction,
  now: Date,
): Promise<{ core: number; targets: number; staged: number }> {
  const b = { ws: windowStart(now), now };
  await trx.raw('drop table if exists sc_k, sc_s');
  await trx.raw(
    `create temp table sc_k on commit drop as
     with cp as materialized (${CHANGED_SHARE_PAIRS})
     ${CHANGED_LIVE}
     union ${pairRows(`select a, t, kind from sc_ch where kind in ('vote', 'reply')
                       union select t, a, kind from sc_ch where kind in ('vote', 'reply')
                       union select a, t, kind from cp union select t, a, kind from cp`)}
     union ${objectRows('sc_ch')}
     union select ${COLS} from sc_fd f join interactions i on i.actor_agent_id = f.id
       where ${WINDOW} and (f.infl or (f.ring and i.kind = 'follow'))
     union select ${COLS} from interactions i
       where i.kind = 'reply' and ${WINDOW}
         and i.reply_comment_id in (select comment_id from sc_ch where kind = 'vote' and comment_id is not null)`,
    b,
  );
  await trx.raw('analyze sc_k');
  // Brigade groups of the votes of agents whose influence changed (those votes are in K already):
  // every vote on those objects.
  await trx.raw(
    `insert into sc_k select * from (${objectRows(`(select kind, target_agent_id t, post_id, comment_id from sc_k
       where kind = 'vote' and actor_agent_id in (select id from sc_fd where infl))`)}) x
     where x.id not in (select id from sc_k)`,
    b,
  );
  await trx.raw('analyze sc_k');
  const s = await trx.raw(
    `create temp table sc_s on commit drop as
     select *, true core from sc_k
     union all
     select *, false from (
       ${pairRows(`select distinct actor_agent_id a, target_agent_id t, kind from sc_k where kind in ('vote', 'reply')`)}
       union ${objectRows('(select kind, target_agent_id t, post_id, comment_id from sc_k)')}
     ) x where x.id not in (select id from sc_k)`,
    b,
  );
  await trx.raw('analyze sc_s');
  const k = (await trx.raw('select count(*)::int core, count(distinct target_agent_id)::int targets from sc_k'))
    .rows[0];
  return { core: k.core, targets: k.targets, staged: s.rowCount ?? 0 };
}
