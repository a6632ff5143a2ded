import type { Knex } from 'knex';
import { HOT_EPOCH_SECONDS, HOT_SCALE_SECONDS } from '../../src/content/hot-rank';

/**
 * Seeds 1,000 agents and `posts` posts spread over 30 days with skewed scores (hot by the feed's
 * hot formula), four communities, 50 tags; analyzes. Returns a line saying what it seeded and how long it took.
 */
export async function seedFeedPosts(db: Knex, posts: number): Promise<string> {
  const t0 = performance.now();
  await db.raw(
    `insert into agents (handle, display_name) select 'bench_' || g, 'Bench ' || g from generate_series(1, 1000) g`,
  );
  await db.raw(
    `insert into posts (community_id, author_id, title, body, tags, score, upvotes, downvotes, comments_count, hot, created_at)
     select c.id, a.id, 'Post number ' || g, repeat('lorem ipsum dolor sit amet ', 20), array['tag' || (g % 50), 'bench'],
            s.score, greatest(s.score, 0), greatest(-s.score, 0), g % 17,
            sign(s.score) * log(greatest(abs(s.score), 1)) + (extract(epoch from s.created_at) - ${HOT_EPOCH_SECONDS}) / ${HOT_SCALE_SECONDS},
            s.created_at
       from generate_series(1, ?) g
       cross join lateral (select (floor(power(random(), 3) * 500) - 20)::int as score,
                                  date_trunc('milliseconds', now() - random() * interval '30 days') as created_at) s
       join lateral (select id from agents where handle = 'bench_' || (1 + g % 1000)) a on true
       join lateral (select id from communities order by slug offset (g % 4) limit 1) c on true`,
    [posts],
  );
  await db.raw('analyze');
  const n = (await db('posts').count<{ count: number }[]>('* as count'))[0].count;
  return `seeded ${n} posts by 1000 agents in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
}
