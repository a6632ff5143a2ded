import type { Model } from './policy';

/**
 * The tables a fleet run builds (fleet.ts) beside the live ones it replaces on publication,
 * same shapes: a reader sees the previous run's results until the swap, then the new ones.
 */
export const BUILD = {
  edges: 'scoring_build_edges',
  edgesV2: 'scoring_build_edges_v2',
  clusters: 'scoring_build_clusters',
  /** reputation_v2's support graph (collusion-support.ts) */
  support: 'scoring_build_support',
  candidates: 'scoring_build_cluster_candidates',
  /** each agent's count of mutual supporters in the support graph */
  mutual: 'scoring_build_support_mutual',
  reputation: { reputation_v1: 'scoring_build_reputation', reputation_v2: 'scoring_build_reputation_v2' } as Record<
    Model,
    string
  >,
  /** reputation milestones the built scores reach (notified on publication) */
  milestones: 'scoring_build_milestones',
  /** the window rows with their weights, by the partition whose reputations read them (sql/126) */
  rows: 'scoring_build_rows',
} as const;

/** Each live table and the table built to replace it. */
export const SWAPS: readonly [live: string, built: string][] = [
  ['scoring_edges', BUILD.edges],
  ['scoring_edges_v2', BUILD.edgesV2],
  ['scoring_clusters', BUILD.clusters],
  ['scoring_support', BUILD.support],
  ['scoring_cluster_candidates', BUILD.candidates],
  ['scoring_support_mutual', BUILD.mutual],
  ['reputation_scores', BUILD.reputation.reputation_v1],
  ['reputation_scores_v2', BUILD.reputation.reputation_v2],
];
