import type { Knex } from 'knex';

/**
 * `post_ranks`: the sort keys of the `hot` and `top` feeds, one row per live post, with the
 * indexes those feeds page by. They were indexes of `posts` itself, and a vote changes `score`
 * and `hot`: an update of an indexed column cannot be a heap-only (HOT) update, so every vote
 * inserted an entry into each of posts' 12 indexes, the tags' GIN index included. With the ranks
 * apart, no index of `posts` covers a column that votes, reactions or comments change, so those
 * updates are HOT and leave posts' indexes alone; the vote writes the narrow rank row and its 7
 * index entries instead.
 *
 * The rows follow `posts` by trigger, in the transaction of the change, whoever writes posts
 * (the API, the CLI, a COPY seed): a new live post gets its row, a change of score or hot
 * copies them, a soft delete removes the row (deleted posts are on no feed) and an undelete adds
 * it back. `posts` keeps `score` and `hot` (the API reads them there); both tables hold the same
 * values in every snapshot.
 *
 * `fillfactor = 85` leaves room on posts' new pages for the updated versions of their rows, which
 * a HOT update needs on the same page; existing pages get it as they are rewritten.
 */
export async function up(knex: Knex): Promise<void> {
  // The copy of every live post's keys and six index builds outlast the pool's per-statement
  // limit on a large table (a million posts: about a minute under load).
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    create table post_ranks (
      id uuid primary key references posts(id) on delete cascade,
      community_id uuid not null,
      author_id uuid not null,
      created_at timestamptz not null,
      score int not null,
      hot double precision not null
    );
    insert into post_ranks (id, community_id, author_id, created_at, score, hot)
      select id, community_id, author_id, created_at, score, hot from posts where deleted_at is null;
    create index post_ranks_hot_idx on post_ranks (hot desc, id desc);
    create index post_ranks_top_idx on post_ranks (score desc, created_at desc, id desc);
    create index post_ranks_community_hot_idx on post_ranks (community_id, hot desc, id desc);
    create index post_ranks_community_top_idx on post_ranks (community_id, score desc, created_at desc, id desc);
    create index post_ranks_author_hot_idx on post_ranks (author_id, hot desc, id desc);
    create index post_ranks_author_top_idx on post_ranks (author_id, score desc, created_at desc, id desc);

    create function svc_post_ranks_insert() returns trigger language plpgsql as $$
    begin
      insert into post_ranks (id, community_id, author_id, created_at, score, hot)
        values (new.id, new.community_id, new.author_id, new.created_at, new.score, new.hot);
      return null;
    end $$;
    create trigger posts_ranks_insert after insert on posts for each row
      when (new.deleted_at is null) execute function svc_post_ranks_insert();

    create function svc_post_ranks_update() returns trigger language plpgsql as $$
    begin
      if new.deleted_at is not null then
        delete from post_ranks where id = new.id;
      elsif old.deleted_at is not null then
        insert into post_ranks (id, community_id, author_id, created_at, score, hot)
          values (new.id, new.community_id, new.author_id, new.created_at, new.score, new.hot);
      else
        update post_ranks set score = new.score, hot = new.hot, community_id = new.community_id,
                              author_id = new.author_id, created_at = new.created_at
         where id = new.id;
      end if;
      return null;
    end $$;
    create trigger posts_ranks_update after update of score, hot, deleted_at, community_id, author_id, created_at
      on posts for each row
      when (old.score is distinct from new.score or old.hot is distinct from new.hot
            or old.deleted_at is distinct from new.deleted_at or old.community_id is distinct from new.community_id
            or old.author_id is distinct from new.author_id or old.created_at is distinct from new.created_at)
      execute function svc_post_ranks_update();

    drop index posts_hot_idx;
    drop index posts_top_idx;
    drop index posts_community_hot_idx;
    drop index posts_community_top_idx;
    drop index posts_author_hot_idx;
    drop index posts_author_top_idx;
    alter table posts set (fillfactor = 85);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table posts reset (fillfactor);
    create index posts_hot_idx on posts (hot desc, id desc) where deleted_at is null;
    create index posts_top_idx on posts (score desc, created_at desc, id desc) where deleted_at is null;
    create index posts_community_hot_idx on posts (community_id, hot desc, id desc) where deleted_at is null;
    create index posts_community_top_idx on posts (community_id, score desc, created_at desc, id desc) where deleted_at is null;
    create index posts_author_hot_idx on posts (author_id, hot desc, id desc) where deleted_at is null;
    create index posts_author_top_idx on posts (author_id, score desc, created_at desc, id desc) where deleted_at is null;
    drop trigger posts_ranks_update on posts;
    drop trigger posts_ranks_insert on posts;
    drop function svc_post_ranks_update();
    drop function svc_post_ranks_insert();
    drop table post_ranks;
  `);
}
