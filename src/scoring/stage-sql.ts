import { BIT } from './weights';
import { DAY_MS, WEIGHTS } from './policy';
import { copyOut } from './copy';

/**
 * The SQL of a weight run: staging the scored interactions (temporary tables sc_*), deriving
 * the group facts set-based, and the facts row streamed to the pure weights (see engine.ts).
 */

export function windowStart(now: Date): Date {
  return new Date(now.getTime() - WEIGHTS.windowDays * DAY_MS);
}

/** An interaction `i` in the window (:ws, :now], active. */
export const WINDOW = 'i.active and i.occurred_at > :ws and i.occurred_at <= :now';

/**
 * The uuid array parameter `:name` as a subquery's array: a constant array of thousands of ids is
 * planned id by id (over a second at 20k), a subquery's is sized at a few rows.
 */
export const idsParam = (name: string) => `array(select unnest(:${name}::uuid[]))`;

/** SQL: the interaction kind of `alias` as staging numbers it (vote 0, reply 1, follow 2, reaction 3). */
export const kindCode = (alias: string) =>
  `(case ${alias}.kind when 'vote' then 0 when 'reply' then 1 when 'follow' then 2 else 3 end)`;

/**
 * Agents as staging sees them. Full mode numbers them (n, and own_n for their owner or
 * themselves) so the staged rows carry small integers the reputation sums index by.
 */
export const AGENTS_FULL_SQL = `
  create temp table sc_ag on commit drop as
  select (row_number() over ())::int4 - 1 n, a.id, coalesce(a.owner_id, a.id) own,
    (dense_rank() over (order by coalesce(a.owner_id, a.id)))::int4 own_n,
    a.owner_id, a.status = 'suspended' susp, a.created_at, (o.email_verified_at is not null) verified
  from agents a left join owners o on o.id = a.owner_id`;
export const AGENTS_SCOPED = `(select 0 n, a.id, coalesce(a.owner_id, a.id) own, 0 own_n, a.owner_id, a.status = 'suspended' susp,
    a.created_at, (o.email_verified_at is not null) verified from agents a left join owners o on o.id = a.owner_id)`;

/**
 * Rows mode: the agents of the staged rows (sc_s), joined as sets: at 4M interactions a 30-minute
 * cycle stages about 84k of the 412k agents, and one scan each of agents, owners and stored facts
 * (hashed) costs less than a key lookup in each per staged agent (about 900k buffer hits).
 * `unfacted`: the agent has no stored facts yet (recomputeWeights gives it some).
 */
export const AGENTS_STAGED_SQL = `
  create temp table sc_ag on commit drop as
  select 0 n, a.id, coalesce(a.owner_id, a.id) own, 0 own_n, a.owner_id, a.status = 'suspended' susp, a.created_at,
    o.email_verified_at is not null verified, f.agent_id is null unfacted
  from (select actor_agent_id id from sc_s union select target_agent_id from sc_s) x
  join agents a on a.id = x.id
  left join owners o on o.id = a.owner_id
  left join scoring_agent_facts f on f.agent_id = a.id`;

/**
 * sc_r: the scored rows with every fact one join can give (owners, statuses, deleted content,
 * reply score). The few deleted posts and comments (read from their partial indexes, sql/121) and
 * negative replies are tested as hashed subplans (small hash sets probed inside the row's
 * expressions) rather than as three more join levels that every staged row would pass through.
 * Full mode stages the window, agent mode what the agents :targets received, rows mode the rows of
 * sc_s (src/scoring/rows.ts) with its `core` mark.
 */
export type StageMode = 'full' | 'agents' | 'rows';

