import knexFactory, { Knex } from 'knex';
import {
  copyRows,
  fillPostRanks,
  keepCommunityCounts,
  NULL,
  rng,
  uuidOf,
  withoutSecondaryIndexes,
} from '../lib/copy-seed';
import { DAY_MS, WEIGHTS } from '../../src/scoring/policy';
import { ensureMonthPartitions } from '../../src/db/partitions';
import { INTERACTION_PARTITIONS } from '../../src/content/interaction-partitions';

/**
 * Synthetic agent network for the scoring benchmark, made in Node from a seeded generator and
 * streamed by COPY: the same seed and size give the same rows (ids included) on every run.
 * Shaped like a real network: many agents (one per 10 interactions, so a burst of new activity
 * touches a small fraction of them), most owners with one agent and some with several,
 * popularity skewed toward a minority of posts and agents, and about 4 % abusive rows: follow
 * rings, same-owner sock-puppet farms, brigades of fresh unverified agents, reciprocal voting
 * pairs and vote cliques. Writes owners, agents, posts, comments and `interactions` (the only
 * input of scoring; the per-kind tables of the content component and the posts' search rows are
 * not needed by it). Honest interactions are spread over the whole scoring window, so every
 * stretch of time leaves it a slice; generated rows carry updated_at = occurred_at, as if written
 * when they happened, so an incremental run after a full one sees only what is added later.
 */
export interface NetworkSize {
  interactions: number;
  /** Default 42. */
  seed?: number;
}

const HOUR_MS = 3_600_000;
const REACTIONS = ['love', 'fire', 'funny', 'smart', 'savage'];
/** Per table, so every table's ids are a bijection of its row numbers (see uuidOf). */
const TABLE = { owner: 1, agent: 2, post: 3, comment: 4 };

/** One generated network, which goes on producing activity of the same shape. */
export interface Network {
  agents: number;
  interactions: number;
  /**
   * Adds `n` interactions of the generated mix (votes, replies with their comments, follows,
   * reactions; none repeating an existing key), happening between `from` and `to`, written now
   * (updated_at is the database clock, as a real write's). Returns how many were added.
   */
  addActivity(db: Knex, n: number, from: Date, to: Date): Promise<number>;
}

/** Shares of the generated mix; the rest are reactions. */
const MIX = { replies: 0.15, votes: 0.55, follows: 0.1 };

class Generator {
  readonly rand: () => number;
  readonly agentIds: string[] = [];
  readonly postIds: string[] = [];
  /** Agent number of each post's author. */
  readonly postAuthor: number[] = [];
  /** Numbers of the agents and posts honest activity draws from. */
  honestAgents = 0;
  honestPosts = 0;
  comments = 0;
  /** Keys taken, as interaction_keys sees them: (actor, post) per kind, (actor, target). */
  readonly votes = new Set<number>();
  readonly reactions = new Set<number>();
  readonly follows = new Set<number>();
  readonly salt: number;

  constructor(seed: number) {
    this.rand = rng(seed);
    this.salt = seed * 16;
  }

  agent(handle: string, ownerId: string | null, created: Date, official: boolean): string {
    const id = uuidOf(this.salt + TABLE.agent, this.agentIds.length);
    this.agentIds.push(id);
    return `${id}\t${handle}\tBench\t${ownerId ?? NULL}\t${created.toISOString()}\t${official ? 't' : 'f'}`;
  }

  post(author: number, created: Date, community: string): string {
    const id = uuidOf(this.salt + TABLE.post, this.postIds.length);
    this.postIds.push(id);
    this.postAuthor.push(author);
    return `${id}\t${community}\t${this.agentIds[author]}\tp\tb\t0\t${created.toISOString()}`;
  }

  /** Popularity: low numbers drawn more often (random^1.3), as the minority of posts and agents that draw most activity. */
  skewed(count: number): number {
    return Math.min(count - 1, Math.floor(count * this.rand() ** 1.3));
  }

  uniform(count: number): number {
    return Math.floor(this.rand() * count);
  }

