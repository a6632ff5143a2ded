import type { Knex } from 'knex';
import { peelClusters } from './collusion';
import { COLLUSION } from './policy';
import { kindCode, windowStart, WINDOW } from './stage-sql';

type Db = Knex | Knex.Transaction;

/**
 * reputation_v2's clusters kept equal to what a full recompute finds, with work proportional to
 * what changed. The support graph is stored per agent pair (scoring_support). Peeling is global,
 * but its result splits over the connected components of the mutual links between candidates
 * (agents passing the cluster test with all their mutual supporters: no other agent survives the
 * peeling), and a changed pair a→t changes only the candidacy, links and received support of a
 * and t. So only the components reached from a and t, and from their mutual supporters before
 * the change (a component that lost a or t may split apart), are peeled again; every other
 * component, and its clusters, is as it was.
 */

/** Candidacy: the cluster test with every mutual supporter, a little looser than the peeling's own. */
const CANDIDATE_SLACK = 1e-6;

/** Window rows of interactions (id, a, t, kind as the staging numbers it, value) matching `where` (on `i`). */
export function windowRows(where: string): string {
  return `(select i.id, i.actor_agent_id a, i.target_agent_id t, i.value,
      ${kindCode('i')}::int2 kind
    from interactions i where ${WINDOW} and ${where})`;
}

/** The live tables of the support graph (a fleet run builds others, swapped in on publication). */
export const SUPPORT = {
  support: 'scoring_support',
  candidates: 'scoring_cluster_candidates',
  mutual: 'scoring_support_mutual',
} as const;

/** A support graph's tables: its pairs, its candidates and each agent's count of mutual supporters. */
export type SupportTables = { support: string; candidates: string; mutual?: string };

/**
 * Support pairs of `rows` (id, a, t, kind, value) with their stored v1 weights in `edges`: exactly
 * what collusion.ts reads.
 */
const pairsOf = (rows: string, edges = 'scoring_edges') => `
  select r.a, r.t, sum(se.weight::float8) weight
  from ${rows} r join ${edges} se on se.interaction_id = r.id
  where se.weight > 0 and r.a <> r.t and (r.kind <> 0 or r.value = 1)
  group by 1, 2`;

/** The cluster test with every mutual supporter, on an agent's received support and mutual links. */
const CANDIDATE_TEST = (received: string, mutual: string, inside: string) =>
  `${mutual} >= ${COLLUSION.minMutualSupporters} and ${inside} >= ${COLLUSION.minSelfSupportShare} * ${received} - ${CANDIDATE_SLACK}`;

/** Every candidate, from the pairs stored in `t.support` (full runs: one pass, hashed). */
const allCandidates = (t: SupportTables) => `
  insert into ${t.candidates} (agent_id, received)
  select s.t, sum(s.weight)
  from ${t.support} s left join ${t.support} r on r.t = s.a and r.a = s.t
  group by s.t
  having ${CANDIDATE_TEST('sum(s.weight)', 'count(r.a)', 'coalesce(sum(s.weight) filter (where r.a is not null), 0)')}`;

/**
 * The candidates among `:ends` (scoped runs), read by index, never the whole graph (joined as one
 * set, the ends' pairs and their reverses planned a hash of every pair of the window). An end
 * needs 2 mutual supporters: their count is kept per agent (scoring_support_mutual, an exact
 * integer), so only the few ends that have 2 are tested, with their received pairs' weights, each
 * probed for its reverse.
 */
const CANDIDATES_OF_ENDS = `
  insert into scoring_cluster_candidates (agent_id, received)
  select m.agent_id, x.received
  from scoring_support_mutual m, lateral (
    select sum(s.weight) received, count(r.w) mutual, coalesce(sum(s.weight) filter (where r.w is not null), 0) inside
    from scoring_support s
    left join lateral (select r.weight w from scoring_support r where r.t = s.a and r.a = s.t offset 0) r on true
    where s.t = m.agent_id
  ) x
  where m.agent_id = any(:ends::uuid[]) and m.n >= ${COLLUSION.minMutualSupporters}
    and ${CANDIDATE_TEST('x.received', 'x.mutual', 'x.inside')}`;

/**
 * The support pairs of staged rows `rows` (kind code k, a, t, value, w: their v1 weight), summed:
 * what pairsOf sums from the window.
 */
