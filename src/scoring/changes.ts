import type { Knex } from 'knex';
import { SCHEDULE } from './policy';
import { kindCode, windowStart } from './stage-sql';
import { recordEdgesSql } from './reputation-deltas';

/**
 * The rows an incremental run starts from (temporary table sc_ch): rows updated since the
 * watermark, and rows whose place in the 90-day window changed since the previous run's clock
 * (`prevNow`): those that left it (occurred_at between the two window starts) and those that
 * entered it (between the two clocks). Both ranges are taken in either direction, so a clock set
 * back (tests, replays) is followed as exactly as one moving forward. `live`: the row is active
 * and inside the window now (else its stored edges go); `a` and `t` are its actor and target.
 */
export async function stageChanges(
  trx: Knex.Transaction,
  since: Date,
  prevNow: Date,
  now: Date,
): Promise<{ changed: number; left: number }> {
  const from = new Date(since.getTime() - SCHEDULE.watermarkOverlapSeconds * 1000);
  const [lo, hi] = prevNow < now ? [prevNow, now] : [now, prevNow];
  await trx.raw('drop table if exists sc_ch');
  // Every column of the row (rows mode stages the live ones as they are, src/scoring/rows.ts).
  const cols = `id, kind, actor_agent_id a, target_agent_id t, post_id, comment_id, reply_comment_id, value, occurred_at,
    active, active and occurred_at > :ws and occurred_at <= :now live`;
  await trx.raw(
    `create temp table sc_ch on commit drop as
     select ${cols} from interactions where updated_at > :from
     union select ${cols} from interactions where occurred_at > :wlo and occurred_at <= :whi
     union select ${cols} from interactions where occurred_at > :lo and occurred_at <= :hi`,
    { from, ws: windowStart(now), now, wlo: windowStart(lo), whi: windowStart(hi), lo, hi },
  );
  const n = await trx.raw('select count(*)::int changed, (count(*) filter (where not live))::int "left" from sc_ch');
  return n.rows[0];
}

/**
 * Agents the staged rows concern. `all`: those whose facts are refreshed and, in agent mode,
 * whose received interactions are rescored: targets and actors of changed rows (an actor's own
 * facts and the reverse direction of its pairs), the targets of replies whose comment was voted on
 * (LOW_SCORE_REPLY follows the reply's score), and agents stamped as changed themselves since the
 * watermark (scoring_agent_changes; older stamps go), also listed alone (`stamped`).
 * `reputations`: those whose reputation inputs the changed rows themselves move (a reputation
 * sums the votes, replies and follows the agent received and the replies it wrote, with its own
 * state; reactions count in none): targets of changed rows other than reactions, authors of
 * changed replies, stamped agents; the rows whose weight changes add theirs when written.
 */
export async function changedAgents(
  trx: Knex.Transaction,
  since: Date,
): Promise<{ all: string[]; reputations: string[]; stamped: string[] }> {
  const from = new Date(since.getTime() - SCHEDULE.watermarkOverlapSeconds * 1000);
  await trx.raw(`delete from scoring_agent_changes where at < :from::timestamptz - interval '1 day'`, { from });
  const r = await trx.raw(
    `with st as (select distinct agent_id id from scoring_agent_changes where at > :from),
     rp as (
       select id from st
       union select t from sc_ch where kind <> 'reaction'
       union select a from sc_ch where kind = 'reply'
     )
     select array(
       select id from rp
       union select t from sc_ch
       union select a from sc_ch
       union select rep.target_agent_id from sc_ch ch join interactions rep
         on rep.kind = 'reply' and rep.reply_comment_id = ch.comment_id
       where ch.kind = 'vote' and ch.comment_id is not null
     ) "all", array(select id from rp) reputations, array(select id from st) stamped`,
    { from },
  );
  return r.rows[0];
}

/**
 * Agents whose kept reputation inputs (reputation-deltas.ts) the changed rows may change through
 * something other than their weights: the agents stamped as changed since the watermark (a claim
 * changes an owner, which the distinct-owner counts are made of) and the other agent of every
 * changed row of theirs (its target, and a reply's author). Those are summed again from their rows.
 * `stamped`: changedAgents' list.
 */
export async function ownerChangedAgents(trx: Knex.Transaction, stamped: string[]): Promise<string[]> {
  const r = await trx.raw(
    `with st as (select unnest(:stamped::uuid[]) id),
       rows as (select a, t, kind from sc_ch where a in (select id from st) or t in (select id from st))
     select array(select id from st union select t from rows union select a from rows where kind = 'reply') ids`,
    { stamped },
  );
  return r.rows[0].ids;
}

/**
 * Stored edges of staged rows no longer active in the window go, under both models (full runs
 * never write them), recorded first (reputation-deltas.ts).
 */
export async function dropStaleEdges(trx: Knex.Transaction): Promise<number> {
  await trx.raw(
    recordEdgesSql(`select c.id, c.a, c.t, ${kindCode('c')}, e.value, e.weight, v.weight from sc_ch c
      join scoring_edges e on e.interaction_id = c.id left join scoring_edges_v2 v on v.interaction_id = c.id
      where not c.live`),
  );
  await trx.raw('delete from scoring_edges_v2 where interaction_id in (select id from sc_ch where not live)');
  const r = await trx.raw('delete from scoring_edges where interaction_id in (select id from sc_ch where not live)');
  return r.rowCount ?? 0;
}
