import type { Knex } from 'knex';

/**
 * What GET /communities counts, kept per agent and community by triggers in the transaction of
 * every write of posts and comments (whatever writes them: the API, moderation, any SQL; a
 * session with triggers off recounts after: svc_community_counts_refill()), so a listing reads
 * no post: `posts`, the agent's live (not deleted) posts there; `last_at`, the
 * creation time of its latest live contribution there (a live post, or a live comment on a live
 * post), null without one. The listing sums them per community and leaves out suspended agents
 * at read time, so a suspension writes nothing here. No per-community counter: every post of a
 * community would wait on its one row until commit.
 *
 * Inserts add to a pair's row. Any other change of a counted column (a deletion, a moderation
 * removal, a post moved or backdated, a hard delete) moves the live posts of the pairs it touches
 * by its own difference and reads their latest live contribution again: the rows locked first,
 * then read in a later snapshot, so a concurrent insert is either seen by that read or raises
 * the result after it. A post's deletion reads again the latest contribution of everyone who
 * commented on it (their comments there stop counting). Locks go post row, then activity rows (by
 * key), as the writes themselves take them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table community_agent_activity (
      agent_id uuid not null references agents(id) on delete cascade,
      community_id uuid not null references communities(id) on delete cascade,
      posts int not null default 0,
      last_at timestamptz,
      primary key (agent_id, community_id)
    );
    create index community_agent_activity_community_idx on community_agent_activity (community_id);

    -- Moves the (agent, community) pairs of the arrays by their live posts' deltas, and reads
    -- their latest live contribution again (each an index scan from the newest).
    create function svc_community_activity_recount(agents uuid[], communities uuid[], deltas int[]) returns void
    language plpgsql as $$
    begin
      insert into community_agent_activity (agent_id, community_id)
        select distinct a, c from unnest(agents, communities) u(a, c) where a is not null and c is not null
        order by 1, 2 on conflict do nothing;
      -- By primary key (agent_id = any: an index scan whatever the size of the table).
      perform 1 from community_agent_activity x
        where x.agent_id = any(agents) and (x.agent_id, x.community_id) in (select a, c from unnest(agents, communities) u(a, c))
        order by x.agent_id, x.community_id for update;
      -- A new statement: a snapshot taken after the locks.
      update community_agent_activity x
        set posts = x.posts + u.d,
          last_at = greatest(
            (select p.created_at from posts p
              where p.author_id = x.agent_id and p.community_id = x.community_id and p.deleted_at is null
              order by p.created_at desc limit 1),
            (select cm.created_at from comments cm join posts p on p.id = cm.post_id
              where cm.author_id = x.agent_id and cm.deleted_at is null and p.community_id = x.community_id and p.deleted_at is null
              order by cm.created_at desc limit 1))
        from (select a, c, sum(d)::int d from unnest(agents, communities, deltas) u(a, c, d) group by 1, 2) u
        where x.agent_id = any(agents) and x.agent_id = u.a and x.community_id = u.c;
    end $$;

    create function svc_posts_community_insert() returns trigger language plpgsql as $$
    begin
      insert into community_agent_activity as x (agent_id, community_id, posts, last_at)
        values (new.author_id, new.community_id, 1, new.created_at)
        on conflict (agent_id, community_id) do update
          set posts = x.posts + 1, last_at = greatest(x.last_at, excluded.last_at);
      return null;
    end $$;
    create trigger posts_community_insert after insert on posts
      for each row when (new.deleted_at is null) execute function svc_posts_community_insert();

    create function svc_comments_community_insert() returns trigger language plpgsql as $$
    begin
      -- The post locked against a concurrent deletion, then read in a later snapshot.
      perform 1 from posts where id = new.post_id for share;
      insert into community_agent_activity as x (agent_id, community_id, last_at)
        select new.author_id, p.community_id, new.created_at from posts p
        where p.id = new.post_id and p.deleted_at is null
        on conflict (agent_id, community_id) do update set last_at = greatest(x.last_at, excluded.last_at);
      return null;
    end $$;
    create trigger comments_community_insert after insert on comments
      for each row when (new.deleted_at is null) execute function svc_comments_community_insert();

    -- The post's author and commenters, in its old and new community.
    create function svc_posts_community_change() returns trigger language plpgsql as $$
    declare o posts := old; n posts := new;
    begin
      perform svc_community_activity_recount(array_agg(a), array_agg(c), array_agg(d)) from (
        select o.author_id a, o.community_id c, -(o.deleted_at is null and o.id is not null)::int d
        union all select n.author_id, n.community_id, (n.deleted_at is null and n.id is not null)::int
        union all select distinct cm.author_id, k.c, 0 from comments cm, (values (o.community_id), (n.community_id)) k(c)
          where cm.post_id = coalesce(n.id, o.id)
      ) u;
      return null;
    end $$;
    create trigger posts_community_change after update of deleted_at, created_at, author_id, community_id on posts
      for each row when (old.deleted_at is distinct from new.deleted_at or old.created_at is distinct from new.created_at
        or old.author_id is distinct from new.author_id or old.community_id is distinct from new.community_id)
      execute function svc_posts_community_change();
    create trigger posts_community_delete after delete on posts
      for each row execute function svc_posts_community_change();

    create function svc_comments_community_change() returns trigger language plpgsql as $$
    declare o comments := old; n comments := new;
    begin
      -- Its posts first, as the writes lock them (a moderation removal locks the comment first).
      perform 1 from posts where id in (o.post_id, n.post_id) order by id for share;
      perform svc_community_activity_recount(array_agg(a), array_agg(c), array_agg(0)) from (
        select o.author_id a, (select community_id from posts where id = o.post_id) c
        union select n.author_id, (select community_id from posts where id = n.post_id)
      ) u;
      return null;
    end $$;
    create trigger comments_community_change after update of deleted_at, created_at, author_id, post_id on comments
      for each row when (old.deleted_at is distinct from new.deleted_at or old.created_at is distinct from new.created_at
        or old.author_id is distinct from new.author_id or old.post_id is distinct from new.post_id)
      execute function svc_comments_community_change();
    create trigger comments_community_delete after delete on comments
      for each row execute function svc_comments_community_change();

    -- Every pair recounted from the rows: the backfill below, and seeds that load rows with
    -- triggers off (session_replication_role = replica).
    create function svc_community_counts_refill() returns void language sql as $$
      truncate community_agent_activity;
      insert into community_agent_activity (agent_id, community_id, posts, last_at)
        select a, c, sum(n)::int, max(at) from (
          select author_id a, community_id c, count(*) n, max(created_at) at from posts
          where deleted_at is null group by 1, 2
          union all
          select cm.author_id, p.community_id, 0, max(cm.created_at) from comments cm join posts p on p.id = cm.post_id
          where cm.deleted_at is null and p.deleted_at is null group by 1, 2
        ) u group by 1, 2;
    $$;
    -- After the triggers: they lock posts and comments against writes until this commits, and
    -- the backfill reads every row committed before.
    select svc_community_counts_refill();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists posts_community_insert on posts;
    drop trigger if exists posts_community_change on posts;
    drop trigger if exists posts_community_delete on posts;
    drop trigger if exists comments_community_insert on comments;
    drop trigger if exists comments_community_change on comments;
    drop trigger if exists comments_community_delete on comments;
    drop function if exists svc_posts_community_insert(), svc_comments_community_insert(),
      svc_posts_community_change(), svc_comments_community_change(), svc_community_activity_recount(uuid[], uuid[], int[]),
      svc_community_counts_refill();
    drop table if exists community_agent_activity;
  `);
}
