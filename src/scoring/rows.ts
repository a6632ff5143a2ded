import type { Knex } from 'knex';
import { windowStart, WINDOW } from './stage-sql';
import { tuneScoped } from './transaction';
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
 * staged rows are computed but never written. Rows of S carry the columns of interactions. A pair
 * is looked up only where the window's repeated pairs (pair-counts.ts: exact for the pairs of S,
 * none of which has a changed row) count more rows than K holds of it.
 */

const COLS = `i.id, i.kind, i.actor_agent_id, i.target_agent_id, i.post_id, i.comment_id, i.reply_comment_id, i.value,
  i.occurred_at, i.active`;

/**
 * The keys (id, occurred_at) of the window rows of the pairs (a, t, kind) listed by `pairs` (a
 * table or subquery), looked up by index pair by pair (a lateral subquery, kept one by `offset 0`),
 * in key order so consecutive probes share index pages: joined as sets, tens of thousands of pairs
 * planned a hash join over a scan of the whole window, growing with it (1M interactions: 0.75 s of
 * a 30-minute cycle). Keys only, from the covering interactions_actor_idx / _target_idx (sql/125):
 * most pairs hold no row but the one a run has read already, whose heap row is then not read again
 * (`byKey` reads the others).
 */
const pairKeys = (pairs: string) => `
  select i.id, i.occurred_at from (select * from ${pairs} q order by a, t) p cross join lateral (
    select i.id, i.occurred_at from interactions i
    where i.actor_agent_id = p.a and i.target_agent_id = p.t and i.kind = p.kind and ${WINDOW} offset 0
  ) i`;

/** The rows of `keys` (id, occurred_at), each by primary key (its partition pruned by occurred_at). */
const byKey = (keys: string) => `
  select i.* from (select * from ${keys} k order by occurred_at, id) k cross join lateral (
    select ${COLS} from interactions i where i.id = k.id and i.occurred_at = k.occurred_at offset 0
  ) i`;

/**
 * The objects of rows `src` (interactions' columns; sc_ch names the target `t`), as (kind, obj,
 * cmt): the followed agent of a follow, the comment or else the post of a vote, reaction or reply
 * (those always have a post), and whether obj is a comment.
 */
const objectsOf = (src: string, t = 'target_agent_id') => `
  select distinct kind, case when kind = 'follow' then ${t} else coalesce(comment_id, post_id) end obj,
    kind <> 'follow' and comment_id is not null cmt
  from ${src}`;

/**
 * Window rows on the objects listed by `objects` (kind, obj, cmt), same kind; one subquery. The
 * objects are probed in key order, so consecutive probes share the index's pages.
 */
const objectRows = (objects: string) => `
  select * from (
    select ${COLS} from (select * from ${objects} q order by obj) o
    join interactions i on i.target_agent_id = o.obj and i.kind = 'follow' where o.kind = 'follow' and ${WINDOW}
    union all
    select ${COLS} from (select * from ${objects} q order by obj) o
    join interactions i on i.comment_id = o.obj and i.kind = o.kind where o.cmt and ${WINDOW}
    union all
    select ${COLS} from (select * from ${objects} q order by obj) o
    join interactions i on i.post_id = o.obj and i.comment_id is null and i.kind = o.kind
    where o.kind <> 'follow' and not o.cmt and ${WINDOW}
  ) x`;

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
  // Every lookup here is by index, for a small share of the window.
  await tuneScoped(trx);
  await trx.raw('drop table if exists sc_kp, sc_ko, sc_kv, sc_k, sc_s');
  // The pairs and objects whose every window row goes into K: S does not look them up again.
  await trx.raw(
    `create temp table sc_kp on commit drop as
     with cp as materialized (${CHANGED_SHARE_PAIRS})
     select a, t, kind from sc_ch where kind in ('vote', 'reply')
     union select t, a, kind from sc_ch where kind in ('vote', 'reply')
     union select a, t, kind from cp union select t, a, kind from cp`,
    b,
  );
  await trx.raw(`create temp table sc_ko on commit drop as ${objectsOf('sc_ch', 't')}`);
  await trx.raw('analyze sc_kp; analyze sc_ko');
  await trx.raw(
    `create temp table sc_k on commit drop as
       ${CHANGED_LIVE}
       union ${byKey(`(select * from (${pairKeys('sc_kp')}) k where k.id not in (select id from sc_ch where live))`)}
       union ${objectRows('sc_ko')}
       union select ${COLS} from sc_fd f join interactions i on i.actor_agent_id = f.id
         where ${WINDOW} and (f.infl or (f.ring and i.kind = 'follow'))
       union select ${COLS} from interactions i
         where i.kind = 'reply' and ${WINDOW}
           and i.reply_comment_id in (select comment_id from sc_ch where kind = 'vote' and comment_id is not null)`,
    b,
  );
  // Brigade groups of the votes of agents whose influence changed (those votes are in K already):
  // every vote on those objects.
  await trx.raw(
    `create temp table sc_kv on commit drop as
     ${objectsOf("sc_k where kind = 'vote' and actor_agent_id in (select id from sc_fd where infl)")}
     except select * from sc_ko`,
  );
  await trx.raw(`insert into sc_k select * from (${objectRows('sc_kv')}) x where x.id not in (select id from sc_k)`, b);
  await trx.raw('insert into sc_ko select * from sc_kv');
  await trx.raw('analyze sc_k; analyze sc_ko');
  const k = (await trx.raw('select count(*)::int core, count(distinct target_agent_id)::int targets from sc_k'))
    .rows[0];
  const s = await trx.raw(
    `create temp table sc_s on commit drop as
       with so as materialized (${objectsOf('sc_k')} except select * from sc_ko),
       sp as materialized (${pairKeys(`(select a, t, kind from (
                        select actor_agent_id a, target_agent_id t, kind, count(*) k from sc_k where kind in ('vote', 'reply')
                        group by 1, 2, 3) p
                      where not exists (select from sc_kp q where q.a = p.a and q.t = p.t and q.kind = p.kind)
                        and exists (select from scoring_pair_counts c where c.actor_agent_id = p.a
                          and c.target_agent_id = p.t and c.kind = p.kind and c.n > p.k))`)})
       select *, true core from sc_k
       union all
       select *, false from (
         ${byKey('(select * from sp where id not in (select id from sc_k))')}
         union ${objectRows('so')}
       ) x where x.id not in (select id from sc_k)`,
    b,
  );
  await trx.raw('analyze sc_s');
  return { core: k.core, targets: k.targets, staged: s.rowCount ?? 0 };
}
