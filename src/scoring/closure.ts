import type { Knex } from 'knex';
import { windowStart } from './stage-sql';
import { writeScopedFacts } from './scoped-facts';
import { DAY_MS, REPUTATION, WEIGHTS } from './policy';

/**
 * The exact reach of a change (incremental runs) through the actors' stored facts, which decide
 * their weights toward every target:
 * - min(ext_owners, 3) (influence, NEW_AGENT_DISCOUNT, and BRIGADE_PATTERN's low-influence test):
 *   every window interaction of the actor, and the brigade groups of its votes;
 * - follow_ring: its window follows;
 * - out_votes / out_replies (RECIPROCAL_PATTERN shares): its candidate pairs of that kind, both
 *   ways (≥ reciprocalMinEach each way; a pair that crossed that bound has a changed row on one
 *   side, reached through that row).
 * So the facts of the agents of changed rows are refreshed, compared with the stored ones, and
 * only a difference in effect reaches further: to the targets of those interactions (agent mode,
 * widenedTargets) or to the interactions themselves (rows mode, src/scoring/rows.ts).
 */

const WINDOW = (i: string) => `${i}.active and ${i}.occurred_at > :ws and ${i}.occurred_at <= :now`;

/**
 * Refreshes the stored facts of `agents`; temporary table sc_fd holds those whose facts changed in
 * effect, with what changed (infl, ring, ov, orp). Returns its size. In the scoring lock.
 *
 * A fact follows the rows of one side of an agent: what it sent (out_votes, out_replies, and
 * follow_ring, which also reads the follows back it received) or what it received (ext_owners,
 * with the senders' owners and its own). So an actor of changed rows (sc_ch) gets its sent facts
 * again, a target its received ones, a target of a changed follow its sent ones too (a follow
 * back moves its ring); reactions move no fact. A claim or a verification touches every row of
 * the agent, which reaches the other sides through sc_ch. The agents of `whole` (stamped as
 * changed themselves, or asked for), those without stored facts and those of no changed row get
 * every fact again.
 */
export async function refreshFacts(
  trx: Knex.Transaction,
  now: Date,
  agents: string[],
  whole: string[] = [],
): Promise<number> {
  const ws = windowStart(now);
  await trx.raw('drop table if exists sc_fold, sc_fd');
  await trx.raw(
    'create temp table sc_fold on commit drop as select * from scoring_agent_facts where agent_id = any(:agents::uuid[])',
    { agents },
  );
  const scope = (
    await trx.raw(
      `with x as (
         select x.id, x.id in (select unnest(:whole::uuid[]))
             or x.id not in (select agent_id from sc_fold)
             or x.id not in (select a from sc_ch union select t from sc_ch) whole
         from unnest(:agents::uuid[]) x(id)
       )
       select array(select id from x where whole
                      or id in (select a from sc_ch where kind <> 'reaction')
                      or id in (select t from sc_ch where kind = 'follow')) sent,
              array(select id from x where whole or id in (select t from sc_ch where kind <> 'reaction')) received`,
      { agents, whole },
    )
  ).rows[0] as { sent: string[]; received: string[] };
  await writeScopedFacts(trx, ws, now, [...new Set([...scope.sent, ...scope.received])], scope);
  const full = WEIGHTS.influenceDiversityFullOwners;
  const r = await trx.raw(
    `create temp table sc_fd on commit drop as
     select * from (
       select n.agent_id id,
         o.agent_id is null or least(o.ext_owners, ${full}) <> least(n.ext_owners, ${full}) infl,
         o.follow_ring is distinct from n.follow_ring ring,
         o.out_votes is distinct from n.out_votes ov,
         o.out_replies is distinct from n.out_replies orp
       from scoring_agent_facts n left join sc_fold o on o.agent_id = n.agent_id
       where n.agent_id = any(:agents::uuid[])
     ) d where infl or ring or ov or orp`,
    { agents },
  );
  await trx.raw('analyze sc_fd');
  return r.rowCount ?? 0;
}

/**
 * The candidate reciprocal pairs (a, t, kind as interactions name it) of the agents of sc_fd whose
 * outgoing votes or replies changed: ≥ reciprocalMinEach window rows each way. Bindings ws, now.
 */
export const CHANGED_SHARE_PAIRS = `
  select p.a, p.t, p.kind from (
    select c.id a, i.target_agent_id t, i.kind
    from sc_fd c join interactions i on i.actor_agent_id = c.id and ${WINDOW('i')}
    where i.target_agent_id <> c.id and ((c.ov and i.kind = 'vote') or (c.orp and i.kind = 'reply'))
    group by 1, 2, 3 having count(*) >= ${WEIGHTS.reciprocalMinEach}
  ) p
  where (select count(*) from interactions i
         where i.actor_agent_id = p.t and i.target_agent_id = p.a and i.kind = p.kind and ${WINDOW('i')}) >= ${WEIGHTS.reciprocalMinEach}`;

/** Agent mode: the targets whose received weights the facts changed in sc_fd decide. */
export async function widenedTargets(trx: Knex.Transaction, now: Date): Promise<string[]> {
  const r = await trx.raw(
    `select array(
       select i.target_agent_id from sc_fd c join interactions i on i.actor_agent_id = c.id and ${WINDOW('i')}
       where c.infl or (c.ring and i.kind = 'follow')
       union
       select t from (${CHANGED_SHARE_PAIRS}) p
     ) ids`,
    { ws: windowStart(now), now },
  );
  return r.rows[0].ids;
}

/**
 * Agents whose stored reputation changes with the clock alone between the previous run (`prevNow`)
 * and this one: the integer total of agents under 90 days old (TRUST's min(1, ageDays/90)), upheld
 * strikes entering or leaving the window (MODERATION_STRIKE, goodStanding); an agent never scored
 * was stamped as changed when it was created (trigger agents_scoring_stamp). TRUST's 2-decimal
 * score and the whole-day age are not stored: readers compose them at the run's clock.
 * - Forward, from the index on the due time every reputation is written with (clock_due_at,
 *   clockDueMs): only the agents whose stored totals may have changed since they were written,
 *   about every 1.5 days per agent under 90 days old (1 point of 60 · ageDays/90), so a 30-minute
 *   run reads about 1/72 of them per model.
 * - Backward (a clock behind the previous run's), by the index range of agents_created_idx: the
 *   agents under 90 days old at the earlier clock, widened by a second so the SQL and the
 *   formula's millisecond clock never disagree at the boundary (older agents' totals do not move
 *   with the clock).
 */
export async function clockAgents(trx: Knex.Transaction, prevNow: Date, now: Date): Promise<string[]> {
  const [lo, hi] = prevNow < now ? [prevNow, now] : [now, prevNow];
  const back = now < prevNow;
  const r = await trx.raw(
    `select array(
       select agent_id from reputation_scores where not :back and clock_due_at <= :now
       union
       select a.id from agents a where :back and a.created_at > :young
       union
       select agent_id from moderation_actions
       where upheld and ((created_at > :wlo and created_at <= :whi) or (created_at > :lo and created_at <= :hi))
     ) ids`,
    {
      back,
      now,
      young: new Date(lo.getTime() - REPUTATION.trust.ageFullDays * DAY_MS - 1000),
      lo,
      hi,
      wlo: windowStart(lo),
      whi: windowStart(hi),
    },
  );
  return r.rows[0].ids;
}
