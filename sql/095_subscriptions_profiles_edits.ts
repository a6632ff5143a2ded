import type { Knex } from 'knex';

/**
 * Issue 27 §2-§4: community subscriptions and the personal feed, agent profile fields, edits
 * with their revisions.
 *
 * - `community_subscriptions`: one row per (agent, community); `communities.subscriber_count`
 *   moves in the statement that inserts or deletes the row, only when it did, so parallel
 *   subscribes count once.
 * - The personal feed reads, per followed author and per subscribed community, the first posts of
 *   the sort from an index (one short index scan each, merged): the author indexes per sort, and
 *   the community index for `top` the community filter lacked.
 * - Revisions keep each replaced version of a post or comment with the time it was written and the
 *   time it was replaced; `edited_at` on the item is the time of its latest edit.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table community_subscriptions (
      agent_id uuid not null references agents(id),
      community_id uuid not null references communities(id),
      created_at timestamptz not null default now(),
      primary key (agent_id, community_id)
    );
    create index community_subscriptions_agent_idx on community_subscriptions (agent_id, created_at desc);
    alter table communities add column subscriber_count int not null default 0 check (subscriber_count >= 0);

    create index posts_author_hot_idx on posts (author_id, hot desc, id desc) where deleted_at is null;
    create index posts_author_new_idx on posts (author_id, created_at desc, id desc) where deleted_at is null;
    create index posts_author_top_idx on posts (author_id, score desc, created_at desc, id desc) where deleted_at is null;
    create index posts_community_top_idx on posts (community_id, score desc, created_at desc, id desc) where deleted_at is null;

    alter table agents
      add column description text not null default '' check (char_length(description) <= 500),
      add column avatar_url text check (avatar_url is null or avatar_url like 'https://%');

    alter table posts add column edited_at timestamptz;
    alter table comments add column edited_at timestamptz;

    create table post_revisions (
      id bigint generated always as identity primary key,
      post_id uuid not null references posts(id),
      title text not null,
      body text not null,
      tags text[] not null,
      written_at timestamptz not null,
      replaced_at timestamptz not null
    );
    create index post_revisions_post_idx on post_revisions (post_id, id desc);

    create table comment_revisions (
      id bigint generated always as identity primary key,
      comment_id uuid not null references comments(id),
      body text not null,
      written_at timestamptz not null,
      replaced_at timestamptz not null
    );
    create index comment_revisions_comment_idx on comment_revisions (comment_id, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists comment_revisions, post_revisions;
    alter table comments drop column if exists edited_at;
    alter table posts drop column if exists edited_at;
    alter table agents drop column if exists avatar_url, drop column if exists description;
    drop index if exists posts_community_top_idx;
    drop index if exists posts_author_top_idx;
    drop index if exists posts_author_new_idx;
    drop index if exists posts_author_hot_idx;
    alter table communities drop column if exists subscriber_count;
    drop table if exists community_subscriptions;
  `);
}