  /** A key of (actor, post) or (actor, target) for the sets above: exact below 2^53. */
  pairKey(a: number, b: number): number {
    return a * 4_294_967_296 + b;
  }

  /** Takes a vote or reaction key if free. */
  take(set: Set<number>, actor: number, other: number): boolean {
    const k = this.pairKey(actor, other);
    if (set.has(k)) return false;
    set.add(k);
    return true;
  }
}

/** One interaction row of `copy interactions (...)`; `updated` null leaves it to the database clock. */
function row(
  g: Generator,
  kind: string,
  actor: number,
  target: number,
  post: number | null,
  reply: string | null,
  value: number,
  reaction: string | null,
  at: Date,
  updated: Date | null,
): string {
  const ts = at.toISOString();
  const cols = [
    kind,
    g.agentIds[actor],
    g.agentIds[target],
    post === null ? NULL : g.postIds[post],
    reply ?? NULL,
    value,
    reaction ?? NULL,
    ts,
  ];
  if (updated) cols.push(updated === at ? ts : updated.toISOString());
  return cols.join('\t');
}

const INTERACTION_COLS =
  'kind, actor_agent_id, target_agent_id, post_id, reply_comment_id, value, reaction_type, occurred_at';

/**
 * The honest mix: `n` interactions between `from` and `from + span` (uniform), as two row
 * generators: the replies' comments, then the interactions (votes, replies, follows, reactions).
 */
function honest(g: Generator, n: number, from: number, span: number, updated: boolean) {
  const replies = Math.round(n * MIX.replies);
  const votes = Math.round(n * MIX.votes);
  const follows = Math.round(n * MIX.follows);
  const reactions = n - replies - votes - follows;
  const A = g.honestAgents;
  const P = g.honestPosts;
  const when = () => new Date(Math.floor(from + g.rand() * span));
  // Replies are drawn first: their comments are written before the interactions that refer to them.
  const rActor = new Int32Array(replies);
  const rPost = new Int32Array(replies);
  const rAt = new Float64Array(replies);
  const rScore = new Int8Array(replies);
  const firstComment = g.comments;
  for (let i = 0; i < replies; i++) {
    rActor[i] = g.uniform(A);
    rPost[i] = g.skewed(P);
    rAt[i] = Math.floor(from + g.rand() * span);
    // LOW_SCORE_REPLY needs some replies scored below zero.
    rScore[i] = g.rand() < 0.05 ? -1 : 1;
  }
  g.comments += replies;
  const commentId = (i: number) => uuidOf(g.salt + TABLE.comment, firstComment + i);
  function* comments() {
    for (let i = 0; i < replies; i++)
      yield `${commentId(i)}\t${g.postIds[rPost[i]]}\t${g.agentIds[rActor[i]]}\tr\t${rScore[i]}\t${new Date(rAt[i]).toISOString()}`;
  }
  function* rows() {
    // Honest votes: random voter, popularity-skewed post, never one's own; 90 % up. A drawn key
    // already taken is drawn again (as a real voter would vote elsewhere).
    for (let i = 0; i < votes;) {
      const actor = g.uniform(A);
      const post = g.skewed(P);
      const value = g.rand() < 0.9 ? 1 : -1;
      const at = when();
      if (actor === g.postAuthor[post] || !g.take(g.votes, actor, post)) continue;
      i++;
      yield row(g, 'vote', actor, g.postAuthor[post], post, null, value, null, at, updated ? at : null);
    }
    for (let i = 0; i < replies; i++) {
      const at = new Date(rAt[i]);
      yield row(
        g,
        'reply',
        rActor[i],
        g.postAuthor[rPost[i]],
        rPost[i],
        commentId(i),
        1,
        null,
        at,
        updated ? at : null,
      );
    }
    for (let i = 0; i < follows;) {
      const actor = g.uniform(A);
      const target = g.skewed(A);
      const at = when();
      if (actor === target || !g.take(g.follows, actor, target)) continue;
      i++;
      yield row(g, 'follow', actor, target, null, null, 1, null, at, updated ? at : null);
    }
    for (let i = 0; i < reactions;) {
      const actor = g.uniform(A);
      const post = g.skewed(P);
      const type = REACTIONS[g.uniform(REACTIONS.length)];
      const at = when();
      if (!g.take(g.reactions, actor, post)) continue;
      i++;
      yield row(g, 'reaction', actor, g.postAuthor[post], post, null, 1, type, at, updated ? at : null);
    }
  }
  return { comments, rows };
}

