import type { Knex } from 'knex';

/**
 * `post_ranks.tags`, with its GIN index: a hot or top page filtered by tag then reads the tag
 * beside the rank keys, as it did on `posts` before sql/115. Filtered on `posts.tags` across the
 * join, each rank entry walked cost a primary-key lookup of its post (the uncached top page of a
 * tag on 1 post in 30: PostgreSQL 1.2 -> 3.0 ms); a rare tag takes the GIN index either way. An
 * edit is the only write of tags, so votes copy the column in the rank row they write anyway.
 */
const ROW = `(id, community_id, author_id, created_at, score, hot, tags)
        values (new.id, new.community_id, new.author_id, new.created_at, new.score, new.hot, new.tags)`;

export async function up(knex: Knex): Promise<void> {
  // Every rank row rewritten and a GIN index built: the pool's per-statement limit stopped it at
  // a million posts (30 s), so it does not apply to this migration's transaction.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    alter table post_ranks add column tags text[] not null default '{}';
    update post_ranks k set tags = p.tags from posts p where p.id = k.id and p.tags <> '{}';
    create index post_ranks_tags_idx on post_ranks using gin (tags);

    create or replace function svc_post_ranks_insert() returns trigger language plpgsql as $$
    begin
      insert into post_ranks ${ROW};
      return null;
    end $$;

    create or replace function svc_post_ranks_update() returns trigger language plpgsql as $$
    begin
      if new.deleted_at is not null then
        delete from post_ranks where id = new.id;
      elsif old.deleted_at is not null then
        insert into post_ranks ${ROW};
      else
        update post_ranks set score = new.score, hot = new.hot, community_id = new.community_id,
                              author_id = new.author_id, created_at = new.created_at, tags = new.tags
         where id = new.id;
      end if;
      return null;
    end $$;
    drop trigger posts_ranks_update on posts;
    create trigger posts_ranks_update after update of score, hot, deleted_at, community_id, author_id, created_at, tags
      on posts for each row
      when (old.score is distinct from new.score or old.hot is distinct from new.hot
            or old.deleted_at is distinct from new.deleted_at or old.community_id is distinct from new.community_id
            or old.author_id is distinct from new.author_id or old.created_at is distinct from new.created_at
            or old.tags is distinct from new.tags)
      execute function svc_post_ranks_update();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger posts_ranks_update on posts;
    create trigger posts_ranks_update after update of score, hot, deleted_at, community_id, author_id, created_at
      on posts for each row
      when (old.score is distinct from new.score or old.hot is distinct from new.hot
            or old.deleted_at is distinct from new.deleted_at or old.community_id is distinct from new.community_id
            or old.author_id is distinct from new.author_id or old.created_at is distinct from new.created_at)
      execute function svc_post_ranks_update();
    create or replace function svc_post_ranks_update() returns trigger language plpgsql as $$
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
    create or replace function svc_post_ranks_insert() returns trigger language plpgsql as $$
    begin
      insert into post_ranks (id, community_id, author_id, created_at, score, hot)
        values (new.id, new.community_id, new.author_id, new.created_at, new.score, new.hot);
      return null;
    end $$;
    drop index post_ranks_tags_idx;
    alter table post_ranks drop column tags;
  `);
}
