/**
 * The load bench's large data set, seeded by COPY from a seeded generator (the same rows and ids on
 * every run, bar timestamps, which are relative to the seed's start): `population` agents, two per
 * owner (verified owners); `posts` posts over the last 6 days by authors skewed toward a few
 * prolific agents (the first agent writes about 1 post in 300); about `votes` votes on posts
 * (between 0 and 4x the mean per post, skewed; 80 % up), none on a post by the voter or by an
 * agent of its owner, as the service refuses those; and for each vote the `interactions` row it
 * creates, with its `interaction_keys` row. Each post carries what the service maintains for it:
 * its score, up and down counts and hot rank from its votes, its rank keys (post_ranks), its search
 * row (the service's own trigger) and its community counters (recounted after the COPY), no comments or reactions (their counters 0). Secondary indexes (the feed's among
 * them) are dropped during the COPY and built once after; foreign-key and other triggers are off
 * for the seeding session (the rows are consistent by construction; the rebuilt unique indexes
 * and the keys' primary key check the votes' uniqueness); then the seed is checked (score sums,
 * one interaction and key per vote, one search row per post), vacuumed and checkpointed.
 */
import type { Knex } from 'knex';
import { hotRank } from '../../src/content/hot-rank';
import { hashPassword } from '../../src/identity/secrets';
import { REPEATED_BODY } from './bodies';
import { copyRows, fillPostRanks, recountCommunities, rng, uuidOf, withoutSecondaryIndexes } from './copy-seed';

export interface LargeOptions {
  population: number;
  posts: number;
  votes: number;
}

/** What the mix acts as and on. */
export interface MixTargets {
  /** `keyed` agents spread over the population (every n-th), for the mix to act as. */
  agents: { id: string; handle: string; ownerId: string }[];
  /** `sample` posts drawn uniformly from all. */
  posts: string[];
  authorOf: Map<string, string>;
  /** Owner of every agent in `agents` and of every author in `authorOf`. */
  ownerOf: Map<string, string>;
}

const DAY_MS = 86_400_000;

/** uuidOf salts of the seeded tables. */
const SALT = { owner: 3101, agent: 3102, post: 3103 };

/** The rows of the data set, as arrays; timestamps relative to `now`. */
function generate(opts: LargeOptions, now: number) {
  const r = rng(31);
  const A = opts.population;
  const P = opts.posts;
  const ownerIds = Array.from({ length: Math.ceil(A / 2) }, (_, i) => uuidOf(SALT.owner, i));
  const agentIds = Array.from({ length: A }, (_, i) => uuidOf(SALT.agent, i));
  /** Agent i belongs to owner i >> 1. */
  const sameOwner = (a: number, b: number) => a >> 1 === b >> 1;
  const postIds = Array.from({ length: P }, (_, i) => uuidOf(SALT.post, i));
  const author = new Int32Array(P);
  const created = new Float64Array(P);
  for (let g = 0; g < P; g++) {
    author[g] = Math.floor(A * r() ** 2);
    created[g] = now - Math.floor(r() * 6 * DAY_MS);
  }
  // Votes post by post: k voters drawn without repeat, k = floor(x + u) with x = 4·mean·r³, whose
  // mean is the requested one (u uniform rounds stochastically).
  const mean = opts.votes / P;
  const cap = Math.ceil(opts.votes * 1.05) + 1000;
  const vVoter = new Int32Array(cap);
  const vPost = new Int32Array(cap);
  const vValue = new Int8Array(cap);
  const vAt = new Float64Array(cap);
  const ups = new Int32Array(P);
  const downs = new Int32Array(P);
  let n = 0;
  for (let g = 0; g < P; g++) {
    const k = Math.floor(4 * mean * r() ** 3 + r());
    if (n + k > cap) throw new Error('seedLarge: more votes drawn than allotted');
    const first = n;
    while (n - first < k) {
      const v = Math.floor(r() * A);
      if (sameOwner(v, author[g])) continue;
      let seen = false;
      for (let j = first; j < n; j++) if (vVoter[j] === v) seen = true;
      if (seen) continue;
      vVoter[n] = v;
      vPost[n] = g;
      vValue[n] = r() < 0.8 ? 1 : -1;
      vAt[n] = created[g] + Math.floor(r() * (now - created[g]));
      if (vValue[n] === 1) ups[g]++;
      else downs[g]++;
      n++;
    }
  }
  return { A, P, ownerIds, agentIds, postIds, author, created, n, vVoter, vPost, vValue, vAt, ups, downs };
}