export function stageSql(mode: StageMode): string {
  const ag = mode === 'agents' ? AGENTS_SCOPED : 'sc_ag';
  return `
  create temp table sc_r on commit drop as
  select i.id,
    ${kindCode('i')}::int2 kind,
    i.actor_agent_id a, i.target_agent_id t, aa.own aown, ta.own town,
    aa.n an, ta.n tn, aa.own_n aon, ta.own_n ton,
    i.value, i.occurred_at ts,
    case when i.kind = 'follow' then i.target_agent_id else coalesce(i.comment_id, i.post_id) end obj,
    (case when i.kind in ('vote', 'reply') then 1 else 0 end)::int4 pk,
    ((case when aa.susp or ta.susp then ${BIT.SUSPENDED} else 0 end)
     | (case when i.kind <> 'follow' and (i.post_id in (select id from posts where deleted_at is not null)
                                         or i.comment_id in (select id from comments where deleted_at is not null)) then ${BIT.DELETED_TARGET} else 0 end)
     | (case when i.actor_agent_id = i.target_agent_id then ${BIT.SELF} else 0 end)
     | (case when i.actor_agent_id <> i.target_agent_id and aa.owner_id is not null and aa.owner_id = ta.owner_id then ${BIT.SAME_OWNER} else 0 end)
     | (case when i.kind = 'reply' and i.reply_comment_id in (select id from comments where score < 0) then ${BIT.LOW_SCORE_REPLY} else 0 end))::int4 flags,
    aa.verified,
    (extract(epoch from i.occurred_at - aa.created_at) / 86400)::float4 age${mode === 'rows' ? ', i.core' : ''}
  from ${mode === 'rows' ? 'sc_s' : 'interactions'} i
  join ${ag} aa on aa.id = i.actor_agent_id
  join ${ag} ta on ta.id = i.target_agent_id
  where ${WINDOW} ${mode === 'agents' ? 'and i.target_agent_id = any(:targets::uuid[])' : ''}`;
}

/** Full mode: every agent's facts from the staged window (hash aggregates, one self-join of follows). */
export const FULL_FACTS_SQL = `
  insert into scoring_agent_facts (agent_id, out_votes, out_replies, ext_owners, follow_ring, computed_at)
  select ag.id, coalesce(o.ov, 0), coalesce(o.orp, 0), coalesce(e.n, 0), coalesce(f.ring, false), :now
  from agents ag
  left join (
    select a, count(*) filter (where kind = 0) ov, count(*) filter (where kind = 1) orp
    from sc_r where a <> t and kind in (0, 1) group by a
  ) o on o.a = ag.id
  left join (
    select r.a, count(*) >= ${WEIGHTS.followRingMinFollows} and count(b.a) >= ${WEIGHTS.followRingMinShare} * count(*) ring
    from (select a, t from sc_r where kind = 2 and a <> t) r
    left join (select a, t from sc_r where kind = 2) b on b.a = r.t and b.t = r.a
    group by r.a
  ) f on f.a = ag.id
  left join (
    select t, count(*) n from (
      select distinct t, aown from sc_r where aown <> town and ((kind = 0 and value = 1) or kind in (1, 2))
    ) d group by t
  ) e on e.t = ag.id`;

/**
 * Pairs (actor, target, kind) of votes or replies with enough staged rows to matter: from the
 * reciprocity threshold (≥ 3 each way) or beyond the free repeats of PAIR_REPEAT. One hash
 * aggregate; every other pair is neither reciprocal nor repeated.
 */
export const PAIRS_SQL = `
  create temp table sc_pc on commit drop as
  select a, t, kind, count(*) c from sc_r where kind in (0, 1)
  group by 1, 2, 3 having count(*) >= ${Math.min(WEIGHTS.reciprocalMinEach, WEIGHTS.pairRepeatFree + 1)}`;

/**
 * RECIPROCAL_PATTERN: ≥ 3 each way and each direction ≥ 50 % of its actor's outgoing of that
 * kind. The reverse direction is counted for the candidate pairs only (from the staged pairs in
 * full mode, by index otherwise); matching rows get the bit.
 */
