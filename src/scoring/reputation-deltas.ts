import type { Knex } from 'knex';
import { WINDOW } from './stage-sql';
import { microSql, ReputationSums } from './reputation-sums';
import { copyIn, copyInText, InColumn } from './copy';

/**
 * Reputation inputs kept by difference (scoring_reputation_inputs, sql/128). An incremental run
 * records, before it rewrites or drops an edge, the edge as it was (temporary table sc_was: the
 * row's agents, kind and value, its v1 weight and its reputation_v2 weight where one is stored;
 * no v1 weight: the row was not counted). Once the weights are written, each recorded row's old
 * and new contribution gives:
 * - the weighted sums by difference, in millionths (exact: sums of whole numbers);
 * - the distinct-owner counts by key: an (agent, other owner) pair counts while one qualifying row
 *   makes it (a weighted upvote from one of the owner's agents, or a weighted reply in either
 *   direction between the agent and one of the owner's agents; under v2 also not discounted by
 *   COLLUSION_CLUSTER). Only keys where some recorded row's qualification changed are counted
 *   again, by index, from the window's rows; the count before is the count now less what changed.
 * Owners are read as they are now: the agents of a row whose owner changed (the run's `fresh`
 * agents: stamped agents, their counterparts in the changed rows, changed clusters' members) are
 * summed again from their rows instead, and get no difference here.
 */

/** The recorded rows' table; created by an incremental run before its first write to the edges. */
export async function createEdgeHistory(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`drop table if exists sc_was, sc_fresh, sc_d, sc_keys, sc_kc, sc_dsum`);
  await trx.raw(
    'create temp table sc_was (id int8 primary key, a uuid, t uuid, k int2, value int2, w1 real, v2 real) on commit drop',
  );
}

/**
 * SQL recording rows before their edges change: `rows` yields (id, a, t, k, value, w1, v2) with
 * k the staging's kind number; a row recorded already keeps its first (oldest) record.
 */
export const recordEdgesSql = (rows: string) =>
  `insert into sc_was (id, a, t, k, value, w1, v2)
   select * from (${rows}) r (id, a, t, k, value, w1, v2) where r.k < 3 on conflict (id) do nothing`;

const m = microSql;
type Side = 'o' | 'n';
type Cond = (s: Side) => string;
const upvote: Cond = (s) => `(k = 0 and v${s} = 1)`;
const downvote: Cond = (s) => `(k = 0 and v${s} = -1)`;
const reply: Cond = () => '(k = 1)';
const follow: Cond = () => '(k = 2)';
/** Whether a row side (o: before, n: after) of rows `c` makes its key count, per model. */
const q1 = (c: Cond, s: Side) => `(${c(s)} and w1${s} is not null and w1${s} > 0)`;
const q2 = (c: Cond, s: Side) => `(${c(s)} and w1${s} is not null and v2${s} is null and w1${s} > 0)`;
/** A row's weight in the sum of rows `c` under v1 and v2, new less old, in millionths. */
const d1 = (c: Cond) =>
  `(case when ${c('n')} then coalesce(${m('w1n')}, 0) else 0 end - case when ${c('o')} then coalesce(${m('w1o')}, 0) else 0 end)`;
const d2 = (c: Cond) =>
  `(case when ${c('n')} then coalesce(${m('coalesce(v2n, w1n)')}, 0) else 0 end
    - case when ${c('o')} then coalesce(${m('coalesce(v2o, w1o)')}, 0) else 0 end)`;

const SUMS = ['up', 'down', 'rr', 'ra', 'fol'] as const;
const COUNTS = ['ext', 'conv'] as const;
/** The columns of scoring_reputation_inputs and sc_dsum after `agent_id` / `agent`. */
export const INPUT_COLUMNS = [...SUMS, ...COUNTS].flatMap((c) => [`${c}1`, `${c}2`]);

/**
 * Stages sc_dsum (agent, and the difference of each input column) from the rows recorded in
 * sc_was, for agents outside `fresh`. Returns the agents with a difference.
 */
