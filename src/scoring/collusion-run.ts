import type { Knex } from 'knex';
import { clusterWeight, findClusters } from './collusion';
import { COLLUSION } from './policy';
import { copyEdges } from './edge-copy';
import { AGENTS_FULL_SQL, windowStart, type Facts } from './stage-sql';
import { rebuildSupport, SUPPORT, updateClusters, windowRows } from './collusion-support';
import { copyOut } from './copy';
import { BUILD } from './build-tables';

/**
 * reputation_v2's graph rule in a weight run. Full mode finds the clusters over the whole
 * window's support graph (the staged facts and the v1 weights just computed, no extra read) and
 * rewrites scoring_edges_v2 (only the rows it discounts), scoring_clusters and the stored support
 * graph. Scoped mode (incremental runs, one agent) updates the support graph from the rows it
 * rescored and peels again only the components a change reaches (collusion-support.ts), so its
 * clusters and v2 rows are those a full recompute would find.
 */

/** Kinds that support their target: upvotes (value 1), replies, follows, reactions. */
function supports(kind: number, value: number): boolean {
  return kind === 1 || kind === 2 || kind === 3 || (kind === 0 && value === 1);
}

export interface ClusterRun {
  /** v2 weights of every staged row (v1's where not discounted) */
  weights: Float32Array;
  /** 1 for rows discounted by COLLUSION_CLUSTER */
  discounted: Uint8Array;
  clusters: number;
  members: number;
  /** rows discounted */
  edges: number;
  ms: number;
}

export async function clustersFull(
  trx: Knex.Transaction,
  f: Facts,
  n: number,
  stored: Float32Array,
  masks: Int32Array,
  agents: number,
  now: Date,
): Promise<ClusterRun> {
  const t0 = Date.now();
  let m = 0;
  for (let r = 0; r < n; r++) if (stored[r] > 0 && f.an[r] !== f.tn[r] && supports(f.kind[r], f.value[r])) m++;
  const src = new Int32Array(m);
  const dst = new Int32Array(m);
  const w = new Float32Array(m);
  m = 0;
  for (let r = 0; r < n; r++)
    if (stored[r] > 0 && f.an[r] !== f.tn[r] && supports(f.kind[r], f.value[r])) {
      src[m] = f.an[r];
      dst[m] = f.tn[r];
      w[m++] = stored[r];
    }
  const c = findClusters(agents, { m, src, dst, w });
  const weights = new Float32Array(stored);
  const discounted = new Uint8Array(n);
  const rows: number[] = [];
  if (c.clusters > 0) {
    for (let r = 0; r < n; r++) {
      const k = c.cluster[f.an[r]];
      if (k >= 0 && k === c.cluster[f.tn[r]] && stored[r] > 0 && supports(f.kind[r], f.value[r])) {
        weights[r] = clusterWeight(stored[r]);
        discounted[r] = 1;
        rows.push(r);
      }
    }
  }
  await trx.raw('truncate scoring_edges_v2, scoring_clusters');
  await copyEdges(
    trx,
    'scoring_edges_v2',
    Float64Array.from(rows, (r) => f.id[r]),
    Float32Array.from(rows, (r) => weights[r]),
    Int32Array.from(rows, (r) => masks[r]),
    now,
    { extra: COLLUSION.code },
  );
  await writeClusters(trx, 'scoring_clusters', c, agents, now);
  await trx.raw('analyze scoring_edges_v2');
  await rebuildSupport(trx, { rows: 'sc_r', edges: 'scoring_edges', ...SUPPORT }, now);
  return {
    weights,
    discounted,
    clusters: c.clusters,
    members: c.members,
    edges: rows.length,
    ms: Date.now() - t0,
  };
}

/** Cluster members (agents numbered as in sc_ag) written to `table`. */
async function writeClusters(
  trx: Knex.Transaction,
  table: string,
  c: ReturnType<typeof findClusters>,
  agents: number,
  now: Date,
): Promise<void> {
  if (c.members === 0) return;
  const ns: number[] = [];
  const ks: number[] = [];
  const shares: number[] = [];
  for (let a = 0; a < agents; a++)
    if (c.cluster[a] >= 0) {
      ns.push(a);
      ks.push(c.cluster[a]);
      shares.push(c.share[a]);
    }
  await trx.raw(
    `insert into ${table} (agent_id, cluster, share, computed_at)
     select ag.id, u.k, u.s, :now from unnest(:ns::int[], :ks::int[], :shares::float8[]) u(n, k, s) join sc_ag ag on ag.n = u.n`,
    { ns, ks, shares, now },
  );
}

/**
 * The v2 rows of `rows` (id, a, t, kind, value; kind 0: a vote) between members of one cluster of
 * `clusters`, from their v1 weights in `edges`, with the same arithmetic as clusterWeight (float8
 * product rounded to 1e-6) and the reasons copyEdges gives them.
 */
