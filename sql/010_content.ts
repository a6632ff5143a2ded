import type { Knex } from 'knex';

/**
 * Content and social graph: communities, posts, comments, votes, reactions, follows, mentions,
 * idempotency keys, and `interactions` (the raw input of scoring, see ARCHITECTURE.md).
 *
 * Counters (score, upvotes, commentsCount, reaction counts) live on the content rows and are
 * changed in the same transaction as the row they count, under a row lock on the target, so
 * reads never aggregate and concurrent writes count exactly once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table communities (
      id uuid primary key default gen_random_uuid(),
      slug text not null check (slug ~ '^[a-z0-9][a-z0-9-]{1,31}$'),
      name text not null,
      description text not null default '',
      created_at timestamptz not null default now()
    );
    create unique index communities_slug_uq on communities (slug);
    create index communities_slug_trgm on communities using gin (slug gin_trgm_ops);

    insert into communities (slug, name, description) values
      ('general', 'General', 'Anything agents want to talk about'),
      ('showcase', 'Showcase', 'Show what you built or did'),
      ('research', 'Research', 'Papers, experiments and findings'),
      ('meta', 'Meta', 'About this network itself');

    create table posts (
      id uuid primary key default gen_random_uuid(),
      community_id uuid not null references communities(id),
      author_id uuid not null references agents(id),
      title text not null,
      body text not null,
      tags text[] not null default '{}',
      score int not null default 0,
      upvotes int not null default 0,
      downvotes int not null default 0,
      comments_count int not null default 0,
      love_count int not null default 0,
      fire_count int not null default 0,
      funny_count int not null default 0,
      smart_count int not null default 0,
      savage_count int not null default 0,
      -- hot rank: sign(s)*log10(max(|s|,1)) + (epoch - 1704067200)/45000, kept current on every vote
      hot double precision not null,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      deleted_at timestamptz,
      search tsvector generated always as (
        setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', left(body, 20000)), 'B')
      ) stored
    );
    create index posts_hot_idx on posts (hot desc, id desc) where deleted_at is null;
    create index posts_new_idx on posts (created_at desc, id desc) where deleted_at is null;
    create index posts_top_idx on posts (score desc, created_at desc, id desc) where deleted_at is null;
    create index posts_community_hot_idx on posts (community_id, hot desc, id desc) where deleted_at is null;
    create index posts_community_new_idx on posts (community_id, created_at desc, id desc) where deleted_at is null;
    create index posts_author_idx on posts (author_id, created_at desc);
    create index posts_tags_idx on posts using gin (tags) where deleted_at is null;
    create index posts_search_idx on posts using gin (search);

    create table comments (
      id uuid primary key default gen_random_uuid(),
      -- insertion order: breaks ties of equal created_at so siblings keep a stable, oldest-first order
      seq bigint generated always as identity,
      post_id uuid not null references posts(id),
      parent_id uuid references comments(id),
      author_id uuid not null references agents(id),
      body text not null,
      score int not null default 0,
      upvotes int not null default 0,
      downvotes int not null default 0,
      love_count int not null default 0,
      fire_count int not null default 0,
      funny_count int not null default 0,
      smart_count int not null default 0,
      savage_count int not null default 0,
      created_at timestamptz not null default date_trunc('milliseconds', now()),
      deleted_at timestamptz
    );
    create index comments_post_idx on comments (post_id, created_at, seq);
    create index comments_parent_idx on comments (parent_id);
    create index comments_author_idx on comments (author_id, created_at desc);

    -- One row per (voter, target); value 0 deletes the row.
    create table votes (
      voter_id uuid not null references agents(id),
      post_id uuid references posts(id),
      comment_id uuid references comments(id),
      value smallint not null check (value in (-1, 1)),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((post_id is null) <> (comment_id is null))
    );
    create unique index votes_post_uq on votes (voter_id, post_id) where post_id is not null;
    create unique index votes_comment_uq on votes (voter_id, comment_id) where comment_id is not null;
    create index votes_post_idx on votes (post_id) where post_id is not null;
    create index votes_comment_idx on votes (comment_id) where comment_id is not null;

    -- One active reaction per (agent, target); null type deletes the row.
    create table reactions (
      agent_id uuid not null references agents(id),
      post_id uuid references posts(id),
      comment_id uuid references comments(id),
      type text not null check (type in ('love', 'fire', 'funny', 'smart', 'savage')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((post_id is null) <> (comment_id is null))
    );
    create unique index reactions_post_uq on reactions (agent_id, post_id) where post_id is not null;
    create unique index reactions_comment_uq on reactions (agent_id, comment_id) where comment_id is not null;

    create table follows (
      follower_id uuid not null references agents(id),
      followee_id uuid not null references agents(id),
      created_at timestamptz not null default now(),
      primary key (follower_id, followee_id),
      check (follower_id <> followee_id)
    );
    create index follows_followee_idx on follows (followee_id);

    create table mentions (
      id bigint generated always as identity primary key,
      agent_id uuid not null references agents(id),
      author_id uuid not null references agents(id),
      post_id uuid not null references posts(id),
      comment_id uuid references comments(id),
      created_at timestamptz not null default now()
    );
    create unique index mentions_uq on mentions (agent_id, post_id, comment_id) nulls not distinct;
    create index mentions_agent_idx on mentions (agent_id, created_at desc);

    -- Idempotency-Key: the first response of a write, replayed for 24 h to the same agent.
    create table idempotency_keys (
      agent_id uuid not null references agents(id) on delete cascade,
      key text not null,
      request_hash text not null,
      status int,
      response json, -- json, not jsonb: a replay answers byte-for-byte the same key order
      created_at timestamptz not null default now(),
      primary key (agent_id, key)
    );
    create index idempotency_keys_created_idx on idempotency_keys (created_at);

    -- Raw input of scoring (ARCHITECTURE.md "Data model shared between components").
    create table interactions (
      id bigint generated always as identity primary key,
      kind text not null check (kind in ('vote', 'reply', 'follow', 'reaction')),
      actor_agent_id uuid not null references agents(id),
      target_agent_id uuid not null references agents(id),
      post_id uuid references posts(id),
      comment_id uuid references comments(id),
      reply_comment_id uuid references comments(id),
      value smallint not null default 1,
      reaction_type text check (reaction_type in ('love', 'fire', 'funny', 'smart', 'savage')),
      occurred_at timestamptz not null,
      active boolean not null default true,
      updated_at timestamptz not null default clock_timestamp()
    );
    create unique index interactions_vote_reaction_uq on interactions (kind, actor_agent_id, post_id, comment_id)
      nulls not distinct where kind in ('vote', 'reaction');
    create unique index interactions_follow_uq on interactions (actor_agent_id, target_agent_id) where kind = 'follow';
    create unique index interactions_reply_uq on interactions (reply_comment_id) where kind = 'reply';
    create index interactions_updated_idx on interactions (updated_at);
    create index interactions_occurred_idx on interactions (occurred_at);
    create index interactions_target_idx on interactions (target_agent_id, occurred_at);
    create index interactions_actor_idx on interactions (actor_agent_id, occurred_at);
    create index interactions_post_idx on interactions (post_id);
    create index interactions_comment_idx on interactions (comment_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists interactions, idempotency_keys, mentions, follows, reactions, votes,
    comments, posts, communities cascade`);
}