export async function stageInputDeltas(trx: Knex.Transaction, ws: Date, now: Date, fresh: string[]): Promise<string[]> {
  await trx.raw('create temp table sc_fresh on commit drop as select distinct unnest(:fresh::uuid[]) id', { fresh });
  await trx.raw('analyze sc_fresh');
  // vo / vn: the vote's value the old and the new edge were computed for (an edge written before
  // values were kept has none: its agents are summed from their rows).
  await trx.raw(
    `create temp table sc_d on commit drop as
    select w.id, w.a, w.t, w.k, w.value vo, e.value vn,
      coalesce(aa.owner_id, aa.id) aown, coalesce(ta.owner_id, ta.id) town,
      w.w1 w1o, w.v2 v2o, e.weight w1n, v.weight v2n,
      ft.id is not null or unknown tf, fa.id is not null or unknown af
    from (select *, k = 0 and w1 is not null and value is null unknown from sc_was) w
    left join sc_fresh ft on ft.id = w.t left join sc_fresh fa on fa.id = w.a
    left join scoring_edges e on e.interaction_id = w.id
    left join scoring_edges_v2 v on v.interaction_id = w.id
    join agents aa on aa.id = w.a join agents ta on ta.id = w.t`,
  );
  await trx.raw('analyze sc_d');
  const sumOf = (col: (typeof SUMS)[number], c: Cond) => `${d1(c)} ${col}1, ${d2(c)} ${col}2`;
  const zero = (cols: readonly string[]) => cols.map((c) => `0::int8 ${c}1, 0::int8 ${c}2`).join(', ');
  // Keys whose count may change: (agent, other owner, 'ext' | 'conv'), with what the recorded rows
  // changed of their number of qualifying rows under each model (a key whose number did not
  // change under either model keeps its presence).
  const changed = (c: Cond) => `(${q1(c, 'o')} <> ${q1(c, 'n')} or ${q2(c, 'o')} <> ${q2(c, 'n')})`;
  const dq = (c: Cond) =>
    `sum(${q1(c, 'n')}::int - ${q1(c, 'o')}::int) dq1, sum(${q2(c, 'n')}::int - ${q2(c, 'o')}::int) dq2`;
  await trx.raw(`create temp table sc_keys on commit drop as
    select * from (
      select t agent, aown o, 'ext' kind, ${dq(upvote)} from sc_d
        where aown <> town and not tf and ${changed(upvote)} group by 1, 2
      union all
      select agent, o, 'conv', sum(dq1), sum(dq2) from (
        select t agent, aown o, ${dq(reply)} from sc_d where aown <> town and not tf and ${changed(reply)} group by 1, 2
        union all
        select a, town, ${dq(reply)} from sc_d where aown <> town and not af and ${changed(reply)} group by 1, 2
      ) c group by 1, 2
    ) k where dq1 <> 0 or dq2 <> 0`);
  await trx.raw('analyze sc_keys');
  // Each key's qualifying rows now, by index: the owner's agents, then their rows with the agent.
  const owned = `(x.owner_id = k.o or (x.owner_id is null and x.id = k.o))`;
  const qual = `count(*) filter (where e.weight > 0) n1, count(*) filter (where e.weight > 0 and v.interaction_id is null) n2`;
  await trx.raw(
    `create temp table sc_kc on commit drop as
     select k.agent, k.kind, k.dq1, k.dq2, c.n1, c.n2 from sc_keys k cross join lateral (
       select ${qual} from (
         select i.id from agents x join interactions i on i.actor_agent_id = x.id
           and i.target_agent_id = k.agent and i.kind = 'vote' and i.value = 1 and ${WINDOW}
         where k.kind = 'ext' and ${owned}
         union all
         select i.id from agents x join interactions i on i.actor_agent_id = x.id
           and i.target_agent_id = k.agent and i.kind = 'reply' and ${WINDOW}
         where k.kind = 'conv' and ${owned}
         union all
         select i.id from agents x join interactions i on i.target_agent_id = x.id
           and i.actor_agent_id = k.agent and i.kind = 'reply' and ${WINDOW}
         where k.kind = 'conv' and ${owned}
       ) r join scoring_edges e on e.interaction_id = r.id left join scoring_edges_v2 v on v.interaction_id = r.id
       offset 0
     ) c`,
    { ws, now },
  );
  // A key starts counting when it had no qualifying row before (now less what changed) and has one now.
  const step = (x: '1' | '2') =>
    `(case when n${x} > 0 and n${x} - dq${x} = 0 then 1 when n${x} = 0 and n${x} - dq${x} > 0 then -1 else 0 end)`;
  await trx.raw(`create temp table sc_dsum on commit drop as
    select agent, ${INPUT_COLUMNS.map((c) => `sum(${c})::int8 ${c}`).join(', ')} from (
      select t agent, ${sumOf('up', upvote)}, ${sumOf('down', downvote)}, ${sumOf('rr', reply)},
        0::int8 ra1, 0::int8 ra2, ${sumOf('fol', follow)}, ${zero(COUNTS)}
      from sc_d where not tf
      union all
      select a, ${zero(['up', 'down', 'rr'])}, ${sumOf('ra', reply)}, ${zero(['fol', ...COUNTS])}
      from sc_d where k = 1 and not af
      union all
      select agent, ${zero(SUMS)},
        case when kind = 'ext' then ${step('1')} else 0 end, case when kind = 'ext' then ${step('2')} else 0 end,
        case when kind = 'conv' then ${step('1')} else 0 end, case when kind = 'conv' then ${step('2')} else 0 end
      from sc_kc
    ) x group by agent`);
  await trx.raw('analyze sc_dsum');
  // The kept inputs of fresh agents, and of those a vote of unknown value reaches, missed this
  // run's differences: summed again from their rows (now, or when next needed).
  await trx.raw(
    `delete from scoring_reputation_inputs
     where agent_id in (select id from sc_fresh union select t from sc_d where tf union select a from sc_d where af and k = 1)`,
  );
  const agents = await trx.raw(
    `select array(select agent from sc_dsum where ${INPUT_COLUMNS.map((c) => `${c} <> 0`).join(' or ')}) ids`,
  );
  return agents.rows[0].ids;
}