export function recipSql(scoped: boolean): string {
  const share = (side: string, c: string) =>
    `${c} >= ${WEIGHTS.reciprocalMinShare} * (case p.kind when 0 then ${side}.out_votes else ${side}.out_replies end)`;
  const rev = scoped
    ? `select p.a, p.t, p.kind, p.c, count(*) qc from pc p
       join interactions i on i.actor_agent_id = p.t and i.target_agent_id = p.a
         and i.kind = (case p.kind when 0 then 'vote' else 'reply' end) and ${WINDOW}
       group by 1, 2, 3, 4 having count(*) >= ${WEIGHTS.reciprocalMinEach}`
    : `select p.a, p.t, p.kind, p.c, q.c qc from pc p join pc q on q.a = p.t and q.t = p.a and q.kind = p.kind`;
  return `
  with pc as (select * from sc_pc where a <> t and c >= ${WEIGHTS.reciprocalMinEach}),
  rev as (${rev}),
  recip as (
    select p.a, p.t, p.kind from rev p
    join scoring_agent_facts fa on fa.agent_id = p.a
    join scoring_agent_facts ft on ft.agent_id = p.t
    where ${share('fa', 'p.c')} and ${share('ft', 'p.qc')}
  )
  insert into sc_recip select * from recip`;
}

export const RECIP_FLAG_SQL = `
  update sc_r r set flags = r.flags | ${BIT.RECIPROCAL_PATTERN}
  from sc_recip x where x.a = r.a and x.t = r.t and x.kind = r.kind`;

/** PAIR_REPEAT ranks (> 1), for the pairs past the free repeats only (ranks within them are all free: 1). */
export const PAIR_RANKS_SQL = `
  create temp table sc_pk on commit drop as
  select id, k from (
    select r.id, (row_number() over (partition by r.a, r.t, r.kind order by r.ts, r.id))::int4 k
    from sc_r r join sc_pc p on p.a = r.a and p.t = r.t and p.kind = r.kind
    where p.c > ${WEIGHTS.pairRepeatFree}
  ) x where k > 1`;

/** OWNER_DUPLICATE: all but the first interaction of one owner on one object; only groups of ≥ 2 are ranked. */
export const OWNER_DUP_SQL = `
  create temp table sc_dup on commit drop as
  select id from (
    select r.id, row_number() over (partition by r.obj, r.kind, r.aown order by r.ts, r.id) k
    from sc_r r join (select obj, kind, aown from sc_r group by 1, 2, 3 having count(*) > 1) d
      on d.obj = r.obj and d.kind = r.kind and d.aown = r.aown
  ) z where z.k > 1`;

/** Brigade groups: one id per voted post or comment (the direction is added in the facts). */
export const GROUPS_SQL = `
  create temp table sc_grp on commit drop as
  select obj, (row_number() over ())::int4 g from (select obj from sc_r where kind = 0 group by obj) x`;

/** The facts streamed to the pure weights: one row per staged interaction (rows mode: with its `core` mark last). */
export const factsSelect = (core: boolean) => `
  select r.id::int8, r.kind,
    (r.flags
     | (case when r.kind = 2 and fa.follow_ring then ${BIT.FOLLOW_RING} else 0 end)
     | (case when r.id in (select id from sc_dup) then ${BIT.OWNER_DUPLICATE} else 0 end))::int4,
    coalesce(pk.k, r.pk), r.verified, r.age, coalesce(fa.ext_owners, 0)::int4,
    (case when r.kind = 0 then 2 * g.g + (case when r.value > 0 then 1 else 0 end) else -1 end)::int4,
    extract(epoch from r.ts)::float8, r.value::int2, r.an, r.tn, r.aon, r.ton${core ? ', r.core' : ''}
  from sc_r r
  left join scoring_agent_facts fa on fa.agent_id = r.a
  left join sc_grp g on r.kind = 0 and g.obj = r.obj
  left join sc_pk pk on pk.id = r.id`;

export const FACT_COLUMNS = {
  id: 'int8',
  kind: 'int2',
  flags: 'int4',
  pk: 'int4',
  verified: 'bool',
  age: 'float4',
  ext: 'int4',
  grp: 'int4',
  t: 'float8',
  value: 'int2',
  an: 'int4',
  tn: 'int4',
  aon: 'int4',
  ton: 'int4',
} as const;

/** Rows mode: the fact columns and whether the row is a core one (its weight is written). */
export const CORE_FACT_COLUMNS = { ...FACT_COLUMNS, core: 'bool' } as const;

/** The fact columns as read by binary COPY, one typed array per column. */
export type Facts = Awaited<ReturnType<typeof copyOut<typeof FACT_COLUMNS>>>['cols'];
