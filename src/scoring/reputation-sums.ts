import type { Facts } from './stage-sql';

/**
 * Weights are stored to 1e-6 (storedWeights): each is a whole number of millionths, and the sums
 * of those whole numbers are exact in any order (double and int8 alike, far below 2^53). Every path
 * sums reputation inputs so, the full run here, SQL (reputation-run.ts) and the incremental runs'
 * differences (reputation-deltas.ts), and gives the same input: the sum divided by MICRO.
 */
export const MICRO = 1e6;

/** A stored weight in millionths (exact: a float4 holds a weight below 8 to well under a millionth). */
export const micro = (w: number): number => Math.round(w * MICRO);

/** SQL of `micro` over a real or float8 column or expression (null stays null). */
export const microSql = (w: string): string => `round((${w})::float8 * ${MICRO})::int8`;

/**
 * Inputs of reputation_v1 summed from the weights of a full run, per agent number of sc_ag:
 * weighted upvotes, downvotes, replies received and authored, followers (in millionths); distinct
 * other owners with a weighted upvote, and in weighted conversations. (The same sums as the SQL
 * of recomputeReputations, without reading a million weights back.)
 */
export interface ReputationSums {
  up: Float64Array;
  down: Float64Array;
  rr: Float64Array;
  ra: Float64Array;
  fol: Float64Array;
  extOwners: Int32Array;
  counterparts: Int32Array;
}

/**
 * For each agent, the number of distinct owners among its (agent, owner) pairs: pairs bucketed by
 * agent (counting sort), then deduplicated with one marker per owner. Linear in the pairs, with
 * arrays indexed by agent and owner number instead of a set of a million pair keys.
 */
function countDistinctOwners(pairAgent: Int32Array, pairOwner: Int32Array, m: number, out: Int32Array): void {
  const agents = out.length;
  const start = new Int32Array(agents + 1);
  let maxOwner = 0;
  for (let i = 0; i < m; i++) {
    start[pairAgent[i] + 1]++;
    if (pairOwner[i] > maxOwner) maxOwner = pairOwner[i];
  }
  for (let a = 0; a < agents; a++) start[a + 1] += start[a];
  const fill = start.slice(0, agents);
  const owners = new Int32Array(m);
  for (let i = 0; i < m; i++) owners[fill[pairAgent[i]]++] = pairOwner[i];
  const seen = new Int32Array(maxOwner + 1).fill(-1);
  for (let a = 0; a < agents; a++) {
    for (let j = start[a]; j < start[a + 1]; j++) {
      const o = owners[j];
      if (seen[o] !== a) {
        seen[o] = a;
        out[a]++;
      }
    }
  }
}

/**
 * `notIndependent` (reputation_v2): rows discounted by COLLUSION_CLUSTER keep their weight in the
 * sums but do not make their actor's owner a distinct supporter or counterpart.
 */
export function sumReputation(
  f: Facts,
  n: number,
  w: Float32Array,
  agents: number,
  notIndependent?: Uint8Array,
): ReputationSums {
  const s: ReputationSums = {
    up: new Float64Array(agents),
    down: new Float64Array(agents),
    rr: new Float64Array(agents),
    ra: new Float64Array(agents),
    fol: new Float64Array(agents),
    extOwners: new Int32Array(agents),
    counterparts: new Int32Array(agents),
  };
  // (agent, other owner) pairs: external upvoters of an agent; both sides of weighted conversations.
  const extA = new Int32Array(n);
  const extO = new Int32Array(n);
  let ne = 0;
  const convA = new Int32Array(2 * n);
  const convO = new Int32Array(2 * n);
  let nc = 0;
  for (let r = 0; r < n; r++) {
    const kind = f.kind[r];
    const t = f.tn[r];
    const m = micro(w[r]);
    if (kind === 0) {
      if (f.value[r] === 1) {
        s.up[t] += m;
        if (w[r] > 0 && f.aon[r] !== f.ton[r] && !notIndependent?.[r]) {
          extA[ne] = t;
          extO[ne++] = f.aon[r];
        }
      } else if (f.value[r] === -1) s.down[t] += m;
    } else if (kind === 1) {
      s.rr[t] += m;
      s.ra[f.an[r]] += m;
      if (w[r] > 0 && f.aon[r] !== f.ton[r] && !notIndependent?.[r]) {
        convA[nc] = t;
        convO[nc++] = f.aon[r];
        convA[nc] = f.an[r];
        convO[nc++] = f.ton[r];
      }
    } else if (kind === 2) s.fol[t] += m;
  }
  countDistinctOwners(extA, extO, ne, s.extOwners);
  countDistinctOwners(convA, convO, nc, s.counterparts);
  return s;
}