export const stagedPairs = (rows: string) => `
  select a, t, sum(w::float8) weight from ${rows}
  where w > 0 and a <> t and (k <> 0 or value = 1) group by 1, 2`;

/**
 * Full runs, fleet runs and the migration: the support graph again from `rows` (every window
 * row) and their v1 weights in `edges` (or, a fleet run, from the pairs its weights partitions
 * `inserted` into `support` and indexed), into `support` and `candidates`.
 */
export async function rebuildSupport(
  db: Db,
  t: SupportTables & ({ rows: string; edges: string } | { inserted: true }),
  now: Date,
): Promise<void> {
  if (!('inserted' in t)) {
    await db.raw(`truncate ${[t.support, t.candidates, ...(t.mutual ? [t.mutual] : [])].join(', ')}`);
    // Bulk load without the primary key, then build it once (row-by-row inserts into a uuid index are slow).
    await db.raw(`alter table ${t.support} drop constraint ${t.support}_pkey`);
    await db.raw(`insert into ${t.support} (a, t, weight) ${pairsOf(t.rows, t.edges)}`, {
      ws: windowStart(now),
      now,
    });
    await db.raw(`alter table ${t.support} add primary key (t, a)`);
  }
  await db.raw(`analyze ${t.support}`);
  await db.raw(allCandidates(t));
  await db.raw(`analyze ${t.candidates}`);
  // Each agent's mutual supporters, counted (incremental runs keep the count: CANDIDATES_OF_ENDS).
  if (t.mutual) {
    await db.raw(`insert into ${t.mutual} (agent_id, n)
      select s.t, count(*) from ${t.support} s join ${t.support} r on r.t = s.a and r.a = s.t group by s.t`);
    await db.raw(`analyze ${t.mutual}`);
  }
}

export interface ClusterUpdate {
  /** agents whose cluster (its members) changed: their v2 edges and reputations follow */
  changed: string[];
  /** agents of the components peeled again */
  peeled: number;
  /** time (ms) of each step and the sizes it worked on */
  steps: Record<string, number>;
}

/**
 * Scoped runs, after the v1 weights were written: the support pairs that may have changed again
 * (agent mode: every pair the targets receive, from sc_r, which holds all their window rows; rows
 * mode: the pairs of the changed rows, sc_ch, and of the rewritten edges, sc_up, summed from the
 * stored weights), then the clusters of the components a changed pair reaches, stored with their
 * v2 edges. Clusters whose members are unchanged keep their number.
 */
