import type { Knex } from 'knex';
import { clusterWeight, findClusters } from './collusion';
import { COLLUSION } from './policy';
import { copyEdges } from './edge-copy';
import type { Facts } from './stage-sql';

/**
 * reputation_v2's graph rule in a weight run. Full mode finds the clusters over the whole
 * window's support graph (the staged facts and the v1 weights just computed, no extra read) and
 * rewrites scoring_edges_v2 (only the rows it discounts) and scoring_clusters. Scoped mode
 * (incremental runs, one agent) applies the stored clusters to the rows it rescored: a vote inside
 * a known cluster is discounted at once; new clusters appear at the next full recompute.
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
    COLLUSION.code,
  );
  if (c.members > 0) {
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
      `insert into scoring_clusters (agent_id, cluster, share, computed_at)
       select ag.id, u.k, u.s, :now from unnest(:ns::int[], :ks::int[], :shares::float8[]) u(n, k, s) join sc_ag ag on ag.n = u.n`,
      { ns, ks, shares, now },
    );
  }
  await trx.raw('analyze scoring_edges_v2');
  return {
    weights,
    discounted,
    clusters: c.clusters,
    members: c.members,
    edges: rows.length,
    ms: Date.now() - t0,
  };
}

/**
 * Scoped mode: the rows of sc_r (just rescored under v1) get their v2 rows again from the stored
 * clusters, with the same arithmetic as clusterWeight (float8 product rounded to 1e-6).
 */
export async function clustersScoped(trx: Knex.Transaction, now: Date): Promise<number> {
  await trx.raw('delete from scoring_edges_v2 where interaction_id in (select id from sc_r)');
  const r = await trx.raw(
    `insert into scoring_edges_v2 (interaction_id, weight, reasons, computed_at)
     select r.id, (round(se.weight::float8 * :factor * 1e6) / 1e6)::real,
       array_remove(se.reasons, 'NORMAL') || :code::text, :now
     from sc_r r
     join scoring_clusters ca on ca.agent_id = r.a
     join scoring_clusters ct on ct.agent_id = r.t and ct.cluster = ca.cluster
     join scoring_edges se on se.interaction_id = r.id
     where r.a <> r.t and se.weight > 0 and (r.kind <> 0 or r.value = 1)`,
    { factor: COLLUSION.factor, code: COLLUSION.code, now },
  );
  return r.rowCount ?? 0;
}
