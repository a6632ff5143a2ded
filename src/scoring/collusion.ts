import { COLLUSION } from './policy';

/**
 * COLLUSION_CLUSTER (reputation_v2) as pure functions over the window's support graph: who
 * supported whom (upvotes, replies, follows, reactions with a v1 weight above 0, between agents
 * of different owners) and how much.
 *
 * A collusion cluster is a group of at least 3 agents, each supported by at least 2 others of the
 * group who it supports back, and each receiving at least half of its support from the members it
 * supports back. Found by peeling: start from every agent with a mutual supporter, remove any agent
 * that has fewer than 2 mutual supporters left or whose support from the mutual supporters left is
 * under half of everything it receives, and repeat until nobody is removed; the groups left
 * (connected through mutual support) of 3 or more are the clusters. Everything is linear in the
 * edges after one sort.
 */

export interface SupportEdges {
  /** number of edges */
  m: number;
  /** actor agent number */
  src: Int32Array;
  /** target agent number */
  dst: Int32Array;
  /** weight under v1 (> 0) */
  w: Float32Array | Float64Array;
}

export interface Clusters {
  /** per agent: its cluster number, or -1 */
  cluster: Int32Array;
  /** per agent: the share of its received support coming from its cluster (0 outside clusters) */
  share: Float64Array;
  clusters: number;
  members: number;
}

/** Stable counting sort of the positions `order` by key[position] in [0, agents). */
function countingSort(order: Int32Array, key: Int32Array, agents: number): Int32Array {
  const start = new Int32Array(agents + 1);
  for (let i = 0; i < order.length; i++) start[key[order[i]] + 1]++;
  for (let a = 0; a < agents; a++) start[a + 1] += start[a];
  const out = new Int32Array(order.length);
  for (let i = 0; i < order.length; i++) out[start[key[order[i]]]++] = order[i];
  return out;
}

/** Pairs (src, dst) with their summed weight, sorted by src then dst (two stable counting sorts). */
function aggregatePairs(agents: number, e: SupportEdges) {
  const ids = new Int32Array(e.m);
  for (let i = 0; i < e.m; i++) ids[i] = i;
  const order = countingSort(countingSort(ids, e.dst, agents), e.src, agents);
  const src = new Int32Array(e.m);
  const dst = new Int32Array(e.m);
  const w = new Float64Array(e.m);
  let n = 0;
  for (let k = 0; k < e.m; k++) {
    const i = order[k];
    if (n > 0 && src[n - 1] === e.src[i] && dst[n - 1] === e.dst[i]) w[n - 1] += e.w[i];
    else {
      src[n] = e.src[i];
      dst[n] = e.dst[i];
      w[n++] = e.w[i];
    }
  }
  const outStart = new Int32Array(agents + 1);
  for (let i = 0; i < n; i++) outStart[src[i] + 1]++;
  for (let a = 0; a < agents; a++) outStart[a + 1] += outStart[a];
  return { n, src: src.subarray(0, n), dst: dst.subarray(0, n), w: w.subarray(0, n), outStart };
}

