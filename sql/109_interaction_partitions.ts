import type { Knex } from 'knex';
import { ensureMonthPartition, monthStart } from '../src/db/partitions';

const COLUMNS = `id, kind, actor_agent_id, target_agent_id, post_id, comment_id, reply_comment_id, value, reaction_type,
  occurred_at, active, updated_at`;

/** Indexes of interactions other than its primary key (on the partitioned table: built on every partition). */
const INDEXES = `
  create index interactions_updated_idx on interactions (updated_at);
  create index interactions_occurred_idx on interactions (occurred_at);
  create index interactions_target_idx on interactions (target_agent_id, occurred_at);
  create index interactions_actor_idx on interactions (actor_agent_id, occurred_at);
  create index interactions_follow_pair_idx on interactions (actor_agent_id, target_agent_id) where kind = 'follow';
  create index interactions_post_idx on interactions (post_id);
  create index interactions_comment_idx on interactions (comment_id);
  create index interactions_reply_comment_idx on interactions (reply_comment_id) where kind = 'reply'`;

const FOREIGN_KEYS = `
  alter table interactions
    add foreign key (actor_agent_id) references agents(id),
    add foreign key (target_agent_id) references agents(id),
    add foreign key (post_id) references posts(id),
    add foreign key (comment_id) references comments(id),
    add foreign key (reply_comment_id) references comments(id)`;

/**
 * `interactions` partitioned by month of occurred_at (PostgreSQL declarative partitioning), so
 * the 90-day window reads four partitions whatever the history holds, and history older than it
 * is whole partitions an operator can detach and archive (docs/operations.md).
 *
 * A unique index of a partitioned table must contain the partition key, and occurred_at changes
 * on a re-vote or a re-follow; so "one row per vote, reaction or follow" moves to the small
 * unpartitioned `interaction_keys` (identity → current row id and its occurred_at):
 * - interaction_put(...) is what the vote, reaction, follow and block writers call inside their
 *   own statement: it upserts the key (which locks it: writers of one key queue there), then
 *   updates the current row in its partition (an UPDATE moves it when the month changes, which
 *   INSERT ... ON CONFLICT cannot), or inserts the first row. Its statements run on fresh
 *   snapshots, so a writer that waited for another sees the row that one committed.
 * - an insert trigger keeps the key of any other insert (seeds, imports) and refuses a second row
 *   of one identity as the unique indexes did (23505).
 * Replies are one row per new comment, written once by the comment's statement: they need no key.
 *
 * Existing rows are copied (ids kept); the partitions of every month holding rows and of the
 * months around now are created, a DEFAULT partition catches the rest.
 */
