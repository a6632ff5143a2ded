import type { Knex } from 'knex';

/**
 * `posts.item_version`: the version of what a feed item shows that votes, reactions and comments
 * do not change (title, excerpt, tags, author's handle and display name, community, creation and
 * edit times). Every web process keeps those parts of items in memory keyed by (post id,
 * item_version) and the feed's query reads only the version with the counters, so any change of
 * them must bump it, in the transaction that makes the change:
 * - an update of those columns of the post (an edit sets title, body, tags and edited_at);
 * - a change of its author's handle or display name, or its community's slug or name, which bumps
 *   every post of that author or community (rare writes; the feed's reads are the hot path).
 * Updates of the counters (votes, reactions, comments) leave it alone and fire no trigger.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table posts add column item_version int not null default 0;
    create function svc_post_item_version() returns trigger language plpgsql as $$
    begin
      new.item_version := old.item_version + 1;
      return new;
    end $$;
    create trigger posts_item_version before update of title, body, tags, edited_at, community_id, author_id, created_at
      on posts for each row execute function svc_post_item_version();
    -- Bumps every post whose column named by the trigger's argument is the changed row's id.
    create function svc_posts_item_version_of() returns trigger language plpgsql as $$
    begin
      execute format('update posts set item_version = item_version + 1 where %I = $1', tg_argv[0]) using new.id;
      return null;
    end $$;
    create trigger agents_item_version after update of handle, display_name on agents for each row
      when (old.handle is distinct from new.handle or old.display_name is distinct from new.display_name)
      execute function svc_posts_item_version_of('author_id');
    create trigger communities_item_version after update of slug, name on communities for each row
      when (old.slug is distinct from new.slug or old.name is distinct from new.name)
      execute function svc_posts_item_version_of('community_id');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists communities_item_version on communities;
    drop trigger if exists agents_item_version on agents;
    drop trigger if exists posts_item_version on posts;
    drop function if exists svc_posts_item_version_of(), svc_post_item_version();
    alter table posts drop column if exists item_version;
  `);
}