/**
 * The inputs of `rows` (an agent's id and every input column) kept for the next incremental run;
 * a kept row they leave as it is is not written again.
 */
export async function keepInputs(
  trx: Knex.Transaction,
  rows: ({ id: string } & Record<string, unknown>)[],
): Promise<void> {
  await trx.raw('drop table if exists sc_keep');
  await trx.raw('create temp table sc_keep (like scoring_reputation_inputs) on commit drop');
  const cols = ['agent_id', ...INPUT_COLUMNS];
  await copyInText(
    trx,
    `sc_keep (${cols.join(', ')})`,
    rows.map((row) => [row.id, ...INPUT_COLUMNS.map((c) => String(row[c]))]),
  );
  const tuple = (t: string) => `(${INPUT_COLUMNS.map((c) => `${t}.${c}`).join(', ')})`;
  await trx.raw(`insert into scoring_reputation_inputs select * from sc_keep
    on conflict (agent_id) do update set ${INPUT_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}
    where ${tuple('scoring_reputation_inputs')} is distinct from ${tuple('excluded')}`);
}

/**
 * No input is kept: every weight was replaced, or v2's edges were left behind (each agent is
 * summed from its rows when next needed).
 */
export async function forgetInputs(trx: Knex.Transaction): Promise<void> {
  await trx.raw('truncate scoring_reputation_inputs');
}

/**
 * A full recompute's inputs of every agent (its sums, indexed by the agents' numbers in sc_ag),
 * kept for the incremental runs after it.
 */
export async function keepAllInputs(trx: Knex.Transaction, v1: ReputationSums, v2: ReputationSums): Promise<void> {
  await forgetInputs(trx);
  await trx.raw('drop table if exists sc_keepall');
  await trx.raw(
    `create temp table sc_keepall (n int4, ${INPUT_COLUMNS.map((c) => `${c} ${c.startsWith('ext') || c.startsWith('conv') ? 'int4' : 'int8'}`).join(', ')}) on commit drop`,
  );
  const of = (s: ReputationSums, c: string) =>
    ({ up: s.up, down: s.down, rr: s.rr, ra: s.ra, fol: s.fol, ext: s.extOwners, conv: s.counterparts })[c]!;
  const cols: InColumn[] = [{ type: 'int4', values: Int32Array.from({ length: v1.up.length }, (_, n) => n) }];
  for (const c of INPUT_COLUMNS) {
    const values = of(c.endsWith('1') ? v1 : v2, c.slice(0, -1));
    cols.push({ type: values instanceof Int32Array ? 'int4' : 'int8', values });
  }
  await copyIn(trx, `sc_keepall (n, ${INPUT_COLUMNS.join(', ')})`, v1.up.length, cols);
  await trx.raw(`insert into scoring_reputation_inputs (agent_id, ${INPUT_COLUMNS.join(', ')})
    select ag.id, ${INPUT_COLUMNS.map((c) => `k.${c}`).join(', ')} from sc_keepall k join sc_ag ag on ag.n = k.n`);
}