/**
 * Up to `cliques` groups of 8 agent numbers of 8 different owners, none with a post yet, taken
 * upward from the least popular quarter of the honest agents (`ownerOf` takes the agent's 1-based
 * handle number); fewer when that quarter runs out.
 */
function cliqueMembers(g: Generator, cliques: number, agents: number, ownerOf: (n: number) => string | null): number[] {
  const authors = new Set(g.postAuthor);
  const out: number[] = [];
  let group: number[] = [];
  const owners = new Set<string>();
  for (let a = Math.floor((agents * 3) / 4); a < agents && out.length < cliques * 8; a++) {
    const owner = ownerOf(a + 1);
    if (authors.has(a) || owner === null || owners.has(owner)) continue;
    owners.add(owner);
    group.push(a);
    if (group.length === 8) {
      out.push(...group);
      group = [];
      owners.clear();
    }
  }
  return out;
}

/**
 * Writes through its own single connection, closed at the end: the seed lifts the statement
 * timeout and turns per-row triggers off for its session, which no connection of the caller's
 * pool should keep.
 */
export async function generateNetwork(db: Knex, size: NetworkSize, now: Date): Promise<Network> {
  const own = knexFactory({ client: 'pg', connection: db.client.config.connection, pool: { min: 1, max: 1 } });
  try {
    return await generate(own, size, now);
  } finally {
    await own.destroy();
  }
}

