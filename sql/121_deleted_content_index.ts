import type { Knex } from 'knex';

/**
 * The deleted posts and comments, by index: every scoring run flags the staged interactions on
 * deleted content (stage-sql.ts stageSql, DELETED_TARGET) from the set of their ids, which was read
 * by a scan of every post and comment, growing with history rather than with what a run stages. A
 * partial index holds only deleted rows, so a vote, a reply or a score change writes nothing to it
 * (its predicate is false for live content, and deleted_at is already in posts' partial indexes).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index if not exists posts_deleted_idx on posts (id) where deleted_at is not null;
    create index if not exists comments_deleted_idx on comments (id) where deleted_at is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists posts_deleted_idx; drop index if exists comments_deleted_idx');
}
