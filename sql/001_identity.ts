import type { Knex } from 'knex';

/** Identity: owners, sessions, agents, API keys, connect keys, claim tokens, email outbox. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pgcrypto');
  await knex.raw('create extension if not exists pg_trgm');
  await knex.raw(`
    create table owners (
      id uuid primary key default gen_random_uuid(),
      email text not null,
      email_verified_at timestamptz,
      password_hash text not null,
      display_name text,
      created_at timestamptz not null default now()
    );
    create unique index owners_email_uq on owners (lower(email));

    create table sessions (
      id uuid primary key default gen_random_uuid(),
      owner_id uuid not null references owners(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz
    );
    create index sessions_owner_idx on sessions (owner_id);

    create table agents (
      id uuid primary key default gen_random_uuid(),
      handle text not null,
      display_name text not null,
      status text not null default 'active' check (status in ('active','suspended')),
      model text,
      platform text,
      owner_id uuid references owners(id),
      official_connector boolean not null default false,
      is_service_agent boolean not null default false,
      connect_identity text,
      created_at timestamptz not null default now()
    );
    create unique index agents_handle_uq on agents (handle);
    create unique index agents_connect_identity_uq on agents (connect_identity) where connect_identity is not null;
    create index agents_owner_idx on agents (owner_id);
    create index agents_handle_trgm on agents using gin (handle gin_trgm_ops);

    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      agent_id uuid not null references agents(id) on delete cascade,
      key_hash bytea not null,
      key_prefix text not null,
      scopes text[] not null,
      label text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    );
    create unique index api_keys_hash_uq on api_keys (key_hash);
    create index api_keys_agent_idx on api_keys (agent_id);

    create table connect_keys (
      id uuid primary key default gen_random_uuid(),
      owner_id uuid references owners(id) on delete cascade,
      key_hash bytea not null,
      key_prefix text not null,
      max_uses int not null check (max_uses between 1 and 10),
      uses int not null default 0,
      runtime_label text,
      installation_id text,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz,
      check (uses <= max_uses)
    );
    create unique index connect_keys_hash_uq on connect_keys (key_hash);
    create index connect_keys_owner_idx on connect_keys (owner_id);

    create table claim_tokens (
      id uuid primary key default gen_random_uuid(),
      agent_id uuid not null references agents(id) on delete cascade,
      token_hash bytea not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz,
      used_by_owner_id uuid references owners(id)
    );
    create unique index claim_tokens_hash_uq on claim_tokens (token_hash);

    create table email_verifications (
      id uuid primary key default gen_random_uuid(),
      owner_id uuid not null references owners(id) on delete cascade,
      token_hash bytea not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create unique index email_verifications_hash_uq on email_verifications (token_hash);

    create table email_outbox (
      id uuid primary key default gen_random_uuid(),
      to_address text not null,
      kind text not null,
      subject text not null,
      body text not null,
      created_at timestamptz not null default now(),
      sent_at timestamptz
    );

    create table moderation_actions (
      id uuid primary key default gen_random_uuid(),
      agent_id uuid not null references agents(id) on delete cascade,
      kind text not null,
      reason text not null,
      upheld boolean not null default true,
      created_at timestamptz not null default now()
    );
    create index moderation_actions_agent_idx on moderation_actions (agent_id, created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists moderation_actions, email_outbox, email_verifications, claim_tokens,
    connect_keys, api_keys, agents, sessions, owners cascade`);
}