async function generate(db: Knex, size: NetworkSize, now: Date): Promise<Network> {
  const N = size.interactions;
  const g = new Generator(size.seed ?? 42);
  const t = now.getTime();
  const ago = (ms: number) => new Date(t - ms);
  const agents = Math.max(200, Math.round(N / 10));
  const owners = Math.round(agents * 0.6);
  const posts = Math.round(N / 10);
  const rings = Math.max(1, Math.round(N / 5000));
  // This session only: no foreign-key or other trigger per row (the rows refer to what was just
  // written), no wait for the WAL flush at commit, room to sort when an index is built.
  await db.raw('set statement_timeout = 0');
  await db.raw('set session_replication_role = replica');
  await keepCommunityCounts(db);
  await db.raw('set synchronous_commit = off');
  await db.raw(`set maintenance_work_mem = '256MB'`);
  const community: string = (await db('communities').where({ slug: 'general' }).first('id')).id;

  const ownerIds: string[] = [];
  await copyRows(db, 'owners (id, email, password_hash, email_verified_at, created_at)', function* () {
    for (let i = 0; i < owners; i++) {
      const id = uuidOf(g.salt + TABLE.owner, i);
      ownerIds.push(id);
      const verified = g.rand() < 0.7 ? ago(100 * DAY_MS).toISOString() : NULL;
      yield `${id}\tbench${i + 1}@example.test\tx\t${verified}\t${ago(101 * DAY_MS).toISOString()}`;
    }
  });

  // Owners 1..owners/2 get one agent each, the rest of the owned agents spread over the other
  // half; every 10th agent is unowned. Then the abuse's own agents: sock-puppet farms (7 agents
  // of one owner) and brigades' fresh, unowned agents.
  const half = Math.floor(owners / 2);
  const ownerOf = (n: number) => (n <= half ? ownerIds[n - 1] : ownerIds[half + (n % (owners - half))]);
  const farmOwner = (f: number) => ownerIds[(f * 31) % owners];
  const farmAgent = (f: number, k: number) => agents + (f - 1) * 7 + k;
  const fresh = rings * 8;
  const freshAgent = (i: number) => agents + rings * 7 + i;
  await copyRows(db, 'agents (id, handle, display_name, owner_id, created_at, official_connector)', function* () {
    for (let n = 1; n <= agents; n++) {
      const owner = n % 10 === 0 ? null : ownerOf(n);
      yield g.agent(`bench_${n}`, owner, ago((g.rand() * 400 + 1) * DAY_MS), g.rand() < 0.3);
    }
    for (let f = 1; f <= rings; f++)
      for (let k = 0; k <= 6; k++) yield g.agent(`bench_farm_${f}_${k}`, farmOwner(f), ago(60 * DAY_MS), false);
    for (let i = 1; i <= fresh; i++) yield g.agent(`bench_fresh_${i}`, null, ago(DAY_MS), false);
  });
  g.honestAgents = agents;

  // Reciprocal pairs (two agents upvoting 8 recent posts of each other: the pair's votes
  // outweigh the ~5 honest votes each agent casts, so the pattern shows); farms' main agents' posts;
  // vote cliques (reputation_v2's COLLUSION_CLUSTER): 8 agents of 8 owners among the rarely
  // supported ones (no post of their own before, in the least popular quarter), 2 posts each,
  // each upvoting both posts of every other member (2 per pair: no v1 rule fires).
  const pairs = rings * 2;
  const pairAgent = (r: number, side: number) => (r * 7919 + side * 104729) % agents;
  const members: number[] = [];
  const cliqueAgent = (r: number, i: number) => members[r * 8 + i];
  const pairPost = (r: number, side: number, k: number) => posts + (r * 2 + side) * 8 + k;
  const farmPost = (f: number) => posts + pairs * 16 + f - 1;
  const cliquePost = (r: number, i: number, k: number) => posts + pairs * 16 + rings + (r * 8 + i) * 2 + k;
  await withoutSecondaryIndexes(db, ['posts'], () =>
    copyRows(db, 'posts (id, community_id, author_id, title, body, hot, created_at)', function* () {
      // Authors mildly skewed toward low agent numbers, as are the posts and agents that draw activity.
      for (let i = 0; i < posts; i++) yield g.post(g.skewed(agents), ago(g.rand() * 85 * DAY_MS), community);
      members.push(
        ...cliqueMembers(g, Math.max(1, Math.round(N / 10000)), agents, (n) => (n % 10 === 0 ? null : ownerOf(n))),
      );
      for (let r = 0; r < pairs; r++)
        for (let side = 0; side <= 1; side++)
          for (let k = 0; k < 8; k++) yield g.post(pairAgent(r, side), ago(3 * DAY_MS), community);
      for (let f = 1; f <= rings; f++) yield g.post(farmAgent(f, 0), ago(5 * DAY_MS), community);
      for (let r = 0; r < members.length / 8; r++)
        for (let i = 0; i < 8; i++)
          for (let k = 0; k < 2; k++) yield g.post(cliqueAgent(r, i), ago(5 * DAY_MS), community);
    }),
  );
  await fillPostRanks(db);
  g.honestPosts = posts;

  const window = WEIGHTS.windowDays * DAY_MS;
  const mix = honest(g, N, t - window, window, true);
  // Every month of the window gets its partition (the migration made the months around today's
  // date only), so no generated row lands in the DEFAULT partition.
  const { table, column } = INTERACTION_PARTITIONS;
  await ensureMonthPartitions(db, table, column, new Date(t - window), now);
  await withoutSecondaryIndexes(db, ['comments', 'interactions'], async () => {
    await copyRows(db, 'comments (id, post_id, author_id, body, score, created_at)', mix.comments);
    await copyRows(db, `interactions (${INTERACTION_COLS}, updated_at)`, function* () {
      yield* mix.rows();
      yield* abuse();
    });
  });

  function* abuse() {
    // Follow rings of 6 agents following each other.
    const d3 = ago(3 * DAY_MS);
    for (let r = 0; r < rings; r++)
      for (let i = 0; i < 6; i++)
        for (let j = 0; j < 6; j++) {
          const [a, b] = [(r * 6 + i) % agents, (r * 6 + j) % agents];
          if (i !== j && g.take(g.follows, a, b)) yield row(g, 'follow', a, b, null, null, 1, null, d3, d3);
        }
    const d2 = ago(2 * DAY_MS);
    for (let r = 0; r < pairs; r++)
      for (let side = 0; side <= 1; side++) {
        const [x, y] = [pairAgent(r, side), pairAgent(r, 1 - side)];
        for (let k = 0; k < 8; k++) {
          const p = pairPost(r, 1 - side, k);
          if (x !== y && g.take(g.votes, x, p)) yield row(g, 'vote', x, y, p, null, 1, null, d2, d2);
        }
      }
    // Sock-puppet farms: 6 agents of the owner upvote and follow the owner's main agent.
    const d4 = ago(4 * DAY_MS);
    for (let f = 1; f <= rings; f++)
      for (let k = 1; k <= 6; k++) {
        const [pup, main] = [farmAgent(f, k), farmAgent(f, 0)];
        g.take(g.votes, pup, farmPost(f));
        yield row(g, 'vote', pup, main, farmPost(f), null, 1, null, d4, d4);
      }
    for (let f = 1; f <= rings; f++)
      for (let k = 1; k <= 6; k++) {
        const [pup, main] = [farmAgent(f, k), farmAgent(f, 0)];
        g.take(g.follows, pup, main);
        yield row(g, 'follow', pup, main, null, null, 1, null, d4, d4);
      }
    // Brigades: 8 fresh, unverified, unowned agents upvote one post within 3 minutes.
    const d6h = ago(6 * HOUR_MS);
    for (let i = 0; i < fresh; i++) {
      const p = (Math.floor(i / 8) * 7919) % posts;
      g.take(g.votes, freshAgent(i), p);
      const at = new Date(d6h.getTime() + (i % 8) * 20_000);
      yield row(g, 'vote', freshAgent(i), g.postAuthor[p], p, null, 1, null, at, d6h);
    }
    for (let r = 0; r < members.length / 8; r++)
      for (let x = 0; x < 8; x++)
        for (let y = 0; y < 8; y++)
          for (let k = 0; k < 2 && x !== y; k++) {
            const p = cliquePost(r, y, k);
            if (g.take(g.votes, cliqueAgent(r, x), p))
              yield row(g, 'vote', cliqueAgent(r, x), cliqueAgent(r, y), p, null, 1, null, d4, d4);
          }
  }

  // The insert trigger that keys each vote, reaction and follow is off in this session: their keys in one statement.
  await db.raw(`insert into interaction_keys (kind, subject_id, actor_agent_id, interaction_id, occurred_at)
    select kind, interaction_subject(kind, target_agent_id, post_id, comment_id), actor_agent_id, id, occurred_at
    from interactions where kind <> 'reply'`);
  const total = await db.raw('select count(*)::int n from interactions');
  // A real network's rows were written over 90 days and long since vacuumed and checkpointed; a
  // bulk load leaves that work pending (hint bits and visibility of millions of fresh tuples, a
  // checkpoint of its WAL still being written), and the next statements would pay it, more at
  // larger sizes. Settle it here so a benchmark times scoring, not the loader's aftermath.
  await db.raw('vacuum (analyze)');
  await db.raw('checkpoint');
  return {
    agents: g.agentIds.length,
    interactions: total.rows[0].n,
    addActivity: (to: Knex, n: number, from: Date, until: Date) => addActivity(g, to, n, from, until),
  };
}

async function addActivity(g: Generator, db: Knex, n: number, from: Date, to: Date): Promise<number> {
  const mix = honest(g, n, from.getTime(), to.getTime() - from.getTime(), false);
  await copyRows(db, 'comments (id, post_id, author_id, body, score, created_at)', mix.comments);
  let added = 0;
  await copyRows(db, `interactions (${INTERACTION_COLS})`, function* () {
    for (const r of mix.rows()) {
      added++;
      yield r;
    }
  });
  return added;
}
