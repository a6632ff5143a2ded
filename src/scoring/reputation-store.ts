import type { Knex } from 'knex';
import { BUILD } from './build-tables';

/**
 * Each agent's reputation sums, stored (sql/122_reputation_sums.ts) and kept up to date from the
 * changes of incremental runs, so a run reads the sums of the agents it rescores instead of
 * summing their history. Full and fleet runs write them whole (`rebuildSums`); an incremental run
 * records the previous state of every edge it writes or deletes (`startSumCapture`, sc_old1 and
 * sc_old2) and moves the sums by the difference of each changed row's contribution
 * (`applySumChanges`).
 *
 * Weighted sums are exact integers of 2^-43: every stored weight (float4, 0 or at least 1e-6 and
 * at most 1, so its exponent is at least -20) is a multiple of 2^-43, so they add and subtract
 * exactly in any order and over any number of runs. A reader rounds the exact sum to a double once
 * (`unitsToWeight`), as full runs do (reputation-sums.ts): the same double a double-precision sum
 * of the weights gives whenever that sum is exact (totals under 2^10), and otherwise the correctly
 * rounded one instead of an order-dependent one.
 */

/** 2^43: a stored weight times UNIT is an integer (at most 2^43). */
export const UNIT = 2 ** 43;

/** SQL: a float4 weight in integer units of 2^-43 (exact). */
const units = (w: string) => `round(${w}::float8 * ${UNIT})::int8`;

/** An exact sum in units of 2^-43 (a bigint, or numeric's text) as the correctly rounded double. */
export function unitsToWeight(u: bigint | string): number {
  return Number(BigInt(u)) / UNIT;
}

/** The stored sums (live, or a fleet run's built ones) and the edges they are summed from. */
export const SUM_TABLES = {
  live: {
    sums: 'reputation_sums',
    tallies: 'reputation_owner_tallies',
    votes: 'reputation_vote_values',
    edges: 'scoring_edges',
    edgesV2: 'scoring_edges_v2',
  },
  build: {
    sums: BUILD.sums,
    tallies: BUILD.tallies,
    votes: BUILD.votes,
    edges: BUILD.edges,
    edgesV2: BUILD.edgesV2,
  },
} as const;

/** The summed columns of reputation_sums, per model suffix. */
export const SUM_COLUMNS = ['up', 'down', 'rr', 'ra', 'fol'] as const;
const COUNT_COLUMNS = ['ext', 'conv'] as const;
const ALL = [...SUM_COLUMNS, ...COUNT_COLUMNS].flatMap((c) => [`${c}1`, `${c}2`]);

const WINDOW = 'i.active and i.occurred_at > :ws and i.occurred_at <= :now';
const KIND = `(case i.kind when 'vote' then 0 when 'reply' then 1 else 2 end)::int2`;

/**
 * The (agent, kind, other owner) entries of the tallies that rows `c` (columns k, a, t, aown,
 * town, value, w1, w2, ind2) make: an upvote from another owner (kind 0) for its target, a reply
 * between two owners (kind 1) for both ends; q1, q2 whether it qualifies under each model
 * (weighted; v2: not discounted by COLLUSION_CLUSTER). `extra` names more columns of `c` to keep.
 */
function tallyRows(c: string, extra = ''): string {
  const q = `w1 > 0 q1, w2 > 0 and ind2 q2${extra}`;
  return `select t agent, 0::int2 kind, aown own, ${q} from ${c} where k = 0 and value = 1 and aown <> town
    union all select t, 1::int2, aown, ${q} from ${c} where k = 1 and aown <> town
    union all select a, 1::int2, town, ${q} from ${c} where k = 1 and aown <> town`;
}

/**
 * Writes the sums of `agents` (null: every agent, the tables rewritten) from the stored weights of
 * the 90-day window, as summing their history gives: a full run, a fleet partition (`build`), the
 * agents an owner change reaches. The counted values of their votes not 1 are recorded too.
 */
