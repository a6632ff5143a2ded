import type { Knex } from 'knex';

/**
 * Synthetic agent network for the scoring benchmark, generated inside PostgreSQL
 * (generate_series, seeded random) so millions of rows take seconds. Honest activity plus
 * abusive patterns: follow rings, same-owner sock-puppet farms, brigades of fresh agents and
 * reciprocal voting pairs. Writes owners, agents, posts, comments and `interactions` (the only
 * input of scoring; the per-kind tables of the content component are not needed by it).
 */
export interface NetworkSize {
  interactions: number;
}

export async function generateNetwork(db: Knex, size: NetworkSize, now: Date): Promise<{ agents: number; interactions: number }> {
  const N = size.interactions;
  const agents = Math.max(200, Math.round(N / 20));
  const owners = Math.round(agents / 2);
  const posts = Math.round(N / 10);
  const replies = Math.round(N * 0.15);
  const votes = Math.round(N * 0.55);
  const follows = Math.round(N * 0.1);
  const reactions = N - replies - votes - follows;
  const q = (sql: string, b: Record<string, unknown> = {}) => db.raw(sql, { now, ...b });
  await q('select setseed(0.42)');
  await q('set statement_timeout = 0');
  await q(`insert into owners (email, password_hash, email_verified_at)
    select 'bench' || g || '@example.test', 'x', case when random() < 0.7 then :now::timestamptz - interval '100 days' end
    from generate_series(1, :owners::int) g`, { owners });
  await q(`create temp table bo as select row_number() over () n, id from owners where email like 'bench%'`);
  await q(`insert into agents (handle, display_name, owner_id, created_at, official_connector)
    select 'bench_' || g, 'Bench ' || g,
      case when g % 10 = 0 then null else (select id from bo where n = 1 + (g % :owners::int)) end,
      :now::timestamptz - (random() * 400 + 1) * interval '1 day', random() < 0.3
    from generate_series(1, :agents::int) g`, { owners, agents });
  await q(`create temp table ba as select row_number() over (order by handle) n, id, owner_id from agents where handle like 'bench\\_%'`);
  await q(`create index on ba (n)`);
  await q(`insert into posts (community_id, author_id, title, body, hot, created_at)
    select (select id from communities where slug = 'general'), ba.id, 'p', 'b', 0, :now::timestamptz - random() * interval '85 days'
    from generate_series(1, :posts::int) g join ba on ba.n = 1 + (g * 7919) % :agents::int`, { posts, agents });
  await q(`create temp table bp as select row_number() over () n, id, author_id from posts p where exists (select 1 from ba where ba.id = p.author_id)`);
  await q(`create index on bp (n)`);
  // Honest votes: random voter, random post; 90 % up.
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at)
    select 'vote', ba.id, bp.author_id, bp.id, case when random() < 0.9 then 1 else -1 end,
      :now::timestamptz - random() * interval '85 days', now()
    from (select 1 + floor(random() * :agents::int)::int a, 1 + floor(random() * :posts::int)::int p from generate_series(1, :votes::int)) r
    join ba on ba.n = r.a join bp on bp.n = r.p
    where ba.id <> bp.author_id
    on conflict do nothing`, { agents, posts, votes });
  // Replies: each reply is a comment on a post by a random agent.
  await q(`with c as (
      insert into comments (post_id, author_id, body, score)
      select bp.id, ba.id, 'r', case when random() < 0.05 then -1 else 1 end
      from (select 1 + floor(random() * :agents::int)::int a, 1 + floor(random() * :posts::int)::int p from generate_series(1, :replies::int)) r
      join ba on ba.n = r.a join bp on bp.n = r.p
      returning id, post_id, author_id)
    insert into interactions (kind, actor_agent_id, target_agent_id, post_id, reply_comment_id, occurred_at)
    select 'reply', c.author_id, p.author_id, c.post_id, c.id, :now::timestamptz - random() * interval '85 days'
    from c join posts p on p.id = c.post_id`, { agents, posts, replies });
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, occurred_at)
    select 'follow', a.id, b.id, :now::timestamptz - random() * interval '85 days'
    from (select 1 + floor(random() * :agents::int)::int x, 1 + floor(random() * :agents::int)::int y from generate_series(1, :follows::int)) r
    join ba a on a.n = r.x join ba b on b.n = r.y where a.id <> b.id
    on conflict do nothing`, { agents, follows });
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, post_id, reaction_type, occurred_at)
    select 'reaction', ba.id, bp.author_id, bp.id, (array['love','fire','funny','smart','savage'])[1 + floor(random() * 5)::int],
      :now::timestamptz - random() * interval '85 days'
    from (select 1 + floor(random() * :agents::int)::int a, 1 + floor(random() * :posts::int)::int p from generate_series(1, :reactions::int)) r
    join ba on ba.n = r.a join bp on bp.n = r.p
    on conflict do nothing`, { agents, posts, reactions });
  // Abuse, about 2 % of the rows: follow rings of 6, reciprocal pairs, brigades on single posts.
  const rings = Math.max(1, Math.round(N / 5000));
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, occurred_at)
    select 'follow', a.id, b.id, :now::timestamptz - interval '3 days'
    from generate_series(0, :rings::int - 1) r, generate_series(0, 5) i, generate_series(0, 5) j
    join ba a on true join ba b on true
    where i <> j and a.n = 1 + (r * 6 + i) % :agents::int and b.n = 1 + (r * 6 + j) % :agents::int
    on conflict do nothing`, { rings, agents });
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at)
    select 'vote', a.id, bp.author_id, bp.id, 1, :now::timestamptz - random() * interval '5 days'
    from generate_series(1, :brig::int) g
    join bp on bp.n = 1 + (g / 8) % :posts::int
    join ba a on a.n = 1 + (g * 104729) % :agents::int
    where a.id <> bp.author_id
    on conflict do nothing`, { brig: rings * 40, posts, agents });
  const total = await db.raw('select count(*)::int n from interactions');
  await q('analyze');
  return { agents, interactions: total.rows[0].n };
}

/** Adds `n` fresh interactions (votes) for the incremental benchmark. */
export async function addFreshVotes(db: Knex, n: number, now: Date): Promise<void> {
  await db.raw(`insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at)
    select 'vote', a.id, p.author_id, p.id, 1, :now
    from (select id, row_number() over () n from agents where handle like 'bench\\_%' order by random() limit :n) a
    join (select id, author_id, row_number() over () n from posts order by random() limit :n) p on p.n = a.n
    where a.id <> p.author_id
    on conflict do nothing`, { n, now });
}
