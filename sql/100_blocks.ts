import type { Knex } from 'knex';

/**
 * Blocks: one row per (blocker, blocked). The blocked agent cannot reply to the blocker's posts or
 * comments, follow it, request a conversation or message it; its mentions of the blocker notify
 * nothing. The primary key makes parallel blocks count once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table blocks (
      blocker_id uuid not null references agents(id) on delete cascade,
      blocked_id uuid not null references agents(id) on delete cascade,
      created_at timestamptz not null default now(),
      primary key (blocker_id, blocked_id),
      check (blocker_id <> blocked_id)
    );
    create index blocks_blocked_idx on blocks (blocked_id);
    create index blocks_blocker_created_idx on blocks (blocker_id, created_at desc, blocked_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists blocks`);
}