export async function updateClusters(
  trx: Knex.Transaction,
  scope: string[] | 'rows',
  now: Date,
): Promise<ClusterUpdate> {
  const steps: Record<string, number> = {};
  let tick = Date.now();
  const step = (name: string) => {
    const t = Date.now();
    steps[name] = t - tick;
    tick = t;
  };
  // The pairs, as stored and as now: only those that differ are written.
  await trx.raw('drop table if exists sc_sdiff, sc_sp');
  if (scope === 'rows') {
    await trx.raw(
      `create temp table sc_sp on commit drop as
       select a, t from sc_ch where a <> t
       union select r.a, r.t from sc_up u join sc_r r on r.id = u.id where r.a <> r.t`,
    );
    await trx.raw('analyze sc_sp');
    await trx.raw(
      `create temp table sc_sdiff on commit drop as
       select coalesce(o.a, n.a) a, coalesce(o.t, n.t) t, n.weight, o.a is not null had
       from (select s.* from sc_sp p join scoring_support s on s.a = p.a and s.t = p.t) o
       full join (${pairsOf(`(select r.* from sc_sp p cross join lateral ${windowRows('i.actor_agent_id = p.a and i.target_agent_id = p.t')} r)`)}) n
         on n.a = o.a and n.t = o.t
       where o.weight is distinct from n.weight`,
      { ws: windowStart(now), now },
    );
  } else {
    await trx.raw(
      `create temp table sc_sdiff on commit drop as
       select coalesce(o.a, n.a) a, coalesce(o.t, n.t) t, n.weight, o.a is not null had
       from (select s.* from unnest(:targets::uuid[]) x(t) join scoring_support s on s.t = x.t) o
       full join (${pairsOf('sc_r')}) n on n.a = o.a and n.t = o.t
       where o.weight is distinct from n.weight`,
      { targets: scope },
    );
  }
  // Statistics: the joins below on the changed pairs plan as hashes, not a scan per row.
  await trx.raw('analyze sc_sdiff');
  step('pairs');
  const ends: string[] = (await trx.raw('select array(select a from sc_sdiff union select t from sc_sdiff) ends'))
    .rows[0].ends;
  steps.ends = ends.length;
  if (ends.length === 0) return { changed: [], peeled: 0, steps };
  // Mutual supporters of the ends before the change: a component that held an end may have split,
  // each part holding one of them. Components are of candidates: only ends that were candidates
  // held one, and only their candidate supporters were in it (an agent whose candidacy changes is
  // an end itself). So this reads the few candidate ends' pairs, by index.
  const before: string[] = (
    await trx.raw(
      `select array(select s.a from scoring_cluster_candidates c
         join scoring_support s on s.t = c.agent_id
         join scoring_cluster_candidates m on m.agent_id = s.a
         where c.agent_id = any(:ends::uuid[])
           and exists (select 1 from scoring_support r where r.t = s.a and r.a = s.t)) ids`,
      { ends },
    )
  ).rows[0].ids;
  step('before');
  await trx.raw('delete from scoring_support s using sc_sdiff d where s.a = d.a and s.t = d.t and d.weight is null');
  await trx.raw(
    `insert into scoring_support (a, t, weight) select a, t, weight from sc_sdiff where weight is not null
     on conflict (a, t) do update set weight = excluded.weight`,
  );
  // Mutual links that appeared count one more mutual supporter at each end; those gone, one less.
  // Only a pair that appeared or went away can make or break one: per unordered pair of those,
  // each direction now (stored) and before (as sc_sdiff had it, or as now if it did not change).
  // Each direction is probed by primary key (lateral, limit 1): as exists(), the planner hashed the
  // whole table for many pairs.
  await trx.raw(
    `with p as (
       select least(a, t) x, greatest(a, t) y, bool_or(had) filter (where a < t) fh, bool_or(had) filter (where a > t) gh
       from sc_sdiff group by 1, 2 having bool_or(had <> (weight is not null))
     ),
     s as (
       select p.x, p.y, p.fh, p.gh, xy.e is not null xy, yx.e is not null yx
       from p
       left join lateral (select 1 e from scoring_support s where s.t = p.y and s.a = p.x limit 1) xy on true
       left join lateral (select 1 e from scoring_support s where s.t = p.x and s.a = p.y limit 1) yx on true
     ),
     d as (
       select x, y, case when xy and yx then 1 else -1 end dn from s
       where (xy and yx) <> (coalesce(fh, xy) and coalesce(gh, yx))
     )
     insert into scoring_support_mutual as m (agent_id, n)
     select agent, sum(dn) from (select x agent, dn from d union all select y, dn from d) z group by agent
     on conflict (agent_id) do update set n = m.n + excluded.n`,
  );
  await trx.raw(
    'delete from scoring_support_mutual m using unnest(:ends::uuid[]) e(id) where m.agent_id = e.id and m.n = 0',
    { ends },
  );
  step('support');
  await trx.raw('delete from scoring_cluster_candidates where agent_id = any(:ends::uuid[])', { ends });
  await trx.raw(CANDIDATES_OF_ENDS, { ends });
  step('candidates');
  const seeds = [...new Set([...ends, ...before])];
  const comp = await componentsOf(trx, seeds);
  step('components');
  const fresh = await peelComponents(trx, comp);
  step('peel');
  const region = [...new Set([...seeds, ...comp])];
  const changed = await storeClusters(trx, region, fresh, now);
  step('store');
  steps.seeds = seeds.length;
  steps.region = region.length;
  return { changed, peeled: comp.length, steps };
}

/**
 * The components of `seeds` over mutual links between candidates, breadth first, one indexed
 * query per level (a recursive query would plan each level as a scan of the whole table).
 */