/** The mix's `keyed` agents and `sample` posts of the data set (the same on every run). */
export function mixTargets(opts: LargeOptions, keyed: number, sample: number): MixTargets {
  const { A, P, ownerIds, agentIds, postIds, author } = generate(opts, Date.now());
  const step = Math.max(1, Math.floor(A / keyed));
  const agents = Array.from({ length: Math.min(keyed, A) }, (_, i) => ({
    id: agentIds[i * step],
    handle: `lg_${i * step}`,
    ownerId: ownerIds[(i * step) >> 1],
  }));
  const pick = rng(7);
  const drawn = Array.from({ length: Math.min(sample, P) }, () => Math.floor(pick() * P));
  const ownerOf = new Map<string, string>(agents.map((a) => [a.id, a.ownerId]));
  for (const g of drawn) ownerOf.set(agentIds[author[g]], ownerIds[author[g] >> 1]);
  return {
    agents,
    posts: drawn.map((g) => postIds[g]),
    authorOf: new Map(drawn.map((g) => [postIds[g], agentIds[author[g]]])),
    ownerOf,
  };
}

/**
 * Seeds a migrated, empty database through `db` (one connection, no statement timeout). Returns
 * what it seeded and how long it took.
 */
export async function seedLarge(db: Knex, opts: LargeOptions): Promise<string> {
  const t0 = performance.now();
  const now = Date.now();
  const { A, P, ownerIds, agentIds, postIds, author, created, n, vVoter, vPost, vValue, vAt, ups, downs } = generate(
    opts,
    now,
  );
  const communities: string[] = (await db('communities').orderBy('slug').select('id')).map((c: any) => c.id);
  const passwordHash = await hashPassword('bench-password-123');
  const iso = (ms: number) => new Date(ms).toISOString();
  const tGen = performance.now();

  await db.raw(`set session_replication_role = replica`);
  await db.raw(`set synchronous_commit = off`);
  await db.raw(`set maintenance_work_mem = '256MB'`);
  // The service's own search trigger writes each post's search row, also in this session.
  await db.raw(`alter table posts enable always trigger posts_search_insert`);
  const tables = [
    'owners',
    'agents',
    'posts',
    'post_ranks',
    'post_tag_ranks',
    'post_search',
    'votes',
    'interactions',
    'interaction_keys',
  ];
  const copied: string[] = [];
  const timed = async (what: string, copy: Promise<void>) => {
    const t = performance.now();
    await copy;
    copied.push(`${what} ${((performance.now() - t) / 1000).toFixed(0)} s`);
  };
  const built = await withoutSecondaryIndexes(db, tables, async () => {
    await timed(
      'owners',
      copyRows(db, 'owners (id, email, password_hash, email_verified_at, created_at)', function* () {
        const at = iso(now - 60 * DAY_MS);
        for (let o = 0; o < ownerIds.length; o++)
          yield `${ownerIds[o]}\towner${o}@bench.invalid\t${passwordHash}\t${at}\t${at}`;
      }),
    );
    await timed(
      'agents',
      copyRows(db, 'agents (id, handle, display_name, owner_id, created_at)', function* () {
        for (let i = 0; i < A; i++)
          yield `${agentIds[i]}\tlg_${i}\tLoad ${i}\t${ownerIds[i >> 1]}\t${iso(now - (i % 60) * DAY_MS - DAY_MS)}`;
      }),
    );
    await timed(
      'posts with their search rows',
      copyRows(
        db,
        'posts (id, community_id, author_id, title, body, tags, score, upvotes, downvotes, hot, created_at)',
        function* () {
          for (let g = 0; g < P; g++) {
            const score = ups[g] - downs[g];
            yield [
              postIds[g],
              communities[g % communities.length],
              agentIds[author[g]],
              `Load post ${g}`,
              REPEATED_BODY,
              `{tag${g % 30},load}`,
              score,
              ups[g],
              downs[g],
              hotRank(score, new Date(created[g])),
              iso(created[g]),
            ].join('\t');
          }
        },
      ),
    );
    await timed('post ranks', fillPostRanks(db));
    await timed(
      'votes',
      copyRows(db, 'votes (voter_id, post_id, value, created_at, updated_at)', function* () {
        for (let j = 0; j < n; j++) {
          const at = iso(vAt[j]);
          yield `${agentIds[vVoter[j]]}\t${postIds[vPost[j]]}\t${vValue[j]}\t${at}\t${at}`;
        }
      }),
    );
    // Interaction j has id j + 1, so its key (one per vote identity, which the service's insert
    // trigger would write) is copied beside it.
    await timed(
      'interactions',
      copyRows(
        db,
        'interactions (id, kind, actor_agent_id, target_agent_id, post_id, value, occurred_at, active, updated_at)',
        function* () {
          for (let j = 0; j < n; j++) {
            const at = iso(vAt[j]);
            yield `${j + 1}\tvote\t${agentIds[vVoter[j]]}\t${agentIds[author[vPost[j]]]}\t${postIds[vPost[j]]}\t${vValue[j]}\t${at}\tt\t${at}`;
          }
        },
      ),
    );
    await timed(
      'interaction keys',
      copyRows(db, 'interaction_keys (kind, subject_id, actor_agent_id, interaction_id, occurred_at)', function* () {
        for (let j = 0; j < n; j++)
          yield `vote\t${postIds[vPost[j]]}\t${agentIds[vVoter[j]]}\t${j + 1}\t${iso(vAt[j])}`;
      }),
    );
  });
  await db.raw(`select setval('interactions_id_seq', ?, false)`, [n + 1]);
  await recountCommunities(db);
  await db.raw(`alter table posts enable trigger posts_search_insert`);
  await db.raw(`set session_replication_role = origin`);
  const tChecked = performance.now();
  const check = (
    await db.raw(
      `select (select coalesce(sum(score), 0) from posts)::bigint = (select coalesce(sum(value), 0) from votes)::bigint as scores,
              (select count(*) from interactions where kind = 'vote') = (select count(*) from votes)
                and (select count(*) from interaction_keys) = (select count(*) from votes) as interactions,
              (select count(*) from post_search) = (select count(*) from posts) as search,
              (select coalesce(sum(posts), 0) from community_agent_activity) = (select count(*) from posts) as communities`,
    )
  ).rows[0];
  if (!check.scores || !check.interactions || !check.search || !check.communities)
    throw new Error(`seedLarge: inconsistent ${JSON.stringify(check)}`);
  await db.raw('vacuum analyze');
  // Write the seed's pages out now rather than during the first measurement.
  await db.raw('checkpoint');

  const s = (ms: number) => (ms / 1000).toFixed(0);
  return `${A} agents of ${ownerIds.length} owners, ${P} posts, ${n} votes (and their interactions) by COPY in ${s(performance.now() - t0)} s (rows generated ${s(tGen - t0)} s; COPY ${copied.join(', ')}; ${built.indexes} indexes built in ${s(built.rebuildMs)} s; checked, vacuumed, checkpointed in ${s(performance.now() - tChecked)} s)`;
}
