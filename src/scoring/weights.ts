import { WEIGHTS, REASON_CODES, ReasonCode, reasonBit } from './policy';

/**
 * Anti-abuse weights (docs/scoring.md) as pure functions over facts that
 * SQL gathers (owners, statuses, pair ranks, ring and reciprocity tests). The same code runs
 * inline and inside the piscina pool.
 */

export const KIND = { vote: 0, reply: 1, follow: 2, reaction: 3 } as const;
export type KindName = keyof typeof KIND;
export const KIND_NAMES: KindName[] = ['vote', 'reply', 'follow', 'reaction'];

export const BIT = Object.fromEntries(REASON_CODES.map((c) => [c, reasonBit(c)])) as Record<ReasonCode, number>;

/** Facts that make an interaction count nothing. */
export const ZERO_BITS =
  BIT.SUSPENDED | BIT.DELETED_TARGET | BIT.SELF | BIT.SAME_OWNER | BIT.OWNER_DUPLICATE | BIT.LOW_SCORE_REPLY;

export function maskToCodes(mask: number): ReasonCode[] {
  if (!mask) return ['NORMAL'];
  return REASON_CODES.filter((c) => c !== 'NORMAL' && (mask & BIT[c]) !== 0);
}

export function codesToMask(codes: readonly ReasonCode[]): number {
  return codes.reduce((m, c) => m | BIT[c], 0);
}

/** NEW_AGENT_DISCOUNT: actor influence in [0.2, 1]. */
export function influence(verifiedOwner: boolean, ageDays: number, externalOwners: number): number {
  const age = Math.max(0, Math.min(1, ageDays / WEIGHTS.influenceAgeFullDays));
  const div = Math.max(0, Math.min(1, externalOwners / WEIGHTS.influenceDiversityFullOwners));
  return (
    WEIGHTS.influenceBase +
    WEIGHTS.influenceVerified * (verifiedOwner ? 1 : 0) +
    WEIGHTS.influenceAge * age +
    WEIGHTS.influenceDiversity * div
  );
}

/** PAIR_REPEAT: the k-th interaction of one actor toward one target (k counted from 1). */
export function pairRepeatFactor(k: number): number {
  return k > WEIGHTS.pairRepeatFree ? 1 / (k - (WEIGHTS.pairRepeatFree - 1)) : 1;
}

export interface EdgeFacts {
  kind: number;
  /** Bits of the fact-based codes that SQL established (zero codes, RECIPROCAL_PATTERN, FOLLOW_RING). */
  flags: number;
  /**
   * Rank in its (actor, target, kind) sequence for votes and replies; 0 otherwise. Batches may
   * send 1 for every rank within the free repeats (they count fully either way).
   */
  pairK: number;
  influence: number;
  brigade: boolean;
}

/** Weight = product of multipliers, clamped to [0,1]; the mask names every reduction applied. */
export function weighEdge(f: EdgeFacts): { weight: number; mask: number } {
  const zero = f.flags & ZERO_BITS;
  if (zero) return { weight: 0, mask: zero };
  let w = 1;
  let mask = 0;
  if ((f.kind === KIND.vote || f.kind === KIND.reply) && f.pairK > WEIGHTS.pairRepeatFree) {
    w *= pairRepeatFactor(f.pairK);
    mask |= BIT.PAIR_REPEAT;
  }
  if ((f.kind === KIND.vote || f.kind === KIND.reply) && f.flags & BIT.RECIPROCAL_PATTERN) {
    w *= WEIGHTS.reciprocalFactor;
    mask |= BIT.RECIPROCAL_PATTERN;
  }
  if (f.kind === KIND.follow && f.flags & BIT.FOLLOW_RING) {
    w *= WEIGHTS.followRingFactor;
    mask |= BIT.FOLLOW_RING;
  }
  if (f.influence < 1) {
    w *= f.influence;
    mask |= BIT.NEW_AGENT_DISCOUNT;
  }
  if (f.kind === KIND.vote && f.brigade) {
    w *= WEIGHTS.brigadeFactor;
    mask |= BIT.BRIGADE_PATTERN;
  }
  return { weight: Math.max(0, Math.min(1, w)), mask };
}

/**
 * BRIGADE_PATTERN over one target's same-direction votes sorted by time (seconds): every vote
 * inside a 10-minute span holding ≥ 5 votes of which more than half come from low-influence
 * actors is marked. Spans end at a vote's time and hold every vote of that time.
 */
export function detectBrigade(times: ArrayLike<number>, lowInfluence: ArrayLike<boolean | number>): boolean[] {
  const n = times.length;
  const marks = new Int32Array(n + 1);
  let i = 0;
  let low = 0;
  for (let j = 0; j < n; j++) {
    if (lowInfluence[j]) low++;
    while (times[j] - times[i] > WEIGHTS.brigadeWindowSeconds) {
      if (lowInfluence[i]) low--;
      i++;
    }
    // A span of time holds every vote at its end instant: votes with equal times are judged
    // together, so the marks do not depend on the order ties arrive in.
    if (j + 1 < n && times[j + 1] === times[j]) continue;
    const count = j - i + 1;
    if (count >= WEIGHTS.brigadeMinVotes && low * 2 > count) {
      marks[i]++;
      marks[j + 1]--;
    }
  }
  const out: boolean[] = new Array(n);
  let run = 0;
  for (let k = 0; k < n; k++) {
    run += marks[k];
    out[k] = run > 0;
  }
  return out;
}

/** Columnar input of one pool task; rows of one brigade group are contiguous. */
export interface EdgeBatch {
  kind: Uint8Array;
  flags: Int32Array;
  pairK: Int32Array;
  verified: Uint8Array;
  ageDays: Float32Array;
  extOwners: Int32Array;
  /** Brigade group (target object and vote direction); -1: not a vote. */
  group: Int32Array;
  /** Seconds since epoch. */
  t: Float64Array;
}

export interface EdgeResult {
  weights: Float32Array;
  masks: Int32Array;
}

/** Weights of a whole batch; pure, so it runs the same inline and in a worker thread. */
export function computeBatch(b: EdgeBatch): EdgeResult {
  const n = b.kind.length;
  const infl = new Float32Array(n);
  for (let r = 0; r < n; r++) infl[r] = influence(b.verified[r] === 1, b.ageDays[r], b.extOwners[r]);
  const brigade = new Uint8Array(n);
  let start = 0;
  while (start < n) {
    let end = start + 1;
    const g = b.group[start];
    while (end < n && b.group[end] === g) end++;
    if (g >= 0 && end - start >= WEIGHTS.brigadeMinVotes) {
      const idx: number[] = [];
      for (let r = start; r < end; r++) idx.push(r);
      idx.sort((x, y) => b.t[x] - b.t[y]);
      const marks = detectBrigade(
        idx.map((r) => b.t[r]),
        idx.map((r) => infl[r] < WEIGHTS.brigadeLowInfluence),
      );
      idx.forEach((r, k) => (brigade[r] = marks[k] ? 1 : 0));
    }
    start = end;
  }
  const weights = new Float32Array(n);
  const masks = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const res = weighEdge({
      kind: b.kind[r],
      flags: b.flags[r],
      pairK: b.pairK[r],
      influence: infl[r],
      brigade: brigade[r] === 1,
    });
    weights[r] = res.weight;
    masks[r] = res.mask;
  }
  return { weights, masks };
}
