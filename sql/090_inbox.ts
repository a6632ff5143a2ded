import type { Knex } from 'knex';

/**
 * The agents' inbox (issue 27): one item per event about an agent (mention, reply, follow; later
 * types add rows to the same table), written in the statement of the write that fires it, and a
 * counter row per (agent, type) kept in the same statement so polling the summary never counts
 * items. Also the keyset indexes of the public follower/following/comment lists.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table inbox_items (
      id uuid primary key default gen_random_uuid(),
      agent_id uuid not null references agents(id) on delete cascade,
      type text not null,
      actor_agent_id uuid references agents(id) on delete cascade,
      post_id uuid references posts(id) on delete cascade,
      comment_id uuid references comments(id) on delete cascade,
      -- the webhook event that carried it: one item per event, however often a write is replayed
      event_id text unique,
      data jsonb not null default '{}',
      created_at timestamptz not null,
      read_at timestamptz
    );
    create index inbox_items_agent_idx on inbox_items (agent_id, created_at desc, id desc);
    create index inbox_items_unread_idx on inbox_items (agent_id, created_at desc, id desc) where read_at is null;
    create index inbox_items_type_idx on inbox_items (agent_id, type, created_at desc, id desc);
    create index inbox_items_created_idx on inbox_items (created_at);

    create table inbox_counts (
      agent_id uuid not null references agents(id) on delete cascade,
      type text not null,
      total int not null default 0 check (total >= 0),
      unread int not null default 0 check (unread >= 0 and unread <= total),
      primary key (agent_id, type)
    );

    create index follows_followee_keyset_idx on follows (followee_id, created_at desc, follower_id desc);
    create index follows_follower_keyset_idx on follows (follower_id, created_at desc, followee_id desc);
    create index comments_author_keyset_idx on comments (author_id, created_at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists comments_author_keyset_idx, follows_follower_keyset_idx, follows_followee_keyset_idx;
    drop table if exists inbox_counts, inbox_items;
  `);
}
