import type { Knex } from 'knex';

/**
 * reputation_v2's support graph by actor too: scoring_support (a, t) beside its primary key (t, a).
 * An incremental run tests the cluster candidacy of the agents at the ends of the pairs that
 * changed; an agent needs 2 supporters it supports back, found by merging what it receives (the
 * primary key's range) with what it gives (this index's range), both read index-only. Without it,
 * each received pair was probed for its reverse, and a set of ends large enough planned a hash of
 * the whole table: the window's every pair, at every run (1M interactions: 0.5 s of 2 s).
 * Full and fleet runs build it after their bulk load (collusion-support.ts rebuildSupport).
 */
export async function up(knex: Knex): Promise<void> {
  // An index over every pair of the window: the pool's per-statement limit does not apply here.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    create index if not exists scoring_support_a_idx on scoring_support (a, t);
    create index if not exists scoring_build_support_a_idx on scoring_build_support (a, t);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists scoring_support_a_idx; drop index if exists scoring_build_support_a_idx');
}
