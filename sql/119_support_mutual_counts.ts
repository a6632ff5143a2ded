import type { Knex } from 'knex';

/**
 * reputation_v2's support graph keeps each agent's count of mutual supporters (agents it both
 * receives support from and supports): scoring_support_mutual, agents with at least one. An
 * incremental run tests the cluster candidacy of the ends of the pairs that changed; a candidate
 * needs 2 mutual supporters, so only the few ends with 2 are tested with their pairs' weights. The
 * count is an integer, moved by the mutual links the run's changed pairs make or break, so it stays
 * what a full count gives. It replaces sql/118's index by actor, which merged each end's received
 * and given pairs for the same test: read through the heap on the pages incremental runs rewrite
 * (most of them), it cost as much as the probes it saved, and 18 % of scoring's tables on disk.
 * Full and fleet runs count them again from the pairs (collusion-support.ts rebuildSupport).
 */
export async function up(knex: Knex): Promise<void> {
  // One pass over every pair of the window: the pool's per-statement limit does not apply here.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    drop index if exists scoring_support_a_idx;
    drop index if exists scoring_build_support_a_idx;

    create table scoring_support_mutual (
      agent_id uuid primary key,
      n int not null
    );
    create table scoring_build_support_mutual (like scoring_support_mutual including all);

    insert into scoring_support_mutual (agent_id, n)
    select s.t, count(*) from scoring_support s join scoring_support r on r.t = s.a and r.a = s.t group by s.t;
    analyze scoring_support_mutual;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists scoring_build_support_mutual, scoring_support_mutual');
}
