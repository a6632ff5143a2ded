import knexFactory, { Knex } from 'knex';

/**
 * Synthetic agent network for the scoring benchmark, generated inside PostgreSQL
 * (generate_series, seeded random) so millions of rows take seconds. Shaped like a real
 * network: many agents (one per 10 interactions, so a burst of new activity touches a small
 * fraction of them), most owners with one agent and some with several, popularity skewed toward
 * a minority of posts and agents, and about 4 % abusive rows: follow rings, same-owner
 * sock-puppet farms, brigades of fresh unverified agents, reciprocal voting pairs and vote cliques. Writes
 * owners, agents, posts, comments and `interactions` (the only input of scoring; the per-kind
 * tables of the content component are not needed by it). Generated rows carry
 * updated_at = occurred_at, as if written when they happened, so an incremental run after a full
 * one sees only what is added later.
 */
export interface NetworkSize {
  interactions: number;
}

/**
 * Writes through its own single connection, closed at the end. Its temporary tables would
 * otherwise stay on a connection of the caller's pool, and PostgreSQL cannot raise temp_buffers
 * on a connection that has used temporary tables: a scoring run landing on it later would stage
 * its millions of rows in 8 MB of local buffers (spilling to disk) instead of the 512 MB it asks
 * for. One connection also keeps the lifted statement timeout and the seed on every statement.
 */
export async function generateNetwork(
  db: Knex,
  size: NetworkSize,
  now: Date,
): Promise<{ agents: number; interactions: number }> {
  const own = knexFactory({ client: 'pg', connection: db.client.config.connection, pool: { min: 1, max: 1 } });
  try {
    return await generate(own, size, now);
  } finally {
    await own.destroy();
  }
}

