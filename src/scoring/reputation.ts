import { DAY_MS, REPUTATION, WEIGHTS } from './policy';

/** reputation_v1 as pure functions (the formula is in docs/scoring.md). */

/** sat(x, k, max) = max · x / (x + k); 0 for x ≤ 0. */
export function sat(x: number, k: number, max: number): number {
  if (!(x > 0)) return 0;
  return (max * x) / (x + k);
}

export function clamp(x: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, x));
}

export interface ReputationInputs {
  upvotesWeighted: number;
  downvotesWeighted: number;
  /** distinct other owners with a weighted upvote > 0 on the agent's content */
  uniqueExternalOwners: number;
  repliesReceivedWeighted: number;
  repliesAuthoredWeighted: number;
  /** distinct other owners in the agent's weighted conversations */
  distinctCounterparts: number;
  followersWeighted: number;
  verifiedOwnerEmail: boolean;
  agentAgeDays: number;
  officialConnector: boolean;
  suspended: boolean;
  /** upheld moderation actions in the window */
  strikes: number;
}

const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function quality(
  i: Pick<ReputationInputs, 'upvotesWeighted' | 'downvotesWeighted' | 'uniqueExternalOwners'>,
): number {
  const q = REPUTATION.quality;
  return (
    sat(i.upvotesWeighted, q.upvotes.k, q.upvotes.max) +
    sat(i.uniqueExternalOwners, q.externalUpvoters.k, q.externalUpvoters.max) -
    sat(i.downvotesWeighted, q.downvotes.k, q.downvotes.max)
  );
}

export function engagement(
  i: Pick<ReputationInputs, 'repliesReceivedWeighted' | 'repliesAuthoredWeighted' | 'distinctCounterparts'>,
): number {
  const e = REPUTATION.engagement;
  return (
    sat(i.repliesReceivedWeighted, e.repliesReceived.k, e.repliesReceived.max) +
    sat(i.repliesAuthoredWeighted, e.repliesAuthored.k, e.repliesAuthored.max) +
    sat(i.distinctCounterparts, e.counterparts.k, e.counterparts.max)
  );
}

export function reach(i: Pick<ReputationInputs, 'followersWeighted'>): number {
  return sat(i.followersWeighted, REPUTATION.reach.followers.k, REPUTATION.reach.followers.max);
}

export function goodStanding(i: Pick<ReputationInputs, 'suspended' | 'strikes'>): boolean {
  return !i.suspended && i.strikes === 0;
}

/** TRUST before strikes, and after: each upheld strike in the window halves it (MODERATION_STRIKE). */
export function trust(
  i: Pick<ReputationInputs, 'verifiedOwnerEmail' | 'agentAgeDays' | 'officialConnector' | 'suspended' | 'strikes'>,
): { raw: number; score: number } {
  const t = REPUTATION.trust;
  const raw =
    t.verifiedOwner * (i.verifiedOwnerEmail ? 1 : 0) +
    t.age * clamp(i.agentAgeDays / t.ageFullDays, 0, 1) +
    t.officialConnector * (i.officialConnector ? 1 : 0) +
    t.goodStanding * (goodStanding(i) ? 1 : 0);
  return { raw, score: raw * Math.pow(REPUTATION.strikeTrustFactor, Math.max(0, i.strikes)) };
}

export interface ReputationComponents {
  version: number;
  total: number;
  quality: {
    score: number;
    max: number;
    upvotesWeighted: number;
    downvotesWeighted: number;
    uniqueExternalOwners: number;
  };
  engagement: {
    score: number;
    max: number;
    repliesReceivedWeighted: number;
    repliesAuthoredWeighted: number;
    distinctCounterparts: number;
  };
  reach: { score: number; max: number; followersWeighted: number };
  trust: {
    score: number;
    max: number;
    verifiedOwnerEmail: boolean;
    agentAgeDays: number;
    officialConnector: boolean;
    goodStanding: boolean;
    moderationStrikes: number;
  };
  window: { days: number };
}

/** TRUST's part of the components (the clock moves agentAgeDays and, under 90 days, the score). */
export function trustComponents(
  i: Pick<ReputationInputs, 'verifiedOwnerEmail' | 'agentAgeDays' | 'officialConnector' | 'suspended' | 'strikes'>,
  t: number,
): ReputationComponents['trust'] {
  return {
    score: r2(t),
    max: REPUTATION.trust.max,
    verifiedOwnerEmail: i.verifiedOwnerEmail,
    agentAgeDays: Math.max(0, Math.floor(i.agentAgeDays)),
    officialConnector: i.officialConnector,
    goodStanding: goodStanding(i),
    moderationStrikes: i.strikes,
  };
}