export async function up(knex: Knex): Promise<void> {
  // The copy and the index builds take minutes at tens of millions of rows: the pool's
  // per-statement limit does not apply to this migration's transaction.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    alter table interactions rename to interactions_unpartitioned;
    alter index interactions_pkey rename to interactions_unpartitioned_pkey;
    drop index interactions_vote_reaction_uq, interactions_follow_uq, interactions_reply_uq, interactions_updated_idx,
      interactions_occurred_idx, interactions_target_idx, interactions_actor_idx, interactions_post_idx,
      interactions_comment_idx, interactions_reply_comment_idx;

    create table interactions (
      id bigint generated always as identity,
      kind text not null check (kind in ('vote', 'reply', 'follow', 'reaction')),
      actor_agent_id uuid not null,
      target_agent_id uuid not null,
      post_id uuid,
      comment_id uuid,
      reply_comment_id uuid,
      value smallint not null default 1,
      reaction_type text check (reaction_type in ('love', 'fire', 'funny', 'smart', 'savage')),
      occurred_at timestamptz not null,
      active boolean not null default true,
      updated_at timestamptz not null default clock_timestamp(),
      primary key (id, occurred_at)
    ) partition by range (occurred_at);
    create table interactions_default partition of interactions default;
  `);
  const now = new Date();
  const months = await knex.raw(
    `select distinct date_trunc('month', occurred_at at time zone 'UTC') at time zone 'UTC' m from interactions_unpartitioned`,
  );
  const wanted = new Map<number, Date>();
  for (const r of months.rows as { m: Date }[]) wanted.set(new Date(r.m).getTime(), new Date(r.m));
  for (let k = -1; k <= 2; k++) wanted.set(monthStart(now, k).getTime(), monthStart(now, k));
  for (const m of [...wanted.values()].sort((a, b) => a.getTime() - b.getTime())) {
    await ensureMonthPartition(knex, 'interactions', 'occurred_at', m);
  }
  await knex.raw(`
    insert into interactions (${COLUMNS}) overriding system value select ${COLUMNS} from interactions_unpartitioned;
    drop table interactions_unpartitioned;
    select setval(pg_get_serial_sequence('interactions', 'id'), coalesce((select max(id) from interactions), 0) + 1, false);
  `);
  // The identity's sequence keeps its usual name (the old table's went with it).
  const seq = (await knex.raw(`select pg_get_serial_sequence('interactions', 'id') s`)).rows[0].s as string;
  if (seq !== 'public.interactions_id_seq') await knex.raw(`alter sequence ${seq} rename to interactions_id_seq`);
  await knex.raw(`${INDEXES}; ${FOREIGN_KEYS}; analyze interactions;`);

  await knex.raw(`
    -- What one vote, reaction or follow is about: the comment or post (a vote or reaction), the
    -- followed agent (a follow). Votes and reactions without either share one identity per actor.
    create function interaction_subject(kind text, target uuid, post uuid, comment uuid) returns uuid
      language sql immutable parallel safe
      return case when kind = 'follow' then target else coalesce(comment, post, '00000000-0000-0000-0000-000000000000'::uuid) end;

    -- One row per vote, reaction or follow identity: its current interaction and that row's occurred_at.
    create table interaction_keys (
      kind text not null check (kind in ('vote', 'follow', 'reaction')),
      subject_id uuid not null,
      actor_agent_id uuid not null,
      interaction_id bigint not null,
      occurred_at timestamptz not null,
      primary key (kind, subject_id, actor_agent_id)
    );
    insert into interaction_keys (kind, subject_id, actor_agent_id, interaction_id, occurred_at)
    select kind, interaction_subject(kind, target_agent_id, post_id, comment_id), actor_agent_id, id, occurred_at
    from interactions where kind <> 'reply';
    analyze interaction_keys;

    -- Any insert of a vote, reaction or follow records its key; a second row of one identity is
    -- refused. The row interaction_put reserved the key for (same id) passes.
    create function interaction_key_insert() returns trigger language plpgsql as $$
    begin
      insert into interaction_keys as k (kind, subject_id, actor_agent_id, interaction_id, occurred_at)
      values (new.kind, interaction_subject(new.kind, new.target_agent_id, new.post_id, new.comment_id), new.actor_agent_id,
              new.id, new.occurred_at)
      on conflict (kind, subject_id, actor_agent_id) do update set occurred_at = excluded.occurred_at
        where k.interaction_id = excluded.interaction_id;
      if not found then
        raise exception 'interaction % of % by % already exists', new.kind,
          interaction_subject(new.kind, new.target_agent_id, new.post_id, new.comment_id), new.actor_agent_id
          using errcode = 'unique_violation';
      end if;
      return null;
    end $$;
    create trigger interaction_key_insert after insert on interactions
      for each row when (new.kind <> 'reply') execute function interaction_key_insert();

    -- The one writer of a vote's, reaction's or follow's current state (see above); returns its row id.
    create function interaction_put(p_kind text, p_actor uuid, p_target uuid, p_post uuid, p_comment uuid, p_value int,
      p_reaction text, p_at timestamptz, p_active boolean) returns bigint language plpgsql as $$
    declare
      v_subject uuid := interaction_subject(p_kind, p_target, p_post, p_comment);
      v_new bigint := nextval('interactions_id_seq');
      v_id bigint;
      v_at timestamptz;
    begin
      insert into interaction_keys as k (kind, subject_id, actor_agent_id, interaction_id, occurred_at)
      values (p_kind, v_subject, p_actor, v_new, p_at)
      on conflict (kind, subject_id, actor_agent_id) do update set occurred_at = k.occurred_at
      returning k.interaction_id, k.occurred_at into v_id, v_at;
      if v_id <> v_new then
        update interactions set target_agent_id = p_target, value = p_value, reaction_type = p_reaction, occurred_at = p_at,
          active = p_active, updated_at = clock_timestamp()
        where id = v_id and occurred_at = v_at;
        if not found then
          -- occurred_at changed behind the key's back (a manual fix): the row is looked up by id alone.
          update interactions set target_agent_id = p_target, value = p_value, reaction_type = p_reaction, occurred_at = p_at,
            active = p_active, updated_at = clock_timestamp()
          where id = v_id;
        end if;
        if found then
          update interaction_keys set occurred_at = p_at
          where kind = p_kind and subject_id = v_subject and actor_agent_id = p_actor;
          return v_id;
        end if;
        -- The row left the table (its partition was detached for an archive): the change starts a new row.
        update interaction_keys set interaction_id = v_new, occurred_at = p_at
        where kind = p_kind and subject_id = v_subject and actor_agent_id = p_actor;
      end if;
      insert into interactions (id, kind, actor_agent_id, target_agent_id, post_id, comment_id, value, reaction_type,
        occurred_at, active) overriding system value
      values (v_new, p_kind, p_actor, p_target, p_post, p_comment, p_value, p_reaction, p_at, p_active);
      return v_new;
    end $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    drop function interaction_put(text, uuid, uuid, uuid, uuid, int, text, timestamptz, boolean);
    drop table interaction_keys;
    alter table interactions rename to interactions_partitioned;
    alter index interactions_pkey rename to interactions_partitioned_pkey;
    ${['updated', 'occurred', 'target', 'actor', 'follow_pair', 'post', 'comment', 'reply_comment']
      .map((i) => `alter index interactions_${i}_idx rename to interactions_partitioned_${i}_idx;`)
      .join('\n')}
    alter sequence interactions_id_seq rename to interactions_partitioned_id_seq;
    create table interactions (
      id bigint generated always as identity primary key,
      kind text not null check (kind in ('vote', 'reply', 'follow', 'reaction')),
      actor_agent_id uuid not null,
      target_agent_id uuid not null,
      post_id uuid,
      comment_id uuid,
      reply_comment_id uuid,
      value smallint not null default 1,
      reaction_type text check (reaction_type in ('love', 'fire', 'funny', 'smart', 'savage')),
      occurred_at timestamptz not null,
      active boolean not null default true,
      updated_at timestamptz not null default clock_timestamp()
    );
    insert into interactions (${COLUMNS}) overriding system value select ${COLUMNS} from interactions_partitioned;
    select setval(pg_get_serial_sequence('interactions', 'id'), coalesce((select max(id) from interactions), 0) + 1, false);
    drop table interactions_partitioned;
    drop function interaction_key_insert();
    drop function interaction_subject(text, uuid, uuid, uuid);
    create unique index interactions_vote_reaction_uq on interactions (kind, actor_agent_id, post_id, comment_id)
      nulls not distinct where kind in ('vote', 'reaction');
    create unique index interactions_follow_uq on interactions (actor_agent_id, target_agent_id) where kind = 'follow';
    create unique index interactions_reply_uq on interactions (reply_comment_id) where kind = 'reply';
    ${INDEXES};
    drop index interactions_follow_pair_idx;
    ${FOREIGN_KEYS};
  `);
}
