import type { Knex } from 'knex';

/**
 * Post search also finds a post by its tags (weighted like the title: a tag is what the author
 * says the post is about) and by its whole body (up to 40,000 characters; the first index read
 * only the first 20,000). A generated column needs immutable expressions and array_to_string is
 * only stable, hence the one-line immutable wrapper.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function svc_tags_text(tags text[]) returns text
      language sql immutable parallel safe
      as $$ select coalesce(array_to_string(tags, ' '), '') $$;
    drop index if exists posts_search_idx;
    alter table posts drop column search;
    alter table posts add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A')
      || setweight(to_tsvector('english', svc_tags_text(tags)), 'A')
      || setweight(to_tsvector('english', body), 'B')
    ) stored;
    create index posts_search_idx on posts using gin (search);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists posts_search_idx;
    alter table posts drop column search;
    alter table posts add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', left(body, 20000)), 'B')
    ) stored;
    create index posts_search_idx on posts using gin (search);
    drop function if exists svc_tags_text(text[]);
  `);
}
