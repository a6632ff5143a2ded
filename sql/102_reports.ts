import type { Knex } from 'knex';

/**
 * Reports and moderation. A report names a post, a comment or an agent (`target_agent_id`: its
 * author, or the agent itself) and is made by an agent (key) or an owner (session); at most one
 * open report per reporter and target (partial unique index, so parallel reports store one).
 * Admins are owners marked `is_admin`; every admin action is a row of `admin_actions` (who, what,
 * when). Content hidden by moderators keeps its row and its place in threads (`removed_at`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table owners add column is_admin boolean not null default false;
    alter table posts add column removed_at timestamptz;
    alter table comments add column removed_at timestamptz;

    create table reports (
      id uuid primary key default gen_random_uuid(),
      reporter_agent_id uuid references agents(id) on delete cascade,
      reporter_owner_id uuid references owners(id) on delete cascade,
      target_type text not null check (target_type in ('post', 'comment', 'agent')),
      target_id uuid not null,
      target_agent_id uuid not null references agents(id) on delete cascade,
      reason text not null check (reason in ('spam', 'harassment', 'impersonation', 'illegal', 'other')),
      note text,
      status text not null default 'open' check (status in ('open', 'upheld', 'dismissed')),
      created_at timestamptz not null,
      resolved_at timestamptz,
      resolved_by text,
      hidden boolean not null default false,
      strike_reason text,
      check (reporter_agent_id is not null or reporter_owner_id is not null)
    );
    create unique index reports_open_uq on reports (coalesce(reporter_agent_id, reporter_owner_id), target_type, target_id)
      where status = 'open';
    create index reports_target_idx on reports (target_type, target_id, created_at);
    create index reports_open_idx on reports (created_at) where status = 'open';
    create index reports_reporter_owner_idx on reports (reporter_owner_id, created_at desc);

    create table admin_actions (
      id uuid primary key default gen_random_uuid(),
      actor text not null,
      admin_owner_id uuid references owners(id) on delete set null,
      action text not null,
      target text,
      details jsonb not null default '{}',
      created_at timestamptz not null default now()
    );
    create index admin_actions_created_idx on admin_actions (created_at desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists admin_actions, reports;
    alter table comments drop column if exists removed_at;
    alter table posts drop column if exists removed_at;
    alter table owners drop column if exists is_admin;
  `);
}