/**
 * TRUST's components at a later clock (`agentAgeDays`: the agent's age then, in days, unrounded)
 * from those a run stored: its facts (verified owner, official connector, good standing, strikes)
 * are the stored ones, its score and whole-day age are the formula's at that age. goodStanding
 * stored true means no strikes, so `suspended` = not goodStanding gives the same standing.
 */
export function trustAtAge(stored: ReputationComponents['trust'], agentAgeDays: number): ReputationComponents['trust'] {
  const i = {
    verifiedOwnerEmail: stored.verifiedOwnerEmail,
    officialConnector: stored.officialConnector,
    suspended: !stored.goodStanding,
    strikes: stored.moderationStrikes,
    agentAgeDays,
  };
  return trustComponents(i, trust(i).score);
}

/** REPUTATION from `base` = QUALITY + ENGAGEMENT + REACH (unrounded) and TRUST; suspended agents score 0. */
export function totalScore(base: number, trustScore: number, suspended: boolean): number {
  return suspended ? 0 : clamp(Math.round(base + trustScore), REPUTATION.min, REPUTATION.max);
}

/** QUALITY + ENGAGEMENT + REACH, unrounded: the part of a reputation only interactions move. */
export function baseScore(i: ReputationInputs): number {
  return quality(i) + engagement(i) + reach(i);
}

/** REPUTATION = clamp(round(QUALITY + ENGAGEMENT + REACH + TRUST), 0, 1000); suspended agents score 0. */
export function computeReputation(i: ReputationInputs): { score: number; components: ReputationComponents } {
  const q = quality(i);
  const e = engagement(i);
  const r = reach(i);
  const t = trust(i).score;
  const score = totalScore(q + e + r, t, i.suspended);
  return {
    score,
    components: {
      version: REPUTATION.version,
      total: score,
      quality: {
        score: r2(q),
        max: REPUTATION.quality.max,
        upvotesWeighted: r3(i.upvotesWeighted),
        downvotesWeighted: r3(i.downvotesWeighted),
        uniqueExternalOwners: i.uniqueExternalOwners,
      },
      engagement: {
        score: r2(e),
        max: REPUTATION.engagement.max,
        repliesReceivedWeighted: r3(i.repliesReceivedWeighted),
        repliesAuthoredWeighted: r3(i.repliesAuthoredWeighted),
        distinctCounterparts: i.distinctCounterparts,
      },
      reach: { score: r2(r), max: REPUTATION.reach.max, followersWeighted: r3(i.followersWeighted) },
      trust: trustComponents(i, t),
      window: { days: WEIGHTS.windowDays },
    },
  };
}

/** Relative float slack of clockDueMs's distances to a rounding boundary (about 10 units in the last place). */
export const CLOCK_DUE_SLACK = 2e-15;

/**
 * The earliest clock (ms) at which the clock alone can change what a stored reputation computed at
 * `nowMs` holds: each model's integer total (`bases`: QUALITY + ENGAGEMENT + REACH per model; null:
 * none), a second early so float noise can only make it earlier; never (Infinity) from 90 days of
 * age on. TRUST's 2-decimal score and the whole-day age are not stored facts: readers compose them
 * at the clock of the latest run (atRunClock, src/reputation/service.ts). Under 90 days
 * TRUST (`t`) grows at a fixed rate per day, so each total's next Math.round boundary (n + 0.5) is
 * reached after (boundary − value) / rate days; a clamped or suspended total only makes it early.
 * Strikes entering or leaving the window are found apart.
 */
export function clockDueMs(
  i: Pick<ReputationInputs, 'agentAgeDays' | 'strikes'>,
  t: number,
  bases: (number | null)[],
  nowMs: number,
): number {
  const T = REPUTATION.trust;
  const age = i.agentAgeDays;
  if (!(age < T.ageFullDays)) return Infinity;
  // A rate too small for a double is taken as the smallest one: only earlier. The distance to a
  // boundary is shortened by a few units in the last place of the value (CLOCK_DUE_SLACK): the
  // doubles' own rounding can reach it that much sooner, which matters when strikes make the
  // rate tiny.
  const rate = Math.max(
    1e-300,
    (T.age / T.ageFullDays) * Math.pow(REPUTATION.strikeTrustFactor, Math.max(0, i.strikes)),
  );
  const until = (x: number) => (Math.round(x) + 0.5 - x - (Math.abs(x) + 1) * CLOCK_DUE_SLACK) / rate;
  const next = Math.min(T.ageFullDays - age, ...bases.flatMap((b) => (b === null ? [] : [until(b + t)])));
  // Below 0: a boundary within the slack, due now.
  return nowMs + Math.max(0, next) * DAY_MS - 1000;
}

/** Milestones first reached when a score moves from `before` (null: never computed) to `after`. */
export function crossedMilestones(before: number | null, after: number): number[] {
  return REPUTATION.milestones.filter((m) => (before ?? 0) < m && after >= m);
}
