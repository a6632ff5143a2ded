import type { Knex } from 'knex';
import { SCOPED_FACTS_SQL, windowStart } from './stage-sql';
import { DAY_MS, REPUTATION, WEIGHTS } from './policy';

/**
 * The exact reach of a change (incremental runs). A weight depends on rows of its own target
 * agent (pairs, owner duplicates, brigade groups), which a run rescores whole, and on its actor's
 * stored facts, which also decide the actor's weights toward every other target:
 * - min(ext_owners, 3) (influence, NEW_AGENT_DISCOUNT, and BRIGADE_PATTERN's low-influence test):
 *   every target of the actor's window interactions;
 * - follow_ring: the targets of its window follows;
 * - out_votes / out_replies (RECIPROCAL_PATTERN shares): the partners of its candidate pairs of
 *   that kind (≥ reciprocalMinEach each way; a pair that crossed that bound has a changed row on
 *   one side, whose agents are refreshed anyway).
 * So the facts of the agents of changed rows are refreshed, compared with the stored ones, and
 * only a difference in effect widens the rescored targets.
 */

const WINDOW = (i: string) => `${i}.active and ${i}.occurred_at > :ws and ${i}.occurred_at <= :now`;

/**
 * Refreshes the stored facts of `agents` and returns the other targets whose weights those facts
 * decide and that changed in effect. In the scoring lock; temporary table sc_fold.
 */
export async function refreshFactsAndWiden(trx: Knex.Transaction, now: Date, agents: string[]): Promise<string[]> {
  if (agents.length === 0) return [];
  const ws = windowStart(now);
  await trx.raw('drop table if exists sc_fold');
  await trx.raw(
    'create temp table sc_fold on commit drop as select * from scoring_agent_facts where agent_id = any(:agents::uuid[])',
    { agents },
  );
  await trx.raw(SCOPED_FACTS_SQL, { ws, now, ids: agents });
  const full = WEIGHTS.influenceDiversityFullOwners;
  const min = WEIGHTS.reciprocalMinEach;
  const r = await trx.raw(
    `with d as materialized (
       select n.agent_id id,
         o.agent_id is null or least(o.ext_owners, ${full}) <> least(n.ext_owners, ${full}) infl,
         o.follow_ring is distinct from n.follow_ring ring,
         o.out_votes is distinct from n.out_votes ov,
         o.out_replies is distinct from n.out_replies orp
       from scoring_agent_facts n left join sc_fold o on o.agent_id = n.agent_id
       where n.agent_id = any(:agents::uuid[])
     ),
     changed as (select * from d where infl or ring or ov or orp),
     pairs as (
       select c.id a, i.target_agent_id t, i.kind
       from changed c join interactions i on i.actor_agent_id = c.id and ${WINDOW('i')}
       where i.target_agent_id <> c.id and ((c.ov and i.kind = 'vote') or (c.orp and i.kind = 'reply'))
       group by 1, 2, 3 having count(*) >= ${min}
     )
     select array(
       select i.target_agent_id from changed c join interactions i on i.actor_agent_id = c.id and ${WINDOW('i')}
       where c.infl or (c.ring and i.kind = 'follow')
       union
       select p.t from pairs p
       where (select count(*) from interactions i
              where i.actor_agent_id = p.t and i.target_agent_id = p.a and i.kind = p.kind and ${WINDOW('i')}) >= ${min}
     ) ids`,
    { ws, now, agents },
  );
  return r.rows[0].ids;
}

/**
 * Agents whose reputation changes with the clock alone between the previous run (`prevNow`) and
 * this one: TRUST's min(1, ageDays/90) for agents under 90 days old, the whole-day age the
 * components report, upheld strikes entering or leaving the window (MODERATION_STRIKE,
 * goodStanding); an agent never scored was stamped as changed when it was created (trigger
 * agents_scoring_stamp). Ages are widened by a second on both sides so the SQL and the
 * formula's millisecond clock never disagree at a boundary. By index ranges of
 * agents_created_idx: the young agents, and per whole day of age k those created in
 * (lo − 1 s − k days, hi + 1 s − k days], whose age in days passed k + 1 between the two clocks
 * (the first day's range holds the agents created between the clocks).
 */
export async function clockAgents(trx: Knex.Transaction, prevNow: Date, now: Date): Promise<string[]> {
  const [lo, hi] = prevNow < now ? [prevNow, now] : [now, prevNow];
  const moved = lo.getTime() !== hi.getTime();
  const day = DAY_MS / 1000;
  const r = await trx.raw(
    `with span as (
       select floor((extract(epoch from :lo::timestamptz) - 1 - extract(epoch from max(created_at))) / ${day})::int k0,
         ceil((extract(epoch from :hi::timestamptz) + 1 - extract(epoch from min(created_at))) / ${day})::int k1
       from agents where :moved
     )
     select array(
       select a.id from agents a where :moved and a.created_at > :young
       union
       select a.id from span, generate_series(span.k0, span.k1) k
         join agents a on a.created_at > :lo::timestamptz - make_interval(secs => 1 + k * ${day}::float8)
           and a.created_at <= :hi::timestamptz + make_interval(secs => 1 - k * ${day}::float8)
       union
       select agent_id from moderation_actions
       where upheld and ((created_at > :wlo and created_at <= :whi) or (created_at > :lo and created_at <= :hi))
     ) ids`,
    {
      moved,
      young: new Date(lo.getTime() - REPUTATION.trust.ageFullDays * DAY_MS - 1000),
      lo,
      hi,
      wlo: windowStart(lo),
      whi: windowStart(hi),
    },
  );
  return r.rows[0].ids;
}
