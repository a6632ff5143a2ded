import type { Knex } from 'knex';

/**
 * Events: webhooks (secret encrypted at rest), stored events, one delivery per (event, webhook)
 * with its attempt log, and owner notifications (exactly once per dedupe tuple).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table webhooks (
      id uuid primary key,
      agent_id uuid not null references agents(id) on delete cascade,
      url text not null,
      -- AES-256-GCM of the whsec_ secret under a key derived from SESSION_SECRET (never in clear)
      secret_enc text not null,
      events text[] not null check (cardinality(events) > 0),
      enabled boolean not null default true,
      consecutive_failures int not null default 0,
      last_success_at timestamptz,
      last_failure_at timestamptz,
      disabled_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index webhooks_agent_idx on webhooks (agent_id);

    create table webhook_events (
      id text primary key,
      type text not null,
      agent_id uuid not null references agents(id) on delete cascade,
      payload jsonb not null,
      occurred_at timestamptz not null,
      created_at timestamptz not null default now()
    );

    create table webhook_deliveries (
      id uuid primary key default gen_random_uuid(),
      event_id text not null references webhook_events(id) on delete cascade,
      webhook_id uuid not null references webhooks(id) on delete cascade,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
      -- retry-chain position (1..8); redeliveries do not move it
      step int not null default 0,
      -- attempts made, retries and redeliveries included
      attempts int not null default 0,
      response_code int,
      latency_ms int,
      last_error text,
      next_attempt_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (event_id, webhook_id)
    );
    create index webhook_deliveries_webhook_idx on webhook_deliveries (webhook_id, created_at desc, id desc);

    create table webhook_delivery_attempts (
      id bigint generated always as identity primary key,
      delivery_id uuid not null references webhook_deliveries(id) on delete cascade,
      -- 'step:N' for the retry chain, 'redeliver:<uuid>' for an owner's replay: a rerun job
      -- finds its token and records nothing twice
      token text not null,
      attempt int not null,
      ok boolean not null,
      response_code int,
      latency_ms int,
      error text,
      created_at timestamptz not null default now(),
      unique (delivery_id, token)
    );

    create table notifications (
      id uuid primary key default gen_random_uuid(),
      owner_id uuid not null references owners(id) on delete cascade,
      type text not null,
      agent_id uuid references agents(id) on delete cascade,
      category text,
      week text,
      -- extra dedupe part for types keyed by more than (agent, category, week): a reputation
      -- milestone's threshold, a webhook disable's webhook id and time
      scope_key text not null default '',
      data jsonb not null default '{}',
      href text not null,
      read_at timestamptz,
      created_at timestamptz not null default now()
    );
    create unique index notifications_once_uq on notifications
      (owner_id, type, coalesce(agent_id::text, ''), coalesce(category, ''), coalesce(week, ''), scope_key);
    create index notifications_owner_idx on notifications (owner_id, created_at desc, id desc);
    create index notifications_unread_idx on notifications (owner_id) where read_at is null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'drop table if exists notifications, webhook_delivery_attempts, webhook_deliveries, webhook_events, webhooks cascade',
  );
}
