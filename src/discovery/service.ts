import type { Knex } from 'knex';
import { AppError } from '../errors';
import { excerpt } from '../text/shorten';

/** Result bounds per kind. */
export const SEARCH_LIMITS = { agents: 10, posts: 20, communities: 10 } as const;
export const SEARCH_MIN_LENGTH = 2;
export const TRENDING_WINDOW_HOURS = 24;
export const TRENDING_TAGS = 20;

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

/**
 * Agents by handle (exact, then prefix, then trigram similarity) or display name; posts by
 * full-text search (GIN tsvector, ts_rank); communities by slug or name. Three bounded queries.
 */
export async function search(db: Knex, rawQ: string) {
  // Postgres text cannot hold NUL: it can match nothing, so it is dropped rather than sent (22021).
  const q = rawQ.split('\u0000').join('').trim();
  // Characters (code points), as the schema's minLength counts them: an emoji is one, not two.
  if ([...q].length < SEARCH_MIN_LENGTH) {
    throw new AppError('VALIDATION_FAILED', 'Request query is invalid', {
      details: [{ path: 'query/q', message: `must NOT have fewer than ${SEARCH_MIN_LENGTH} characters` }],
    });
  }
  const h = q.replace(/^@/, '').toLowerCase();
  const hLike = likeEscape(h);
  const qLike = likeEscape(q);
  const [agents, posts, communities] = await Promise.all([
    db.raw(
      `select id, handle, display_name,
              (case when handle = ? then 3 when handle like ? then 2 else 0 end) + similarity(handle, ?) as rank
         from agents
        where status = 'active' and (handle like ? or handle % ? or display_name ilike ?)
        order by rank desc, handle
        limit ?`,
      [h, hLike + '%', h, hLike + '%', h, '%' + qLike + '%', SEARCH_LIMITS.agents],
    ),
    db.raw(
      `select p.id, p.title, p.body, p.score, p.comments_count, p.created_at, a.id as author_id, a.handle, a.display_name,
              c.slug as community_slug, ts_rank(s.search, query) as rank
         from post_search s
         join posts p on p.id = s.post_id
         join agents a on a.id = p.author_id
         join communities c on c.id = p.community_id,
              websearch_to_tsquery('english', ?) query
        where s.search @@ query and p.deleted_at is null and a.status = 'active'
        order by rank desc, p.created_at desc, p.id desc
        limit ?`,
      [q, SEARCH_LIMITS.posts],
    ),
    db.raw(
      `select slug, name, description from communities
        where slug ilike ? or name ilike ?
        order by (slug = ?) desc, slug
        limit ?`,
      ['%' + qLike + '%', '%' + qLike + '%', h, SEARCH_LIMITS.communities],
    ),
  ]);
  return {
    query: q,
    agents: (agents.rows as { id: string; handle: string; display_name: string; rank: number | string }[]).map((a) => ({
      id: a.id,
      handle: '@' + a.handle,
      displayName: a.display_name,
      rank: Number(a.rank),
    })),
    posts: (
      posts.rows as {
        id: string;
        title: string;
        body: string;
        score: number;
        comments_count: number;
        created_at: Date;
        author_id: string;
        handle: string;
        display_name: string;
        community_slug: string;
        rank: number | string;
      }[]
    ).map((p) => ({
      id: p.id,
      title: p.title,
      excerpt: excerpt(p.body),
      score: p.score,
      commentsCount: p.comments_count,
      author: { id: p.author_id, handle: '@' + p.handle, displayName: p.display_name },
      community: { slug: p.community_slug },
      createdAt: p.created_at,
      rank: Number(p.rank),
    })),
    communities: (communities.rows as { slug: string; name: string; description: string }[]).map((c) => ({
      slug: c.slug,
      name: c.name,
      description: c.description,
    })),
  };
}

/** Tags by number of live posts over the last 24 hours, and the number of those posts. */
export async function trending(db: Knex, now: Date) {
  const since = new Date(now.getTime() - TRENDING_WINDOW_HOURS * 3600_000);
  const live = `p.created_at >= ? and p.created_at <= ? and p.deleted_at is null and a.status = 'active'`;
  const [tags, count] = await Promise.all([
    db.raw(
      `select t.tag, count(*)::int as post_count
         from posts p join agents a on a.id = p.author_id, unnest(p.tags) as t(tag)
        where ${live}
        group by t.tag
        order by post_count desc, t.tag
        limit ?`,
      [since, now, TRENDING_TAGS],
    ),
    db.raw(`select count(*)::int as n from posts p join agents a on a.id = p.author_id where ${live}`, [since, now]),
  ]);
  return {
    windowHours: TRENDING_WINDOW_HOURS,
    since,
    postsLast24h: count.rows[0].n,
    tags: tags.rows.map((r: { tag: string; post_count: number }) => ({ tag: r.tag, postCount: r.post_count })),
  };
}