/** Index of pair (a, b) in the sorted pairs, or -1. */
function findPair(p: ReturnType<typeof aggregatePairs>, a: number, b: number): number {
  let lo = p.outStart[a];
  let hi = p.outStart[a + 1] - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (p.dst[mid] === b) return mid;
    if (p.dst[mid] < b) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export interface ClusterRule {
  minClusterSize: number;
  minMutualSupporters: number;
  minSelfSupportShare: number;
}

/**
 * Mutual support links: for k < m, agents u[k] and v[k] support each other, toU[k] being what v
 * gives u and toV[k] what u gives v.
 */
export interface MutualLinks {
  m: number;
  u: Int32Array;
  v: Int32Array;
  toU: Float64Array;
  toV: Float64Array;
}

/** `rule`: the policy's (COLLUSION); bench/collusion-methods.ts compares variants. */
export function findClusters(agents: number, e: SupportEdges, rule: ClusterRule = COLLUSION): Clusters {
  const p = aggregatePairs(agents, e);
  const received = new Float64Array(agents);
  for (let i = 0; i < p.n; i++) received[p.dst[i]] += p.w[i];
  // Mutual pairs as an undirected adjacency: for a < b with both directions, b's support to a and a's to b.
  const mu: number[] = [];
  const mv: number[] = [];
  const wToU: number[] = [];
  const wToV: number[] = [];
  for (let i = 0; i < p.n; i++) {
    const a = p.src[i];
    const b = p.dst[i];
    if (a >= b) continue;
    const j = findPair(p, b, a);
    if (j < 0) continue;
    mu.push(a);
    mv.push(b);
    wToU.push(p.w[j]);
    wToV.push(p.w[i]);
  }
  const links = {
    m: mu.length,
    u: Int32Array.from(mu),
    v: Int32Array.from(mv),
    toU: Float64Array.from(wToU),
    toV: Float64Array.from(wToV),
  };
  return peelClusters(agents, received, links, rule);
}

/**
 * The peeling itself, from each agent's received support (from anyone) and the mutual links: the
 * clusters of any part of the graph closed under mutual links (a connected component, with the
 * support its members receive from anywhere) are the clusters the whole graph has there.
 */
export function peelClusters(
  agents: number,
  received: Float64Array,
  links: MutualLinks,
  rule: ClusterRule = COLLUSION,
): Clusters {
  const { m: mm, u: mu, v: mv, toU: wToU, toV: wToV } = links;
  const adjStart = new Int32Array(agents + 1);
  for (let k = 0; k < mm; k++) {
    adjStart[mu[k] + 1]++;
    adjStart[mv[k] + 1]++;
  }
  for (let a = 0; a < agents; a++) adjStart[a + 1] += adjStart[a];
  const adj = new Int32Array(2 * mm);
  /** weight the neighbour at adj[k] gives to the agent whose list holds it */
  const adjW = new Float64Array(2 * mm);
  /** position of the same pair in the neighbour's list */
  const twin = new Int32Array(2 * mm);
  const fill = adjStart.slice(0, agents);
  for (let k = 0; k < mm; k++) {
    const pu = fill[mu[k]]++;
    const pv = fill[mv[k]]++;
    adj[pu] = mv[k];
    adjW[pu] = wToU[k];
    adj[pv] = mu[k];
    adjW[pv] = wToV[k];
    twin[pu] = pv;
    twin[pv] = pu;
  }

  const alive = new Uint8Array(agents);
  const deg = new Int32Array(agents);
  const inside = new Float64Array(agents);
  const queue: number[] = [];
  const queued = new Uint8Array(agents);
  for (let a = 0; a < agents; a++) {
    if (adjStart[a + 1] === adjStart[a]) continue;
    alive[a] = 1;
    deg[a] = adjStart[a + 1] - adjStart[a];
    for (let k = adjStart[a]; k < adjStart[a + 1]; k++) inside[a] += adjW[k];
  }
  const weak = (a: number) =>
    deg[a] < rule.minMutualSupporters || inside[a] < rule.minSelfSupportShare * received[a] - 1e-9;
  for (let a = 0; a < agents; a++)
    if (alive[a] && weak(a)) {
      queue.push(a);
      queued[a] = 1;
    }
  // Peeling: removing an agent lowers its neighbours' counts, which may remove them in turn.
  while (queue.length > 0) {
    const a = queue.pop()!;
    alive[a] = 0;
    for (let k = adjStart[a]; k < adjStart[a + 1]; k++) {
      const b = adj[k];
      if (!alive[b]) continue;
      deg[b]--;
      // the weight a gave to b: stored in b's list at the entry for a
      inside[b] -= adjW[twin[k]];
      if (!queued[b] && weak(b)) {
        queued[b] = 1;
        queue.push(b);
      }
    }
  }

  // Groups connected through mutual support among the agents left.
  const cluster = new Int32Array(agents).fill(-1);
  const share = new Float64Array(agents);
  let clusters = 0;
  let members = 0;
  const stack: number[] = [];
  const group: number[] = [];
  for (let s = 0; s < agents; s++) {
    if (!alive[s] || cluster[s] !== -1) continue;
    group.length = 0;
    cluster[s] = clusters;
    stack.push(s);
    while (stack.length > 0) {
      const a = stack.pop()!;
      group.push(a);
      for (let k = adjStart[a]; k < adjStart[a + 1]; k++) {
        const b = adj[k];
        if (alive[b] && cluster[b] === -1) {
          cluster[b] = clusters;
          stack.push(b);
        }
      }
    }
    if (group.length < rule.minClusterSize) {
      for (const a of group) cluster[a] = -1;
      continue;
    }
    for (const a of group) share[a] = received[a] > 0 ? inside[a] / received[a] : 0;
    members += group.length;
    clusters++;
  }
  return { cluster, share, clusters, members };
}

/** v2 weight of an interaction inside one cluster (both ends members): the v1 weight times the factor, stored rounding. */
export function clusterWeight(v1: number): number {
  return Math.round(v1 * COLLUSION.factor * 1e6) / 1e6;
}
