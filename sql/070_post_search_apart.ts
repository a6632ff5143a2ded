import type { Knex } from 'knex';

/**
 * The search vector of a post moves to its own table. On the posts row it made every counter
 * update (a vote, a reaction, a comment) write a new row version with a copy of the vector and,
 * for a vote (score and hot are indexed, so never a HOT update), one GIN entry per lexeme of the
 * post: with 2 kB posts of ~300 distinct words such updates ran about 3 times slower (BENCHMARKS.md,
 * "Post counters"). Here it is written once, when the post is, by a trigger, so every path
 * that writes posts (API, CLI, seeds) keeps it, and updated only if the title, body or tags are.
 */
const VECTOR = `setweight(to_tsvector('english', new.title), 'A')
      || setweight(to_tsvector('english', svc_tags_text(new.tags)), 'A')
      || setweight(to_tsvector('english', new.body), 'B')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table post_search (
      post_id uuid primary key references posts(id) on delete cascade,
      search tsvector not null
    );
    insert into post_search (post_id, search) select id, search from posts;
    create index post_search_idx on post_search using gin (search);
    drop index if exists posts_search_idx;
    alter table posts drop column search;

    create function svc_post_search() returns trigger language plpgsql as $$
    begin
      insert into post_search (post_id, search) values (new.id, ${VECTOR})
        on conflict (post_id) do update set search = excluded.search;
      return null;
    end $$;
    create trigger posts_search_insert after insert on posts for each row execute function svc_post_search();
    create trigger posts_search_update after update of title, body, tags on posts for each row
      when (old.title is distinct from new.title or old.body is distinct from new.body or old.tags is distinct from new.tags)
      execute function svc_post_search();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists posts_search_update on posts;
    drop trigger if exists posts_search_insert on posts;
    drop function if exists svc_post_search();
    alter table posts add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A')
      || setweight(to_tsvector('english', svc_tags_text(tags)), 'A')
      || setweight(to_tsvector('english', body), 'B')
    ) stored;
    create index posts_search_idx on posts using gin (search);
    drop table if exists post_search;
  `);
}
