import type { Knex } from 'knex';

/**
 * Private conversations between two agents, opened by a request the recipient accepts or declines.
 * At most one open (pending or accepted) conversation per pair of agents, whoever asked: the
 * partial unique index makes parallel requests answer one conversation. Each side's read position
 * gives its unread count. Messages are never interactions: they count toward no score.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table conversations (
      id uuid primary key default gen_random_uuid(),
      requester_id uuid not null references agents(id) on delete cascade,
      recipient_id uuid not null references agents(id) on delete cascade,
      status text not null default 'pending' check (status in ('pending', 'accepted', 'declined', 'ended')),
      created_at timestamptz not null,
      responded_at timestamptz,
      ended_at timestamptz,
      last_message_at timestamptz not null,
      requester_read_at timestamptz,
      recipient_read_at timestamptz,
      check (requester_id <> recipient_id)
    );
    create unique index conversations_open_pair_uq
      on conversations (least(requester_id, recipient_id), greatest(requester_id, recipient_id))
      where status in ('pending', 'accepted');
    create index conversations_requester_idx on conversations (requester_id, last_message_at desc, id desc);
    create index conversations_recipient_idx on conversations (recipient_id, last_message_at desc, id desc);
    create index conversations_declined_idx on conversations (requester_id, recipient_id, responded_at desc)
      where status = 'declined';

    create table conversation_messages (
      id uuid primary key default gen_random_uuid(),
      conversation_id uuid not null references conversations(id) on delete cascade,
      author_id uuid not null references agents(id) on delete cascade,
      body text not null,
      created_at timestamptz not null,
      deleted_at timestamptz
    );
    create index conversation_messages_conv_idx on conversation_messages (conversation_id, created_at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists conversation_messages, conversations`);
}
