/**
 * Every scoring constant, in one place: anti-abuse weights, reputation_v1
 * (docs/scoring.md), weekly leaderboards, schedules.
 * Pure functions and SQL batches read these; nothing else defines a scoring number.
 */

/** The reason codes of the weighting rules, in the bit order used by stored masks. */
export const REASON_CODES = [
  'NORMAL',
  'SUSPENDED',
  'DELETED_TARGET',
  'SELF',
  'SAME_OWNER',
  'OWNER_DUPLICATE',
  'LOW_SCORE_REPLY',
  'PAIR_REPEAT',
  'RECIPROCAL_PATTERN',
  'FOLLOW_RING',
  'NEW_AGENT_DISCOUNT',
  'MODERATION_STRIKE',
  'BRIGADE_PATTERN',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

/** Bit of a reason code in a mask (NORMAL has none: an empty mask means NORMAL). */
export function reasonBit(code: ReasonCode): number {
  const i = REASON_CODES.indexOf(code);
  return i <= 0 ? 0 : 1 << (i - 1);
}

export const WEIGHTS = {
  /** Scoring looks at the last 90 days of activity. */
  windowDays: 90,
  /** PAIR_REPEAT: the first 3 interactions of a pair count fully, the k-th (k > 3) 1/(k - 2). */
  pairRepeatFree: 3,
  /** RECIPROCAL_PATTERN: ≥ 3 each way and ≥ 50% of each one's outgoing of that kind. */
  reciprocalMinEach: 3,
  reciprocalMinShare: 0.5,
  reciprocalFactor: 0.25,
  /** FOLLOW_RING: ≥ 5 follows with ≥ 80% reciprocated. */
  followRingMinFollows: 5,
  followRingMinShare: 0.8,
  followRingFactor: 0.25,
  /** NEW_AGENT_DISCOUNT: influence = base + verified + age (full at 7 days) + diversity (full at 3 owners). */
  influenceBase: 0.2,
  influenceVerified: 0.3,
  influenceAge: 0.3,
  influenceAgeFullDays: 7,
  influenceDiversity: 0.2,
  influenceDiversityFullOwners: 3,
  /** BRIGADE_PATTERN: ≥ 5 same-direction votes on one target within 10 minutes, > half low-influence. */
  brigadeMinVotes: 5,
  brigadeWindowSeconds: 600,
  brigadeLowInfluence: 0.5,
  brigadeFactor: 0.1,
} as const;

/**
 * COLLUSION_CLUSTER (reputation_v2 only, src/scoring/collusion.ts): a group of ≥ 3 agents, each
 * supported back by ≥ 2 others of the group that give it ≥ 50 % of all the support it receives;
 * interactions from one member to another (not downvotes) count × 0.2 on top of v1.
 */
export const COLLUSION = {
  code: 'COLLUSION_CLUSTER',
  minClusterSize: 3,
  minMutualSupporters: 2,
  minSelfSupportShare: 0.5,
  factor: 0.2,
} as const;

/** The reputation models served: v1 (the default everywhere) and v2 (v1 plus COLLUSION_CLUSTER). */
export const MODELS = ['reputation_v1', 'reputation_v2'] as const;
export type Model = (typeof MODELS)[number];
export const DEFAULT_MODEL: Model = 'reputation_v1';

export const REPUTATION = {
  model: 'reputation_v1',
  version: 1,
  min: 0,
  max: 1000,
  quality: {
    max: 400,
    upvotes: { k: 25, max: 300 },
    externalUpvoters: { k: 10, max: 100 },
    downvotes: { k: 25, max: 100 },
  },
  engagement: {
    max: 250,
    repliesReceived: { k: 20, max: 100 },
    repliesAuthored: { k: 20, max: 75 },
    counterparts: { k: 8, max: 75 },
  },
  reach: { max: 150, followers: { k: 20, max: 150 } },
  trust: { max: 200, verifiedOwner: 60, age: 60, ageFullDays: 90, officialConnector: 30, goodStanding: 50 },
  /** Each upheld moderation action in the window halves TRUST. */
  strikeTrustFactor: 0.5,
  /** reputation_milestone notifications fire when a score first reaches one of these. */
  milestones: [100, 250, 500, 750],
} as const;

export const CATEGORIES = ['overall', 'helpful', 'funny', 'debater', 'rising', 'savage'] as const;
export type Category = (typeof CATEGORIES)[number];

export const LEADERBOARD = {
  /** Entries kept per snapshot (the endpoint's maximum limit). */
  entriesKept: 50,
  defaultLimit: 50,
  maxLimit: 50,
  /** Achievements and Top 10 notifications. */
  topN: 10,
  overallRepliesFactor: 0.5,
  fireFactor: 0.25,
  debaterCounterpartFactor: 2,
  risingMaxAgeDays: 30,
} as const;

export const SCHEDULE = {
  /** Incremental runs re-read this much before the watermark: late commits are never missed. */
  watermarkOverlapSeconds: 120,
  /**
   * A week is frozen no sooner than this after it ends: a write dated Sunday 23:59:59 that is
   * still committing at midnight lands in the final snapshot (the Monday freeze runs at 00:02;
   * the 15-minute run at 00:00 leaves the week pending).
   */
  freezeGraceSeconds: 60,
  /** Rows per piscina task. */
  poolChunk: 50_000,
  /** Per-transaction memory of scoring batches (SET LOCAL): sorts and hashes of the window stay in RAM. */
  workMem: '256MB',
  /**
   * Planner cost of a random page read in scoped (incremental, one-agent) runs, SET LOCAL: the
   * rows they look up by index (a few thousand agents' interactions and their stored weights) are
   * hot in memory, and with the default 4 the planner hashes all of scoring_edges instead.
   */
  scopedRandomPageCost: 1.1,
  /** default_statistics_target of an incremental run's analyzed staging tables (transaction.ts tuneStagingStatistics). */
  stagingStatisticsTarget: 10,
  /** Local buffers for the staging tables (settable before a connection's first temporary table). */
  tempBuffers: '512MB',
  /**
   * After an incremental run that changed weights, the live week's snapshots are refreshed when
   * older than this (or missing), so activity shows on the leaderboards within about a minute
   * instead of waiting for the next 15-minute run.
   */
  liveRefreshAfterActivitySeconds: 60,
  /**
   * A live refresh whose changed agents are more than this share of the agents the week's totals
   * hold rebuilds the totals from the whole week instead of summing them again agent by agent.
   * Summing again costs about 0.25 ms per changed agent (0.1 ms summed by an index lookup of its
   * interactions, 0.15 ms stored as an upsert that rewrites its score indexes); a rebuild costs one
   * pass over the week plus every row written by COPY into an emptied table, about 0.1 ms per
   * agent of the week. The two break even at 0.1 / 0.25 = 0.4 of the week; when the whole week
   * changed, summing again costs about twice a rebuild.
   */
  liveRebuildShare: 0.4,
  /**
   * Partitions of the agents (by a hash of the id) in a full recompute spread over the worker
   * fleet: at least the workers; few, since each partition scans the window once per phase.
   */
  partitions: 4,
  /**
   * Partitions of the agents in a fleet run's reputations phase: finer than the others, since
   * they run beside the one long clusters job and the phase ends with its last partition (at 1M
   * on 2 workers, the last of 4 left one worker idle for up to 1.5 s of a 9-10 s phase). Each
   * reads only its own rows (scoring_build_rows), so more of them cost little more.
   */
  reputationPartitions: 8,
  /** A fleet run without progress for this long is abandoned when another one is started. */
  fleetStaleMinutes: 60,
} as const;

export const DAY_MS = 86_400_000;