async function writeClusterEdges(
  trx: Knex.Transaction,
  t: { rows: string; edges: string; clusters: string; into: string },
  now: Date,
  bindings: Record<string, unknown> = {},
): Promise<number> {
  const r = await trx.raw(
    `insert into ${t.into} (interaction_id, weight, reasons, computed_at)
     select r.id, (round(se.weight::float8 * :factor * 1e6) / 1e6)::real,
       array_remove(se.reasons, 'NORMAL') || :code::text, :now
     from ${t.rows} r
     join ${t.clusters} ca on ca.agent_id = r.a
     join ${t.clusters} ct on ct.agent_id = r.t and ct.cluster = ca.cluster
     join ${t.edges} se on se.interaction_id = r.id
     where r.a <> r.t and se.weight > 0 and (r.kind <> 0 or r.value = 1)`,
    { factor: COLLUSION.factor, code: COLLUSION.code, now, ...bindings },
  );
  return r.rowCount ?? 0;
}

/**
 * Scoped and rows modes: the clusters are brought up to date first (updateClusters), then the rows
 * just rescored under v1 (agent mode: sc_r; rows mode: its core rows, the only ones written) and
 * every interaction between two agents whose cluster changed get their v2 rows again. Returns the
 * v2 rows written and the agents whose cluster changed (their v2 reputation follows).
 */
export async function clustersScoped(
  trx: Knex.Transaction,
  scope: string[] | 'rows',
  now: Date,
): Promise<{ edges: number; changed: string[]; peeled: number; steps: Record<string, number> }> {
  const { changed, peeled, steps } = await updateClusters(trx, scope, now);
  const t0 = Date.now();
  const scored = scope === 'rows' ? '(select * from sc_r where core)' : 'sc_r';
  const among = 'i.target_agent_id = any(:changed::uuid[]) and i.actor_agent_id = any(:changed::uuid[])';
  await trx.raw(
    `delete from scoring_edges_v2 where interaction_id in (select id from ${scored} r union all select i.id from interactions i where ${among})`,
    { changed },
  );
  // Their v1 edges are stamped too: a v2 row dropped leaves no stamp, and the live week sums
  // again the targets of the edges stamped since its last refresh.
  if (changed.length > 0)
    await trx.raw(
      `update scoring_edges set computed_at = :now where interaction_id in (select i.id from interactions i where ${among})`,
      { changed, now },
    );
  const edges = await writeClusterEdges(
    trx,
    {
      rows: `(select id, a, t, value, kind from ${scored} r union ${windowRows(among)})`,
      edges: 'scoring_edges',
      clusters: 'scoring_clusters',
      into: 'scoring_edges_v2',
    },
    now,
    { changed, ws: windowStart(now) },
  );
  steps.edges = Date.now() - t0;
  return { edges, changed, peeled, steps };
}

/**
 * A fleet run (fleet.ts), once every partition's v1 weights are built: the support graph of those
 * weights (its pairs inserted by the weights partitions, each pair by its target's), then the
 * clusters over it (agents numbered as a full run numbers them) and the interactions they
 * discount, into the run's built tables. The clusters are findClusters' over the support pairs
 * instead of the interactions: it sums each pair's rows, then reads the pairs in order (actor,
 * target), so given the same pair sums it does the same arithmetic as a full run; and the sums
 * are the same: a pair's float4 weights (1e-6 at least) sum exactly in float8, in any order, up to
 * a total of 2^10.
 */
export async function clustersOfBuild(
  trx: Knex.Transaction,
  now: Date,
): Promise<{ clusters: number; members: number; edges: number }> {
  await rebuildSupport(
    trx,
    {
      inserted: true,
      support: BUILD.support,
      candidates: BUILD.candidates,
      mutual: BUILD.mutual,
    },
    now,
  );
  await trx.raw('drop table if exists sc_ag');
  await trx.raw(AGENTS_FULL_SQL);
  const agents = (await trx.raw('select count(*)::int n from sc_ag')).rows[0].n;
  const { n, cols } = await copyOut(
    trx,
    `select ag.n, tg.n, s.weight from ${BUILD.support} s join sc_ag ag on ag.id = s.a join sc_ag tg on tg.id = s.t`,
    { src: 'int4', dst: 'int4', w: 'float8' },
  );
  const c = findClusters(agents, { m: n, src: cols.src, dst: cols.dst, w: cols.w });
  await writeClusters(trx, BUILD.clusters, c, agents, now);
  await trx.raw(`analyze ${BUILD.clusters}`);
  if (c.members === 0) return { clusters: 0, members: 0, edges: 0 };
  // Only interactions between members are discounted: those the few members received, by index.
  const edges = await writeClusterEdges(
    trx,
    {
      rows: `(select i.id, i.actor_agent_id a, i.target_agent_id t, (case when i.kind = 'vote' then 0 else 1 end) kind, i.value
              from ${BUILD.clusters} m join interactions i on i.target_agent_id = m.agent_id)`,
      edges: BUILD.edges,
      clusters: BUILD.clusters,
      into: BUILD.edgesV2,
    },
    now,
  );
  return { clusters: c.clusters, members: c.members, edges };
}