async function componentsOf(trx: Knex.Transaction, seeds: string[]): Promise<string[]> {
  let frontier: string[] = (
    await trx.raw(
      'select array(select agent_id from scoring_cluster_candidates where agent_id = any(:seeds::uuid[])) ids',
      {
        seeds,
      },
    )
  ).rows[0].ids;
  const seen = new Set(frontier);
  while (frontier.length > 0) {
    const next: string[] = (
      await trx.raw(
        `select array(select distinct s.a from unnest(:frontier::uuid[]) f(id)
           join scoring_support s on s.t = f.id
           join scoring_support r on r.t = s.a and r.a = s.t
           join scoring_cluster_candidates c on c.agent_id = s.a) ids`,
        { frontier },
      )
    ).rows[0].ids;
    frontier = next.filter((id) => !seen.has(id));
    for (const id of frontier) seen.add(id);
  }
  return [...seen];
}

/** Clusters of `comp` (whole components): member → [cluster index, share]. */
async function peelComponents(trx: Knex.Transaction, comp: string[]): Promise<Map<string, [number, number]>> {
  const out = new Map<string, [number, number]>();
  if (comp.length === 0) return out;
  const index = new Map(comp.map((id, k) => [id, k]));
  const received = new Float64Array(comp.length);
  const rows = await trx.raw(
    'select c.agent_id, c.received from unnest(:comp::uuid[]) x(id) join scoring_cluster_candidates c on c.agent_id = x.id',
    { comp },
  );
  for (const r of rows.rows) received[index.get(r.agent_id)!] = r.received;
  const links = await trx.raw(
    `select s.a, s.t, s.weight w, r.weight rw from scoring_support s
     join scoring_support r on r.a = s.t and r.t = s.a
     where s.a < s.t and s.t in (select unnest(:comp::uuid[])) and s.a in (select unnest(:comp::uuid[]))`,
    { comp },
  );
  const m = links.rows.length;
  const u = new Int32Array(m);
  const v = new Int32Array(m);
  const toU = new Float64Array(m);
  const toV = new Float64Array(m);
  links.rows.forEach((l: { a: string; t: string; w: number; rw: number }, k: number) => {
    u[k] = index.get(l.a)!;
    v[k] = index.get(l.t)!;
    toU[k] = l.rw;
    toV[k] = l.w;
  });
  const c = peelClusters(comp.length, received, { m, u, v, toU, toV });
  comp.forEach((id, k) => {
    if (c.cluster[k] >= 0) out.set(id, [c.cluster[k], c.share[k]]);
  });
  return out;
}

/**
 * Replaces the stored clusters of `region` (whole clusters: a cluster lies inside one component)
 * with `fresh`. A fresh cluster with the same members as a stored one keeps its number; the
 * others get new numbers. Returns the members of every cluster that appeared or went away.
 */
async function storeClusters(
  trx: Knex.Transaction,
  region: string[],
  fresh: Map<string, [number, number]>,
  now: Date,
): Promise<string[]> {
  const old = await trx.raw(
    'select k.agent_id, k.cluster from unnest(:region::uuid[]) x(id) join scoring_clusters k on k.agent_id = x.id',
    {
      region,
    },
  );
  const groups = (entries: [string, number][]) => {
    const g = new Map<number, string[]>();
    for (const [id, k] of entries) {
      const members = g.get(k);
      if (members) members.push(id);
      else g.set(k, [id]);
    }
    return new Map([...g].map(([k, ids]) => [ids.sort().join(','), { k, ids }]));
  };
  const before = groups(old.rows.map((r: { agent_id: string; cluster: number }) => [r.agent_id, r.cluster]));
  const after = groups([...fresh].map(([id, [k]]) => [id, k]));
  let next: number = (await trx.raw('select coalesce(max(cluster), -1) + 1 n from scoring_clusters')).rows[0].n;
  const changed: string[] = [];
  const ids: string[] = [];
  const ks: number[] = [];
  const shares: number[] = [];
  for (const [key, { ids: members }] of after) {
    const kept = before.get(key);
    const k = kept ? kept.k : next++;
    if (!kept) changed.push(...members);
    for (const id of members) {
      ids.push(id);
      ks.push(k);
      shares.push(fresh.get(id)![1]);
    }
  }
  for (const [key, { ids: members }] of before) if (!after.has(key)) changed.push(...members);
  await trx.raw('delete from scoring_clusters where agent_id in (select unnest(:region::uuid[]))', { region });
  if (ids.length > 0)
    await trx.raw(
      `insert into scoring_clusters (agent_id, cluster, share, computed_at)
       select * , :now from unnest(:ids::uuid[], :ks::int[], :shares::float8[])`,
      { ids, ks, shares, now },
    );
  return [...new Set(changed)];
}