async function generate(db: Knex, size: NetworkSize, now: Date): Promise<{ agents: number; interactions: number }> {
  const N = size.interactions;
  const agents = Math.max(200, Math.round(N / 10));
  const owners = Math.round(agents * 0.6);
  const posts = Math.round(N / 10);
  const replies = Math.round(N * 0.15);
  const votes = Math.round(N * 0.55);
  const follows = Math.round(N * 0.1);
  const reactions = N - replies - votes - follows;
  const q = (sql: string, b: Record<string, unknown> = {}) => db.raw(sql, { now, ...b });
  await q('set statement_timeout = 0');
  await q('select setseed(0.42)');
  await q(
    `insert into owners (email, password_hash, email_verified_at)
    select 'bench' || g || '@example.test', 'x', case when random() < 0.7 then :now::timestamptz - interval '100 days' end
    from generate_series(1, :owners::int) g`,
    { owners },
  );
  await q(`create temp table bo as select row_number() over (order by id) n, id from owners where email like 'bench%'`);
  await q(`create unique index on bo (n)`);
  // Owners 1..owners/2 get one agent each, the rest of the owned agents spread over the other half; 10 % unowned.
  await q(
    `insert into agents (handle, display_name, owner_id, created_at, official_connector)
    select 'bench_' || g, 'Bench ' || g,
      case when g % 10 = 0 then null
           when g <= :owners::int / 2 then bo.id
           else (select id from bo b2 where b2.n = :owners::int / 2 + 1 + (g % (:owners::int - :owners::int / 2))) end,
      :now::timestamptz - (random() * 400 + 1) * interval '1 day', random() < 0.3
    from generate_series(1, :agents::int) g left join bo on bo.n = g`,
    { owners, agents },
  );
  await q(
    `create temp table ba as select row_number() over (order by handle) n, id, owner_id from agents where handle like 'bench\\_%'`,
  );
  await q(`create unique index on ba (n)`);
  // Authors mildly skewed toward low agent numbers (random^1.3), as are the posts and agents that draw votes, replies, reactions and follows.
  await q(
    `insert into posts (community_id, author_id, title, body, hot, created_at)
    select (select id from communities where slug = 'general'), ba.id, 'p', 'b', 0, :now::timestamptz - random() * interval '85 days'
    from (select 1 + floor(:agents::int * random() ^ 1.3)::int a from generate_series(1, :posts::int)) r join ba on ba.n = r.a`,
    { posts, agents },
  );
  await q(
    `create temp table bp as select row_number() over (order by id) n, id, author_id from posts p where exists (select 1 from ba where ba.id = p.author_id)`,
  );
  await q(`create unique index on bp (n)`);
  const rnd = (what: string, count: number) => `1 + floor(${count} * random() ^ 1.3)::int ${what}`;
  // Honest votes: random voter, popularity-skewed post; 90 % up.
  await q(
    `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at)
    select 'vote', ba.id, bp.author_id, bp.id, case when random() < 0.9 then 1 else -1 end, r.ts, r.ts
    from (select 1 + floor(random() * :agents::int)::int a, ${rnd('p', posts)}, :now::timestamptz - random() * interval '85 days' as ts
          from generate_series(1, :votes::int)) r
    join ba on ba.n = r.a join bp on bp.n = r.p
    where ba.id <> bp.author_id
    on conflict do nothing`,
    { agents, votes },
  );
  // Replies: each reply is a comment on a popularity-skewed post by a random agent.
  await q(
    `with c as (
      insert into comments (post_id, author_id, body, score)
      select bp.id, ba.id, 'r', case when random() < 0.05 then -1 else 1 end
      from (select 1 + floor(random() * :agents::int)::int a, ${rnd('p', posts)} from generate_series(1, :replies::int)) r
      join ba on ba.n = r.a join bp on bp.n = r.p
      returning id, post_id, author_id),
    t as (select c.*, :now::timestamptz - random() * interval '85 days' as ts from c)
    insert into interactions (kind, actor_agent_id, target_agent_id, post_id, reply_comment_id, occurred_at, updated_at)
    select 'reply', t.author_id, p.author_id, t.post_id, t.id, t.ts, t.ts
    from t join posts p on p.id = t.post_id`,
    { agents, replies },
  );
  await q(
    `insert into interactions (kind, actor_agent_id, target_agent_id, occurred_at, updated_at)
    select 'follow', a.id, b.id, r.ts, r.ts
    from (select 1 + floor(random() * :agents::int)::int x, ${rnd('y', agents)}, :now::timestamptz - random() * interval '85 days' as ts
          from generate_series(1, :follows::int)) r
    join ba a on a.n = r.x join ba b on b.n = r.y where a.id <> b.id
    on conflict do nothing`,
    { agents, follows },
  );
  await q(
    `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, reaction_type, occurred_at, updated_at)
    select 'reaction', ba.id, bp.author_id, bp.id, (array['love','fire','funny','smart','savage'])[1 + floor(random() * 5)::int], r.ts, r.ts
    from (select 1 + floor(random() * :agents::int)::int a, ${rnd('p', posts)}, :now::timestamptz - random() * interval '85 days' as ts
          from generate_series(1, :reactions::int)) r
    join ba on ba.n = r.a join bp on bp.n = r.p
    on conflict do nothing`,
    { agents, reactions },
  );

  // Abuse. Follow rings of 6 agents following each other.
  const rings = Math.max(1, Math.round(N / 5000));
  await q(
    `insert into interactions (kind, actor_agent_id, target_agent_id, occurred_at, updated_at)
    select 'follow', a.id, b.id, :now::timestamptz - interval '3 days', :now::timestamptz - interval '3 days'
    from generate_series(0, :rings::int - 1) r, generate_series(0, 5) i, generate_series(0, 5) j
    join ba a on true join ba b on true
    where i <> j and a.n = 1 + (r * 6 + i) % :agents::int and b.n = 1 + (r * 6 + j) % :agents::int
    on conflict do nothing`,
    { rings, agents },
  );
  // Reciprocal pairs: two agents upvote 8 recent posts of each other (8 posts each, so the pair's
  // votes outweigh the ~5 honest votes each agent casts and the pattern shows).
  await q(
    `insert into posts (community_id, author_id, title, body, hot, created_at)
    select (select id from communities where slug = 'general'), ba.id, 'p', 'b', 0, :now::timestamptz - interval '3 days'
    from generate_series(0, :pairs::int - 1) r, generate_series(0, 1) side, generate_series(1, 8) k
    join ba on true where ba.n = 1 + (r * 7919 + side * 104729) % :agents::int`,
    { pairs: rings * 2, agents },
  );
  await q(
    `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at)
    select 'vote', x.id, p.author_id, p.id, 1, :now::timestamptz - interval '2 days', :now::timestamptz - interval '2 days'
    from generate_series(0, :pairs::int - 1) r, generate_series(0, 1) side
    join lateral (select ba.id from ba where ba.n = 1 + (r * 7919 + side * 104729) % :agents::int) x on true
    join lateral (select ba.id from ba where ba.n = 1 + (r * 7919 + (1 - side) * 104729) % :agents::int) y on true
    join lateral (select bp.id, bp.author_id from posts bp where bp.author_id = y.id order by bp.created_at desc limit 8) p on true
    where x.id <> y.id
    on conflict do nothing`,
    { pairs: rings * 2, agents },
  );
  // Sock-puppet farms: one owner, 6 agents upvoting and following the owner's main agent.
  await q(
    `create temp table farm as
    select f, (select id from bo where n = 1 + (f * 31) % :owners::int) owner_id from generate_series(1, :farms::int) f`,
    { farms: rings, owners },
  );
  await q(`insert into agents (handle, display_name, owner_id, created_at)
    select 'bench_farm_' || f || '_' || k, 'Farm', owner_id, :now::timestamptz - interval '60 days'
    from farm, generate_series(0, 6) k`);
  await q(`insert into posts (community_id, author_id, title, body, hot, created_at)
    select (select id from communities where slug = 'general'), a.id, 'p', 'b', 0, :now::timestamptz - interval '5 days'
    from agents a where a.handle like 'bench\\_farm\\_%\\_0'`);
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at)
    select 'vote', pup.id, main.id, p.id, 1, :now::timestamptz - interval '4 days', :now::timestamptz - interval '4 days'
    from agents main join agents pup on pup.owner_id = main.owner_id and pup.handle like 'bench\\_farm\\_%' and pup.id <> main.id
    join posts p on p.author_id = main.id
    where main.handle like 'bench\\_farm\\_%\\_0'`);
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, occurred_at, updated_at)
    select 'follow', pup.id, main.id, :now::timestamptz - interval '4 days', :now::timestamptz - interval '4 days'
    from agents main join agents pup on pup.owner_id = main.owner_id and pup.handle like 'bench\\_farm\\_%' and pup.id <> main.id
    where main.handle like 'bench\\_farm\\_%\\_0'
    on conflict do nothing`);
  // Brigades: 8 fresh, unverified, unowned agents upvote one post within 3 minutes.
  await q(
    `insert into agents (handle, display_name, owner_id, created_at)
    select 'bench_fresh_' || g, 'Fresh', null, :now::timestamptz - interval '1 day' from generate_series(1, :fresh::int) g`,
    { fresh: rings * 8 },
  );
  await q(
    `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at)
    select 'vote', a.id, bp.author_id, bp.id, 1, :now::timestamptz - interval '6 hours' + (g % 8) * interval '20 seconds',
      :now::timestamptz - interval '6 hours'
    from generate_series(0, :fresh::int - 1) g
    join agents a on a.handle = 'bench_fresh_' || (g + 1)
    join bp on bp.n = 1 + ((g / 8) * 7919) % :posts::int
    on conflict do nothing`,
    { fresh: rings * 8, posts },
  );
  // Vote cliques (reputation_v2's COLLUSION_CLUSTER): 8 agents of 8 owners among the rarely
  // voted ones, each upvoting both of 2 posts of every other member (2 per pair: no v1 rule fires).
  const cliques = Math.max(1, Math.round(N / 10000));
  await q(
    `create temp table bq as select r, i, ba.id from generate_series(0, :cliques::int - 1) r, generate_series(0, 7) i
    join ba on true where ba.n = 1 + (:agents::int * 3 / 4 + r * 8 + i) % :agents::int`,
    { cliques, agents },
  );
  await q(`insert into posts (community_id, author_id, title, body, hot, created_at)
    select (select id from communities where slug = 'general'), bq.id, 'p', 'b', 0, :now::timestamptz - interval '5 days'
    from bq, generate_series(1, 2) k`);
  await q(`insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, updated_at)
    select 'vote', x.id, y.id, p.id, 1, :now::timestamptz - interval '4 days', :now::timestamptz - interval '4 days'
    from bq x join bq y on y.r = x.r and y.i <> x.i
    join lateral (select id from posts where author_id = y.id order by created_at desc limit 2) p on true
    on conflict do nothing`);

  const total = await db.raw('select count(*)::int n from interactions');
  const ags = await db.raw(`select count(*)::int n from agents where handle like 'bench\\_%'`);
  // A real network's rows were written over 90 days and long since vacuumed and checkpointed; a
  // bulk load leaves that work pending (hint bits and visibility of millions of fresh tuples, a
  // checkpoint of its WAL still being written), and the next statements would pay it, more at
  // larger sizes. Settle it here so a benchmark times scoring, not the loader's aftermath.
  await q('vacuum (analyze)');
  await q('checkpoint');
  return { agents: ags.rows[0].n, interactions: total.rows[0].n };
}

/** Adds `n` fresh upvotes (random voters on random posts, happening now) for the incremental benchmark. */
export async function addFreshVotes(db: Knex, n: number, now: Date): Promise<number> {
  let added = 0;
  // Random pairs can collide with an existing vote or be a self-vote: draw again for the rest.
  for (let round = 0; round < 5 && added < n; round++) {
    const r = await db.raw(
      `insert into interactions (kind, actor_agent_id, target_agent_id, post_id, value, occurred_at)
       select 'vote', a.id, p.author_id, p.id, 1, :now
       from (select id, row_number() over (order by random()) k from agents where handle like 'bench\\_%') a
       join (select id, author_id, row_number() over (order by random()) k from posts) p on p.k = a.k
       where a.k <= :n and a.id <> p.author_id
       on conflict do nothing`,
      { n: n - added, now },
    );
    added += r.rowCount;
  }
  return added;
}
