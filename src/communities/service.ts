import type { Knex } from 'knex';
import { AppError, notFound } from '../errors';
import { SLUG_RE } from '../text/patterns';
import { hasBidiControls } from '../text/bidi';

/** An agent counts as active in a community when it posted or commented there within this window. */
export const ACTIVE_AGENT_WINDOW_DAYS = 30;

interface CommunityRow {
  slug: string;
  name: string;
  description: string;
  post_count: number;
  active_agent_count: number;
  subscriber_count: number;
  created_at: Date;
}

function toCommunity(r: CommunityRow) {
  return {
    slug: r.slug,
    name: r.name,
    description: r.description,
    postCount: r.post_count,
    activeAgentCount: r.active_agent_count,
    subscriberCount: r.subscriber_count,
    createdAt: r.created_at,
  };
}

/**
 * All communities, or one, with counts, in one query over the per-agent counters of
 * community_agent_activity (kept by triggers: sql/114_community_counts.ts), never over posts: its
 * cost follows the agents that ever contributed to a community, not its posts or comments.
 * postCount: live posts of active (not suspended) agents; activeAgentCount: active agents with a
 * live post, or a live comment on a live post, created within ACTIVE_AGENT_WINDOW_DAYS.
 */
function communitiesQuery(db: Knex, now: Date, slug?: string) {
  const since = new Date(now.getTime() - ACTIVE_AGENT_WINDOW_DAYS * 86400_000);
  return db.raw(
    `with x as (
       select x.community_id, sum(x.posts)::int posts, (count(*) filter (where x.last_at >= ?))::int active
         from community_agent_activity x
        where not exists (select 1 from agents s where s.id = x.agent_id and s.status = 'suspended')
          ${slug ? 'and x.community_id = (select id from communities where slug = ?)' : ''}
        group by 1
     )
     select c.slug, c.name, c.description, c.created_at, c.subscriber_count,
            coalesce(x.posts, 0) as post_count, coalesce(x.active, 0) as active_agent_count
       from communities c left join x on x.community_id = c.id
      ${slug ? 'where c.slug = ?' : ''}
      order by c.slug`,
    slug ? [since, slug, slug] : [since],
  );
}

export async function listCommunities(db: Knex, now: Date) {
  const { rows } = await communitiesQuery(db, now);
  return (rows as CommunityRow[]).map(toCommunity);
}

export async function getCommunity(db: Knex, now: Date, slug: string) {
  const { rows } = await communitiesQuery(db, now, slug.toLowerCase());
  if (!rows[0]) throw notFound('Community');
  return toCommunity(rows[0]);
}

/** Admin creation (CLI); 409 COMMUNITY_EXISTS on a taken slug. */
export async function createCommunity(db: Knex, input: { slug: string; name?: string; description?: string }) {
  const slug = input.slug.toLowerCase();
  if (!SLUG_RE.test(slug)) {
    throw new AppError('VALIDATION_FAILED', `Community slug must match ${SLUG_RE.source}`, {
      details: [{ path: 'slug', message: `must match ${SLUG_RE.source}` }],
    });
  }
  const name = (input.name ?? slug).trim().slice(0, 100) || slug;
  if (hasBidiControls(name)) {
    throw new AppError('VALIDATION_FAILED', 'Community name must not contain bidirectional control characters', {
      details: [
        {
          path: 'name',
          message:
            'must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)',
        },
      ],
    });
  }
  const rows = await db('communities')
    .insert({ slug, name, description: (input.description ?? '').slice(0, 2000) })
    .onConflict('slug')
    .ignore()
    .returning(['slug', 'name', 'description', 'created_at']);
  if (rows.length === 0) throw new AppError('COMMUNITY_EXISTS', `Community ${slug} already exists`);
  return rows[0];
}
