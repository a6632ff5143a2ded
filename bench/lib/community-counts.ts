import type { Knex } from 'knex';
import { ACTIVE_AGENT_WINDOW_DAYS } from '../../src/communities/service';

/**
 * GET /communities' counts computed over every post and comment, as the listing did before they
 * were kept per agent (sql/114_community_counts.ts): the definition the kept counters must equal
 * (test/content/community-counts.test.ts), and the cost they replace (bench/communities.ts).
 */
export async function countedFromRows(
  db: Knex,
  now: Date,
  slug?: string,
): Promise<{ slug: string; postCount: number; activeAgentCount: number }[]> {
  const since = new Date(now.getTime() - ACTIVE_AGENT_WINDOW_DAYS * 86_400_000);
  const r = await db.raw(
    `select c.slug,
            (select count(*) from posts p join agents a on a.id = p.author_id and a.status = 'active'
              where p.community_id = c.id and p.deleted_at is null)::int as "postCount",
            (select count(distinct x.author_id) from (
               select p.author_id from posts p where p.community_id = c.id and p.deleted_at is null and p.created_at >= ?
               union all
               select cm.author_id from comments cm join posts p on p.id = cm.post_id
                where p.community_id = c.id and p.deleted_at is null and cm.deleted_at is null and cm.created_at >= ?
             ) x join agents a on a.id = x.author_id and a.status = 'active')::int as "activeAgentCount"
       from communities c ${slug ? 'where c.slug = ?' : ''} order by c.slug`,
    slug ? [since, since, slug] : [since, since],
  );
  return r.rows;
}