export async function rebuildSums(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  agents: string[] | null,
  opts: { build?: boolean; staged?: boolean } = {},
): Promise<void> {
  const t = opts.build ? SUM_TABLES.build : SUM_TABLES.live;
  const scoped = agents !== null;
  const inSet = (col: string) => (scoped ? `and ${col} = any(:agents::uuid[])` : '');
  await trx.raw('drop table if exists sc_se');
  // `staged`: a full run's staged window (sc_r, with the owners), instead of reading it again.
  await trx.raw(
    opts.staged
      ? `create temp table sc_se on commit drop as
         select r.id, r.kind k, r.a, r.t, r.aown, r.town, r.value,
           se.weight w1, coalesce(v2.weight, se.weight) w2, v2.interaction_id is null ind2
         from sc_r r join ${t.edges} se on se.interaction_id = r.id
         left join ${t.edgesV2} v2 on v2.interaction_id = r.id
         where r.kind <> 3`
      : `create temp table sc_se on commit drop as
     select i.id, ${KIND} k, i.actor_agent_id a, i.target_agent_id t,
       coalesce(aa.owner_id, aa.id) aown, coalesce(ta.owner_id, ta.id) town, i.value,
       se.weight w1, coalesce(v2.weight, se.weight) w2, v2.interaction_id is null ind2
     from ${
       scoped
         ? // Two index-friendly branches (received; replies authored to agents outside the set) instead of one OR.
           `(select * from interactions where target_agent_id = any(:agents::uuid[])
             union all
             select * from interactions where kind = 'reply' and actor_agent_id = any(:agents::uuid[])
               and not (target_agent_id = any(:agents::uuid[])))`
         : 'interactions'
     } i join ${t.edges} se on se.interaction_id = i.id
     left join ${t.edgesV2} v2 on v2.interaction_id = i.id
     join agents aa on aa.id = i.actor_agent_id join agents ta on ta.id = i.target_agent_id
     where i.kind <> 'reaction' and ${WINDOW}`,
    opts.staged ? {} : scoped ? { ws, now, agents } : { ws, now },
  );
  const b = scoped ? { agents } : {};
  if (scoped) await trx.raw(`delete from ${t.tallies} where agent_id = any(:agents::uuid[])`, b);
  else await trx.raw(`truncate ${t.tallies}, ${t.sums}, ${t.votes}`);
  await trx.raw(
    `insert into ${t.tallies} (agent_id, kind, own, n1, n2)
     select agent, kind, own, count(*) filter (where q1), count(*) filter (where q2)
     from (${tallyRows('sc_se')}) x where true ${inSet('agent')}
     group by 1, 2, 3 having bool_or(q1)`,
    b,
  );
  const u1 = units('w1');
  const u2 = units('w2');
  await trx.raw(
    `insert into ${t.sums} (agent_id, own, ${ALL.join(', ')})
     select a.id, coalesce(a.owner_id, a.id),
       ${ALL.map((c) => `coalesce(${c}, 0)`).join(', ')}
     from agents a
     left join (
       select t agent,
         sum(${u1}) filter (where k = 0 and value = 1) up1, sum(${u2}) filter (where k = 0 and value = 1) up2,
         sum(${u1}) filter (where k = 0 and value = -1) down1, sum(${u2}) filter (where k = 0 and value = -1) down2,
         sum(${u1}) filter (where k = 1) rr1, sum(${u2}) filter (where k = 1) rr2,
         sum(${u1}) filter (where k = 2) fol1, sum(${u2}) filter (where k = 2) fol2
       from sc_se where true ${inSet('t')} group by t
     ) r on r.agent = a.id
     left join (select a agent, sum(${u1}) ra1, sum(${u2}) ra2 from sc_se where k = 1 ${inSet('a')} group by a) au
       on au.agent = a.id
     left join (
       select agent_id agent, count(*) filter (where kind = 0) ext1, count(*) filter (where kind = 0 and n2 > 0) ext2,
         count(*) filter (where kind = 1) conv1, count(*) filter (where kind = 1 and n2 > 0) conv2
       from ${t.tallies} where true ${inSet('agent_id')} group by 1
     ) n on n.agent = a.id
     ${scoped ? 'where a.id = any(:agents::uuid[])' : ''}
     on conflict (agent_id) do update set own = excluded.own, ${ALL.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    b,
  );
  await trx.raw(
    `insert into ${t.votes} (interaction_id, value)
     select id, value from sc_se where k = 0 and value <> 1 ${inSet('t')}
     on conflict (interaction_id) do update set value = excluded.value`,
    b,
  );
}

/**
 * An incremental run's record of the edges it writes or deletes, as they were before its first
 * write of each (weight null: no edge): sc_old1 under v1, sc_old2 under v2 (scoring_edges_v2).
 */
export async function startSumCapture(trx: Knex.Transaction): Promise<void> {
  await trx.raw('drop table if exists sc_old1, sc_old2');
  await trx.raw('create temp table sc_old1 (id int8 primary key, w real) on commit drop');
  await trx.raw('create temp table sc_old2 (id int8 primary key, w real) on commit drop');
}

/**
 * Moves the stored sums by what this run changed, after its weights are written: each row whose
 * edge it wrote or deleted under either model (sc_old1, sc_old2), or a vote staged (sc_ch; a vote
 * flips in place), is taken out as it was counted (its previous weights, and the value recorded
 * for it) and put in as it counts now; a distinct-owner count moves where a tally crosses 0. The
 * agents whose owner changed since their sums were written (among `candidates`: owner changes
 * stamp the agent) counted their owner in the tallies of every agent they interacted with: those
 * agents are summed again from their history instead. Returns the agents whose sums it moved.
 */
export async function applySumChanges(
  trx: Knex.Transaction,
  ws: Date,
  now: Date,
  candidates: string[],
  staged: boolean,
): Promise<string[]> {
  const t = SUM_TABLES.live;
  await trx.raw('drop table if exists sc_ids, sc_sd, sc_sc, sc_td, sc_cd');
  await trx.raw(
    `create temp table sc_ids on commit drop as
     select id from sc_old1 union select id from sc_old2 union select id from sc_ch where kind = 'vote'`,
  );
  // The rows as staged (sc_ch; sc_r, the rows the weights stage scored, when \`staged\`), others
  // (reputation_v2's rows between agents whose cluster changed) by id.
  const rest = `select id from sc_ids except select id from sc_ch${staged ? ' except select id from sc_r' : ''}`;
  await trx.raw(
    `create temp table sc_sd on commit drop as
     select x.* from (
       select i.id, i.k, i.a, i.t,
         coalesce(aa.owner_id, aa.id) aown, coalesce(ta.owner_id, ta.id) town,
         coalesce(vv.value, 1) v0, i.value v1,
         case when o1.id is null then se.weight else o1.w end w1o,
         case when o2.id is null then v2.weight else o2.w end w2o,
         se.weight w1n, v2.weight w2n
       from (
         select c.id, (case c.kind when 'vote' then 0 when 'reply' then 1 when 'follow' then 2 else 3 end)::int2 k, c.a, c.t, c.value
         from sc_ch c join sc_ids using (id)
         ${staged ? 'union all select r.id, r.kind, r.a, r.t, r.value from sc_r r join sc_ids using (id) where r.id not in (select id from sc_ch)' : ''}
         union all
         select i.id, ${KIND}, i.actor_agent_id, i.target_agent_id, i.value from interactions i where i.id = any(array(${rest}))
       ) i
       join agents aa on aa.id = i.a join agents ta on ta.id = i.t
       left join sc_old1 o1 on o1.id = i.id
       left join sc_old2 o2 on o2.id = i.id
       left join ${t.edges} se on se.interaction_id = i.id
       left join ${t.edgesV2} v2 on v2.interaction_id = i.id
       left join ${t.votes} vv on vv.interaction_id = i.id
       where i.k <> 3
     ) x
     where (w1o, w2o, case when k = 0 and w1o is not null then v0 end)
       is distinct from (w1n, w2n, case when k = 0 and w1n is not null then v1 end)`,
  );
  const moved = await trx.raw(
    `select array(
       select s.agent_id from ${t.sums} s join agents a on a.id = s.agent_id
       where s.agent_id = any(:candidates::uuid[]) and s.own <> coalesce(a.owner_id, a.id)
     ) ids`,
    { candidates },
  );
  const owners: string[] = moved.rows[0].ids;
  let again: string[] = [];
  if (owners.length > 0) {
    const r = await trx.raw(
      `select array(
         select unnest(:owners::uuid[])
         union select i.target_agent_id from interactions i
           where i.actor_agent_id = any(:owners::uuid[]) and i.kind in ('vote', 'reply') and ${WINDOW}
         union select i.actor_agent_id from interactions i
           where i.target_agent_id = any(:owners::uuid[]) and i.kind = 'reply' and ${WINDOW}
         union select t from sc_sd where a = any(:owners::uuid[])
         union select a from sc_sd where t = any(:owners::uuid[])
       ) ids`,
      { owners, ws, now },
    );
    again = r.rows[0].ids;
  }
  // Each changed row out as it was counted (-1), in as it counts now (+1).
  await trx.raw(
    `create temp table sc_sc on commit drop as
     select -1 s, k, a, t, aown, town, v0 value, w1o w1, coalesce(w2o, w1o) w2, w2o is null ind2 from sc_sd where w1o is not null
     union all
     select 1, k, a, t, aown, town, v1, w1n, coalesce(w2n, w1n), w2n is null from sc_sd where w1n is not null`,
  );
  const b = { again };
  await trx.raw(
    `create temp table sc_td on commit drop as
     select agent, kind, own, sum(case when q1 then s else 0 end)::int d1, sum(case when q2 then s else 0 end)::int d2
     from (${tallyRows('sc_sc', ', s')}) x
     where not (agent = any(:again::uuid[]))
     group by 1, 2, 3
     having sum(case when q1 then s else 0 end) <> 0 or sum(case when q2 then s else 0 end) <> 0`,
    b,
  );
  // The counts move where a tally crosses 0 (its value before the change: now less the change).
  const cross = (n: string, d: string) => `(up.${n} > 0)::int - (up.${n} - d.${d} > 0)::int`;
  await trx.raw(
    `create temp table sc_cd on commit drop as
     with up as (
       insert into ${t.tallies} as x (agent_id, kind, own, n1, n2) select agent, kind, own, d1, d2 from sc_td
       on conflict (agent_id, kind, own) do update set n1 = x.n1 + excluded.n1, n2 = x.n2 + excluded.n2
       returning agent_id, kind, own, n1, n2)
     select up.agent_id agent,
       sum(${cross('n1', 'd1')}) filter (where up.kind = 0) ext1, sum(${cross('n2', 'd2')}) filter (where up.kind = 0) ext2,
       sum(${cross('n1', 'd1')}) filter (where up.kind = 1) conv1, sum(${cross('n2', 'd2')}) filter (where up.kind = 1) conv2
     from up join sc_td d on d.agent = up.agent_id and d.kind = up.kind and d.own = up.own
     group by 1`,
  );
  await trx.raw(
    `delete from ${t.tallies} x using sc_td d
     where x.agent_id = d.agent and x.kind = d.kind and x.own = d.own and x.n1 = 0 and x.n2 = 0`,
  );
  const u1 = units('w1');
  const u2 = units('w2');
  const zero = (cols: readonly string[]) => cols.map((c) => `0 ${c}`).join(', ');
  const sumCols = SUM_COLUMNS.flatMap((c) => [`${c}1`, `${c}2`]);
  const countCols = COUNT_COLUMNS.flatMap((c) => [`${c}1`, `${c}2`]);
  // The agents whose sums move (some changes cancel out).
  const r = await trx.raw(
    `with parts as (
       select t agent,
         case when k = 0 and value = 1 then s * ${u1} else 0 end up1, case when k = 0 and value = 1 then s * ${u2} else 0 end up2,
         case when k = 0 and value = -1 then s * ${u1} else 0 end down1, case when k = 0 and value = -1 then s * ${u2} else 0 end down2,
         case when k = 1 then s * ${u1} else 0 end rr1, case when k = 1 then s * ${u2} else 0 end rr2,
         0 ra1, 0 ra2,
         case when k = 2 then s * ${u1} else 0 end fol1, case when k = 2 then s * ${u2} else 0 end fol2,
         ${zero(countCols)}
       from sc_sc
       union all
       select a, 0, 0, 0, 0, 0, 0, s * ${u1}, s * ${u2}, 0, 0, ${zero(countCols)} from sc_sc where k = 1
       union all
       select agent, ${zero(sumCols)}, coalesce(ext1, 0), coalesce(ext2, 0), coalesce(conv1, 0), coalesce(conv2, 0) from sc_cd
     ),
     d as (
       select agent, ${ALL.map((c) => `sum(${c}) ${c}`).join(', ')} from parts
       where not (agent = any(:again::uuid[])) group by agent
       having ${ALL.map((c) => `sum(${c}) <> 0`).join(' or ')}
     ),
     ins as (
       insert into ${t.sums} as x (agent_id, own, ${ALL.join(', ')})
       select d.agent, coalesce(ag.owner_id, ag.id), ${ALL.map((c) => `d.${c}`).join(', ')}
       from d join agents ag on ag.id = d.agent
       on conflict (agent_id) do update set ${ALL.map((c) => `${c} = x.${c} + excluded.${c}`).join(', ')}
       returning agent_id)
     select array(select agent_id from ins) ids`,
    b,
  );
  // Every other agent of a changed row gets its row (zeros), with the owner its tallies counted.
  await trx.raw(
    `insert into ${t.sums} (agent_id, own)
     select ag.id, coalesce(ag.owner_id, ag.id) from agents ag
     where ag.id in (select a from sc_sd union select t from sc_sd)
     on conflict (agent_id) do nothing`,
  );
  // The values the changed votes count with now.
  await trx.raw(`delete from ${t.votes} where interaction_id in (select id from sc_sd where k = 0)`);
  await trx.raw(
    `insert into ${t.votes} (interaction_id, value) select id, v1 from sc_sd where k = 0 and w1n is not null and v1 <> 1`,
  );
  if (again.length > 0) await rebuildSums(trx, ws, now, again);
  return [...new Set([...r.rows[0].ids, ...again])];
}
