import type { Knex } from 'knex';

/**
 * `post_tag_ranks`: the rank keys of post_ranks once per (post, tag), with a hot and a top index
 * per tag, so a hot or top page filtered by tag alone walks only that tag's posts. Walked on
 * post_ranks' hot or top index and filtered on `tags`, a tag on 1 post in 50 cost about 700 rank
 * rows read (most on a page of their own) for a page of 20; here it reads 21 index entries.
 *
 * The rows are written by post_ranks' own triggers (sql/115, 117), in the transaction of the
 * change, one function call per post: a new live post gets a row per tag, a change of score or
 * hot copies them (a vote: a row per tag of the post, at most 5, each with its 3 index entries), an
 * edit of tags, author or creation time rewrites them, and a deleted rank row takes them (foreign
 * key). Seeds that write post_ranks with triggers off fill them too (bench/lib/copy-seed.ts).
 */
const RANK_ROW = `(id, community_id, author_id, created_at, score, hot, tags)
        values (new.id, new.community_id, new.author_id, new.created_at, new.score, new.hot, new.tags)`;
const TAG_ROWS = `insert into post_tag_ranks (id, tag, author_id, created_at, score, hot)
        select distinct new.id, t.tag, new.author_id, new.created_at, new.score, new.hot from unnest(new.tags) t(tag)`;

/**
 * post_ranks' trigger functions (sql/115, 117); `tagRows`: also keeping post_tag_ranks in step
 * (this migration's up), or not (its down: sql/117's functions).
 */
function rankFunctions(tagRows: boolean): string {
  return `
    create or replace function svc_post_ranks_insert() returns trigger language plpgsql as $$
    begin
      insert into post_ranks ${RANK_ROW};
      ${tagRows ? `${TAG_ROWS};` : ''}
      return null;
    end $$;

    create or replace function svc_post_ranks_update() returns trigger language plpgsql as $$
    begin
      if new.deleted_at is not null then
        delete from post_ranks where id = new.id;
      elsif old.deleted_at is not null then
        insert into post_ranks ${RANK_ROW};
        ${tagRows ? `${TAG_ROWS};` : ''}
      else
        update post_ranks set score = new.score, hot = new.hot, community_id = new.community_id,
                              author_id = new.author_id, created_at = new.created_at, tags = new.tags
         where id = new.id;
        ${
          tagRows
            ? `if old.tags is distinct from new.tags or old.author_id is distinct from new.author_id
           or old.created_at is distinct from new.created_at then
          delete from post_tag_ranks where id = new.id;
          ${TAG_ROWS};
        elsif cardinality(new.tags) > 0 and (old.score is distinct from new.score or old.hot is distinct from new.hot) then
          update post_tag_ranks set score = new.score, hot = new.hot where id = new.id;
        end if;`
            : ''
        }
      end if;
      return null;
    end $$;`;
}

export async function up(knex: Knex): Promise<void> {
  // A row per tag of every live post and two index builds: not bounded by the pool's statement limit.
  await knex.raw('set local statement_timeout = 0');
  await knex.raw(`
    create table post_tag_ranks (
      id uuid not null references post_ranks(id) on delete cascade,
      tag text not null,
      author_id uuid not null,
      created_at timestamptz not null,
      score int not null,
      hot double precision not null,
      primary key (id, tag)
    );
    insert into post_tag_ranks (id, tag, author_id, created_at, score, hot)
      select distinct k.id, t.tag, k.author_id, k.created_at, k.score, k.hot
        from post_ranks k cross join lateral unnest(k.tags) t(tag);
    create index post_tag_ranks_hot_idx on post_tag_ranks (tag, hot desc, id desc);
    create index post_tag_ranks_top_idx on post_tag_ranks (tag, score desc, created_at desc, id desc);

    ${rankFunctions(true)}
  `);
}

/** sql/117's functions. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ${rankFunctions(false)}
    drop table post_tag_ranks;
  `);
}
