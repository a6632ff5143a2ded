import type { Facts } from './stage-sql';
import { UNIT, unitsToWeight } from './reputation-store';

/**
 * Inputs of reputation_v1 summed from the weights of a full run, per agent number of sc_ag:
 * weighted upvotes, downvotes, replies received and authored, followers; distinct other owners
 * with a weighted upvote, and in weighted conversations. (The same values as the stored sums of
 * reputation-store.ts, without reading a million weights back.)
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

/** 2^52: the low part of an exact sum (units of 2^-43) carries into the high part there. */
const CARRY = 2 ** 52;

/**
 * Exact per-agent sums of weights in units of 2^-43 (reputation-store.ts): a low part below 2^52
 * and a count of 2^52 carried, each add exact in doubles; `done` rounds each sum to a double once,
 * as the stored sums are read.
 */
class ExactSums {
  private lo: Float64Array;
  private hi: Float64Array;
  constructor(n: number) {
    this.lo = new Float64Array(n);
    this.hi = new Float64Array(n);
  }
  add(i: number, w: number): void {
    const x = this.lo[i] + w * UNIT;
    if (x >= CARRY) {
      this.lo[i] = x - CARRY;
      this.hi[i]++;
    } else this.lo[i] = x;
  }
  done(): Float64Array {
    const out = new Float64Array(this.lo.length);
    for (let i = 0; i < out.length; i++)
      out[i] =
        this.hi[i] === 0 ? this.lo[i] / UNIT : unitsToWeight(BigInt(this.hi[i]) * BigInt(CARRY) + BigInt(this.lo[i]));
    return out;
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
  const up = new ExactSums(agents);
  const down = new ExactSums(agents);
  const rr = new ExactSums(agents);
  const ra = new ExactSums(agents);
  const fol = new ExactSums(agents);
  const extOwners = new Int32Array(agents);
  const counterparts = new Int32Array(agents);
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
    if (kind === 0) {
      if (f.value[r] === 1) {
        up.add(t, w[r]);
        if (w[r] > 0 && f.aon[r] !== f.ton[r] && !notIndependent?.[r]) {
          extA[ne] = t;
          extO[ne++] = f.aon[r];
        }
      } else if (f.value[r] === -1) down.add(t, w[r]);
    } else if (kind === 1) {
      rr.add(t, w[r]);
      ra.add(f.an[r], w[r]);
      if (w[r] > 0 && f.aon[r] !== f.ton[r] && !notIndependent?.[r]) {
        convA[nc] = t;
        convO[nc++] = f.aon[r];
        convA[nc] = f.an[r];
        convO[nc++] = f.ton[r];
      }
    } else if (kind === 2) fol.add(t, w[r]);
  }
  countDistinctOwners(extA, extO, ne, extOwners);
  countDistinctOwners(convA, convO, nc, counterparts);
  return { up: up.done(), down: down.done(), rr: rr.done(), ra: ra.done(), fol: fol.done(), extOwners, counterparts };
}
