import { expect } from 'chai';
import knexFactory from 'knex';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent, newOwner } from '../helpers/factories';
import { TtlCache } from '../../src/cache/ttl';
import { Caches, DataChange } from '../../src/caches';
import { setAgentStatus } from '../../src/identity/cli';
import { authenticateApiKey } from '../../src/identity/authenticate';
import { revokeKey } from '../../src/owners/service';
import { runFull, runIncremental } from '../../src/scoring/service';
import { createCaches } from '../../src/caches';
import { decode, encode, MAX_SCORED_AGENTS, scoresChanged } from '../../src/cache/change-bus';
import { reputationTags } from '../../src/reputation/service';
import { createLogger } from '../../src/log';
import { newCommunity } from '../content/helpers';
import { rawRequest } from '../fuzz/world';
import { queries } from '../helpers/queries';

describe('read caches: TtlCache', () => {
  let seq = 0;
  const fresh = (ttlMs = 1000, maxEntries = 3) => new TtlCache<string>({ name: `unit-${++seq}`, ttlMs, maxEntries });

  it('serves a value until its TTL, then forgets it', () => {
    const c = fresh(1000);
    c.put('k', 'v', c.generation(), 10_000);
    expect(c.get('k', 10_999)).to.equal('v');
    expect(c.get('k', 11_000)).to.equal(undefined);
  });

  it('keeps at most maxEntries, evicting the least recently used', () => {
    const c = fresh(60_000, 3);
    for (const k of ['a', 'b', 'c']) c.put(k, k, c.generation());
    expect(c.get('a')).to.equal('a'); // a is now the most recent
    c.put('d', 'd', c.generation());
    expect([c.get('a'), c.get('b'), c.get('c'), c.get('d')]).to.deep.equal(['a', undefined, 'c', 'd']);
    expect(c.size).to.equal(3);
  });

  it('refuses a value loaded before an invalidation; TTL 0 disables it', () => {
    const c = fresh();
    const gen = c.generation();
    c.invalidate();
    c.put('k', 'old', gen);
    expect(c.get('k')).to.equal(undefined);
    c.setTtl(0);
    c.put('k', 'v', c.generation());
    expect(c.get('k')).to.equal(undefined);
  });

  it('a longer TTL applies while its condition holds, the TTL otherwise (and never over a TTL set by hand)', () => {
    let heard = true;
    const c = new TtlCache<string>({
      name: `unit-${++seq}`,
      ttlMs: 1000,
      maxEntries: 3,
      heardTtl: { ms: 60_000, while: () => heard },
    });
    c.put('k', 'v', c.generation(), 10_000);
    expect(c.get('k', 69_999)).to.equal('v');
    expect(c.get('k', 70_000)).to.equal(undefined);
    c.put('k', 'v', c.generation(), 10_000);
    heard = false;
    expect(c.get('k', 11_000)).to.equal(undefined);
    heard = true;
    c.setTtl(500);
    c.put('k', 'v', c.generation(), 10_000);
    expect(c.get('k', 10_500)).to.equal(undefined);
  });

  it('concurrent misses share one load; a load racing an invalidation is returned but not stored', async () => {
    const c = fresh(60_000);
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const loader = async () => {
      loads++;
      await gate;
      return `v${loads}`;
    };
    const all = Promise.all([c.load('k', loader), c.load('k', loader), c.load('k', loader)]);
    release();
    expect(await all).to.deep.equal(['v1', 'v1', 'v1']);
    expect(loads).to.equal(1);
    expect(await c.load('k', loader)).to.equal('v1');

    let release2!: () => void;
    const gate2 = new Promise<void>((r) => (release2 = r));
    const racing = c.load('other', async () => {
      await gate2;
      return 'stale';
    });
    c.invalidate();
    release2();
    expect(await racing).to.equal('stale');
    expect(c.get('other')).to.equal(undefined);
  });

  it('a load begun before a tag invalidation is not shared with a caller after it', async () => {
    const c = fresh(60_000);
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = c.load('k', async () => {
      loads++;
      await gate;
      return 'before';
    });
    c.invalidateTags(['post:x']);
    const second = c.load('k', async () => {
      loads++;
      return 'after';
    });
    release();
    expect([await first, await second, loads]).to.deep.equal(['before', 'after', 2]);
  });

  it('does not store results the caller marks uncacheable, nor failures', async () => {
    const c = fresh(60_000);
    expect(
      await c.load(
        'k',
        async () => 'no',
        () => false,
      ),
    ).to.equal('no');
    expect(c.get('k')).to.equal(undefined);
    let err: unknown;
    await c.load('e', () => Promise.reject(new Error('boom'))).catch((e) => (err = e));
    expect(String(err)).to.include('boom');
    expect(await c.load('e', async () => 'ok')).to.equal('ok');
  });

  it("loadTagged stores the value with the loader's tags, shares the load, and says whether it came from memory", async () => {
    const c = fresh(60_000);
    let calls = 0;
    const loader = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 10));
      return { value: 'page', tags: ['post:1', 'post:2'] };
    };
    const [x, y] = await Promise.all([c.loadTagged('k', loader), c.loadTagged('k', loader)]);
    expect(calls).to.equal(1);
    expect(x).to.deep.equal({ value: 'page', tags: ['post:1', 'post:2'], hit: false });
    expect(y).to.deep.equal(x);
    // From memory with the tags it was stored with (the response cache stores the answer with them).
    expect(await c.loadTagged('k', loader)).to.deep.equal({ value: 'page', tags: ['post:1', 'post:2'], hit: true });
    c.invalidateTags(['post:2']);
    expect(c.get('k')).to.equal(undefined);
  });

  it('tags: invalidateTags drops only the entries stored with them, and refuses values loaded before it with them', () => {
    const c = fresh(60_000, 10);
    c.put('page1', 'p1', c.generation(), undefined, ['post:x', 'post:y']);
    c.put('page2', 'p2', c.generation(), undefined, ['post:z']);
    c.put('plain', 'v', c.generation());
    const before = c.generation();
    c.invalidateTags(['post:y']);
    expect([c.get('page1'), c.get('page2'), c.get('plain')]).to.deep.equal([undefined, 'p2', 'v']);
    // Loaded before the invalidation: unfit with that tag, fit without it.
    c.put('page1', 'stale', before, undefined, ['post:x', 'post:y']);
    c.put('page3', 'other', before, undefined, ['post:w']);
    expect([c.get('page1'), c.get('page3')]).to.deep.equal([undefined, 'other']);
    // Loaded after it: stored, and dropped by the next invalidation of its tag.
    c.put('page1', 'new', c.generation(), undefined, ['post:x', 'post:y']);
    expect(c.get('page1')).to.equal('new');
    c.invalidateTags(['post:x']);
    expect(c.get('page1')).to.equal(undefined);
    // A whole invalidation still refuses everything loaded before it.
    const old = c.generation();
    c.invalidate();
    c.put('page2', 'p2', old, undefined, ['post:z']);
    expect([c.get('page2'), c.get('plain')]).to.deep.equal([undefined, undefined]);
  });

  it('tags: an entry dropped by TTL or eviction leaves no tag behind, and too many remembered tags turn into a whole invalidation', () => {
    const c = fresh(1000, 2);
    c.put('a', 'a', c.generation(), 10_000, ['t:a']);
    c.put('b', 'b', c.generation(), 10_000, ['t:b']);
    c.put('c', 'c', c.generation(), 10_000, ['t:c']); // evicts a
    expect(c.get('a', 10_001)).to.equal(undefined);
    c.put('a2', 'a2', c.generation(), 10_000, ['t:a']); // evicts b; t:a now names only a2
    c.invalidateTags(['t:a']);
    expect([c.get('a2', 10_001), c.get('c', 10_001)]).to.deep.equal([undefined, 'c']);
    const many = Array.from({ length: 20_001 }, (_, i) => `t:${i}`);
    const before = c.generation();
    c.invalidateTags(many);
    expect(c.get('c', 10_001)).to.equal(undefined);
    c.put('d', 'd', before, 10_000);
    expect(c.get('d', 10_001)).to.equal(undefined);
  });

  it('each kind of change empties exactly the caches that hold its data', () => {
    const emptied = (change: DataChange) => {
      const c = new Caches('production');
      const named = {
        feed: c.feed,
        apiKeys: c.apiKeys,
        reputation: c.reputation,
        achievements: c.achievements,
        leaderboards: c.leaderboards,
      };
      for (const cache of Object.values(named))
        (cache as TtlCache<unknown>).put('k', 'v', cache.generation(), undefined, ['post:p1']);
      c.evict([change]);
      return Object.entries(named)
        .filter(([, cache]) => cache.get('k') === undefined)
        .map(([name]) => name)
        .sort();
    };
    expect(emptied({ kind: 'posts' })).to.deep.equal(['feed']);
    expect(emptied({ kind: 'communities' })).to.deep.equal(['feed']);
    expect(emptied({ kind: 'post-counters', postIds: ['p1'] })).to.deep.equal(['feed']);
    expect(emptied({ kind: 'post-counters', postIds: ['p2'] })).to.deep.equal([]);
    expect(emptied({ kind: 'agents' })).to.deep.equal(['apiKeys', 'feed', 'reputation']);
    expect(emptied({ kind: 'api-keys' })).to.deep.equal(['apiKeys']);
    expect(emptied({ kind: 'scores' })).to.deep.equal(['reputation']);
    // A rescore listing its agents: only entries tagged with one of them.
    expect(emptied({ kind: 'scores', agentIds: ['a1'] })).to.deep.equal([]);
    const c = new Caches('production');
    for (const id of ['a1', 'a2'])
      c.reputation.put(id, Buffer.from(id), c.reputation.generation(), undefined, reputationTags([id]));
    c.evict([{ kind: 'scores', agentIds: ['a1'] }]);
    expect([c.reputation.get('a1'), c.reputation.get('a2')?.toString()]).to.deep.equal([undefined, 'a2']);
    expect(emptied({ kind: 'snapshots' })).to.deep.equal(['achievements', 'leaderboards', 'reputation']);
  });
});

describe('read caches: API keys', () => {
  it('a key seen recently skips the key lookup; revoking it through the owner API refuses it at once', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    expect((await api('GET', '/me', { key: a.key })).status).to.equal(200);
    const again = await queries(() => api('GET', '/me', { key: a.key }));
    expect(again.value.status).to.equal(200);
    expect(again.sql.filter((s) => s.includes('api_keys'))).to.deep.equal([]);

    const keys = await api('GET', `/owner/agents/${a.agent.id}/keys`, { session: owner.session });
    const revoked = await api('DELETE', `/owner/agents/${a.agent.id}/keys/${keys.body.data[0].id}`, {
      session: owner.session,
    });
    expect(revoked.status).to.equal(200);
    const after = await api('GET', '/me', { key: a.key });
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal('INVALID_API_KEY');
  });

  it('a revocation reaches a listening process at its commit, even when the revoking process stops before publishing', async () => {
    const { deps, databaseUrl } = await getContext();
    const log = createLogger('silent');
    const listener = createCaches('test', databaseUrl, log);
    // The revoking process: its bus closed, as if it stopped right after the commit.
    const revoker = createCaches('test', databaseUrl, log);
    await revoker.close();
    try {
      await listener.listen();
      const owner = await newOwner();
      const a = await newAgent({ owner });
      expect(await authenticateApiKey(deps.query, listener.apiKeys, a.key)).to.not.equal(null);
      expect(listener.apiKeys.size).to.equal(1);
      const keys = await api('GET', `/owner/agents/${a.agent.id}/keys`, { session: owner.session });
      await revokeKey({ ...deps, caches: revoker }, owner.owner.id, a.agent.id, keys.body.data[0].id);
      for (let i = 0; i < 100 && listener.apiKeys.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(listener.apiKeys.size).to.equal(0);
      expect(await authenticateApiKey(deps.query, listener.apiKeys, a.key)).to.equal(null);
    } finally {
      await listener.close();
    }
  });

  it('a suspension through the CLI, or a revocation written in the database and announced, applies to the next request', async () => {
    const { db, deps } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const post = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'general', body: 'cache suspension' },
    });
    expect(post.status).to.equal(201);
    await setAgentStatus(deps, a.handle, 'suspended');
    const refused = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'again' } });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('AGENT_SUSPENDED');

    expect((await api('GET', '/me', { key: b.key })).status).to.equal(200);
    await db('api_keys').where({ agent_id: b.agent.id }).update({ revoked_at: new Date() });
    await deps.caches.changed({ kind: 'api-keys' });
    expect((await api('GET', '/me', { key: b.key })).status).to.equal(401);
  });

  it("the key's last-use time is still recorded (minute precision)", async () => {
    const { db } = await getContext();
    const a = await newAgent();
    expect((await api('GET', '/me', { key: a.key })).status).to.equal(200);
    let row: { last_used_at: Date | null } | undefined;
    for (let i = 0; i < 50 && !row?.last_used_at; i++) {
      await new Promise((r) => setTimeout(r, 10));
      row = await db('api_keys').where({ agent_id: a.agent.id }).first('last_used_at');
    }
    expect(row?.last_used_at).to.be.instanceOf(Date);
  });
});

describe('read caches: leaderboards and reputation', () => {
  // A past week of its own (after 2001-W10, which other tests expect to be before any activity).
  const week = '2015-W20';
  const entries = (score: number, handle: string) =>
    JSON.stringify([
      {
        rank: 1,
        score,
        components: { upvotesWeighted: score },
        agent: { id: '00000000-0000-4000-8000-000000000000', handle, displayName: 'Cached' },
      },
    ]);

  afterEach(async () => (await getContext()).deps.caches.setTtl('*', null));

  it('GET /leaderboards is served from memory until a written snapshot is announced, which shows at once', async () => {
    const { db, deps } = await getContext();
    await db('leaderboard_snapshots')
      .insert({
        week,
        category: 'debater',
        status: 'live',
        week_start: new Date('2015-05-11T00:00:00Z'),
        week_end: new Date('2015-05-18T00:00:00Z'),
        computed_at: new Date(),
        entries: entries(5, 'lb_cache_one'),
      })
      .onConflict(['week', 'category'])
      .merge();
    const path = `/leaderboards?week=${week}&category=debater`;
    const first = await api('GET', path);
    expect(first.status).to.equal(200);
    expect(first.body.data.entries[0]).to.deep.include({ rank: 1, score: 5 });
    const second = await queries(() => api('GET', path));
    expect(second.n).to.equal(0);
    expect(second.value.text).to.equal(first.text);
    expect(second.value.headers.get('content-type')).to.match(/^application\/json/);

    await db('leaderboard_snapshots')
      .where({ week, category: 'debater' })
      .update({ entries: entries(7, 'lb_cache_two') });
    await deps.caches.changed({ kind: 'snapshots' });
    const third = await api('GET', path);
    expect(third.body.data.entries[0]).to.deep.include({
      score: 7,
      agent: { handle: '@lb_cache_two', displayName: 'Cached' },
    });
    // Not left behind: a snapshot that old would make full recomputes of other tests start in 2015.
    await db('leaderboard_snapshots').where({ week, category: 'debater' }).delete();
    await deps.caches.changed({ kind: 'snapshots' });
    expect((await api('GET', path)).status).to.equal(404);
  });

  it('GET /agents/{handle}/reputation is served from memory; a suspension and a rescore show at once', async () => {
    const { db, deps } = await getContext();
    const a = await newAgent();
    await db('reputation_scores').insert({
      agent_id: a.agent.id,
      score: 420,
      components: JSON.stringify({ version: 1, total: 420 }),
      computed_at: new Date(),
    });
    const first = await api('GET', `/agents/@${a.handle.toUpperCase()}/reputation`);
    expect(first.body.data).to.deep.include({ handle: '@' + a.handle, score: 420, suspended: false });
    const second = await queries(() => api('GET', `/agents/${a.handle}/reputation`));
    expect(second.n).to.equal(0);
    expect(second.value.text).to.equal(first.text);

    await setAgentStatus(deps, a.handle, 'suspended');
    expect((await api('GET', `/agents/${a.handle}/reputation`)).body.data).to.deep.include({
      score: 0,
      suspended: true,
    });
    await setAgentStatus(deps, a.handle, 'active');
    await db('reputation_scores').where({ agent_id: a.agent.id }).update({ score: 421 });
    await deps.caches.changed({ kind: 'scores' });
    expect((await api('GET', `/agents/${a.handle}/reputation`)).body.data).to.deep.include({
      score: 421,
      suspended: false,
    });

    // ?explain=true is never cached; unknown handles are not remembered.
    const explained = await queries(() => api('GET', `/agents/${a.handle}/reputation?explain=true`));
    expect(explained.n).to.be.greaterThan(0);
    const ghost = `ghost_${Date.now().toString(36)}`;
    expect((await api('GET', `/agents/${ghost}/reputation`)).status).to.equal(404);
    const g = await newAgent({ handle: ghost });
    expect((await api('GET', `/agents/${g.handle}/reputation`)).body.data).to.deep.include({ score: null });
  });

  /**
   * An agent no scoring run below touches: old (no clock-only change within seconds), not stamped
   * as changed, with a stored reputation and no interactions received.
   */
  async function untouched(agentId: string) {
    const { db } = await getContext();
    await db('agents')
      .where({ id: agentId })
      .update({ created_at: new Date(Date.now() - 400.5 * 86_400_000) });
    await db('scoring_agent_changes').where({ agent_id: agentId }).delete();
    await db('reputation_scores')
      .insert({
        agent_id: agentId,
        score: 420,
        components: JSON.stringify({ version: 1, total: 420 }),
        computed_at: new Date(),
      })
      .onConflict('agent_id')
      .merge();
    await db('reputation_scores_v2').where({ agent_id: agentId }).delete();
  }

  /** A post by `author` and a voter (verified owners: their votes count). */
  async function postAndVoter(author: { key: string }) {
    const post = await api('POST', '/posts', { key: author.key, body: { communitySlug: 'general', body: 'scored' } });
    expect(post.status, post.text).to.equal(201);
    return post.body.data.id as string;
  }
  const vote = async (key: string, postId: string) =>
    expect((await api('POST', `/posts/${postId}/vote`, { key, body: { value: 1 } })).status).to.equal(200);

  it("a scoring run at the same clock empties the cached reputations of the agents it rescored only; a run at a new clock everyone's", async () => {
    const ctx = await getContext();
    const { db, deps } = ctx;
    // Runs at one service clock: a new clock changes what every reputation shows (computedAt, TRUST's age).
    const clock = new Date();
    ctx.setNow(clock);
    try {
      const verified = async () => newAgent({ owner: await newOwner({ verified: true }) });
      const [a, b, voter] = [await verified(), await verified(), await verified()];
      const [postA, postB] = [await postAndVoter(a), await postAndVoter(b)];
      // A window clock at this moment: the runs below are incremental, at the same clock.
      await runIncremental(deps);
      await untouched(a.agent.id);
      const read = (h: string) => api('GET', `/agents/${h}/reputation`);
      const aFirst = await read(a.handle);
      expect(aFirst.body.data.score).to.equal(420);
      const bFirst = await read(b.handle);

      await vote(voter.key, postB);
      await runIncremental(deps);
      const aAgain = await queries(() => read(a.handle));
      expect(aAgain.n, 'a run that did not rescore A keeps its entry').to.equal(0);
      expect(aAgain.value.text).to.equal(aFirst.text);
      const storedB = await db('reputation_scores').where({ agent_id: b.agent.id }).first('score', 'components');
      const bAgain = (await read(b.handle)).body.data;
      expect(bAgain.computedAt).to.equal(clock.toISOString());
      expect(bAgain.components.quality)
        .to.deep.equal(storedB.components.quality)
        .and.not.deep.equal(bFirst.body.data.components.quality);
      expect(bAgain.score).to.equal(storedB.score);

      await vote(voter.key, postA);
      await runIncremental(deps);
      const storedA = await db('reputation_scores').where({ agent_id: a.agent.id }).first('score');
      const aLast = (await read(a.handle)).body.data;
      expect(aLast.score).to.equal(storedA.score).and.not.equal(420);

      // A minute on, a run that rescores nobody: every entry shows the new clock.
      const later = new Date(clock.getTime() + 60_000);
      ctx.setNow(later);
      await runIncremental(deps);
      for (const x of [a, b])
        expect((await read(x.handle)).body.data.computedAt, x.handle).to.equal(later.toISOString());
    } finally {
      ctx.setNow(null);
    }
  });

  it("another process's cache (its own change bus) drops the entries of the agents a run at the same clock rescored, and only those", async () => {
    const ctx = await getContext();
    const { deps, databaseUrl } = ctx;
    ctx.setNow(new Date());
    const verified = async () => newAgent({ owner: await newOwner({ verified: true }) });
    const [a, b, voter] = [await verified(), await verified(), await verified()];
    const [postA, postB] = [await postAndVoter(a), await postAndVoter(b)];
    await runIncremental(deps);
    await untouched(a.agent.id);
    const other = createCaches('production', databaseUrl, createLogger('silent'));
    try {
      await other.listen();
      const fill = () => {
        for (const x of [a, b])
          other.reputation.put(
            x.handle,
            Buffer.from(x.handle),
            other.reputation.generation(),
            undefined,
            reputationTags([x.agent.id]),
          );
      };
      /** Whether `handle`'s entry is gone within 2 s (a NOTIFY arrives within milliseconds). */
      const gone = async (handle: string) => {
        for (const until = Date.now() + 2000; Date.now() < until; await new Promise((r) => setTimeout(r, 10)))
          if (other.reputation.get(handle) === undefined) return true;
        return false;
      };
      fill();
      await vote(voter.key, postB);
      await runIncremental(deps);
      expect(await gone(b.handle), 'B was rescored').to.equal(true);
      expect(other.reputation.get(a.handle)?.toString(), 'A was not').to.equal(a.handle);

      fill();
      await vote(voter.key, postA);
      await runIncremental(deps);
      expect(await gone(a.handle), 'A was rescored').to.equal(true);
    } finally {
      ctx.setNow(null);
      await other.close();
    }
  });

  it("a scores change too long for one notification is split; past the cap it is everyone's; an old message without a list is everyone's", () => {
    const ids = (n: number) =>
      Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const many = ids(MAX_SCORED_AGENTS);
    const payloads = encode('o', [{ kind: 'snapshots' }, ...scoresChanged(many)]);
    expect(payloads.length).to.be.greaterThan(1);
    for (const p of payloads) expect(p.length).to.be.at.most(7000);
    const received = payloads.flatMap((p) => decode(p)!.c);
    expect(received.filter((c) => c.kind === 'snapshots')).to.have.length(1);
    expect(received.flatMap((c) => (c.kind === 'scores' ? c.agentIds! : []))).to.deep.equal(many);
    expect(scoresChanged(ids(MAX_SCORED_AGENTS + 1))).to.deep.equal([{ kind: 'scores' }]);
    expect(scoresChanged([])).to.deep.equal([]);
    // More ids than MAX_MESSAGES notifications hold: the whole kinds, in one.
    const huge = encode('o', [
      { kind: 'scores', agentIds: ids(20_000) },
      { kind: 'post-counters', postIds: ['p'] },
    ]);
    expect(huge.map((p) => decode(p)!.c)).to.deep.equal([[{ kind: 'scores' }, { kind: 'posts' }]]);
    expect(decode(JSON.stringify({ o: 'x', c: [{ kind: 'scores' }] }))!.c).to.deep.equal([{ kind: 'scores' }]);
    expect(decode(JSON.stringify({ o: 'x', c: [{ kind: 'scores', agentIds: [1] }] }))!.c).to.deep.equal([
      { kind: 'scores' },
    ]);
  });

  it('a read that raced an uncommitted rescore is not kept once the transaction commits', async () => {
    const { db, deps } = await getContext();
    const a = await newAgent();
    await db('reputation_scores').insert({
      agent_id: a.agent.id,
      score: 100,
      components: '{}',
      computed_at: new Date(),
    });
    const path = `/agents/${a.handle}/reputation`;
    await db.transaction(async (trx) => {
      await trx('reputation_scores').where({ agent_id: a.agent.id }).update({ score: 200 });
      // Reads the committed 100 while the update is in flight, and may try to cache it.
      expect((await api('GET', path)).body.data.score).to.equal(100);
    });
    await deps.caches.changed({ kind: 'scores' });
    expect((await api('GET', path)).body.data.score).to.equal(200);
  });

  it('a write another process did not announce (a lost notification) shows within the TTL', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    await ctx
      .db('reputation_scores')
      .insert({ agent_id: a.agent.id, score: 10, components: '{}', computed_at: new Date() });
    ctx.deps.caches.reputation.setTtl(150);
    const path = `/agents/${a.handle}/reputation`;
    expect((await api('GET', path)).body.data.score).to.equal(10);
    // A separate connection pool stands for another process: this process does not see its write.
    const other = knexFactory({ client: 'pg', connection: ctx.databaseUrl, pool: { min: 0, max: 1 } });
    try {
      await other('reputation_scores').where({ agent_id: a.agent.id }).update({ score: 11 });
    } finally {
      await other.destroy();
    }
    expect((await api('GET', path)).body.data.score).to.equal(10);
    await new Promise((r) => setTimeout(r, 200));
    expect((await api('GET', path)).body.data.score).to.equal(11);
  });

  it('default TTLs bound how late a write whose notification was lost shows', async () => {
    const { caches } = (await getContext()).deps;
    // A key revoked or an agent suspended elsewhere acts for at most 3 s more.
    expect(caches.apiKeys.defaultTtlMs).to.be.within(1000, 3000);
    // Leaderboards (recomputed about every 15 min) within 5 s; reputation (about every 30 min) within 30 s.
    expect(caches.leaderboards.defaultTtlMs).to.be.within(1000, 5000);
    expect(caches.reputation.defaultTtlMs).to.be.within(1000, 30_000);
  });
});

describe('read caches: anonymous responses', () => {
  afterEach(async () => (await getContext()).deps.caches.setTtl('feed', null));

  it('an anonymous read of a cached route is answered from memory with its own request id; a keyed read takes the full path', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    await db('reputation_scores').insert({
      agent_id: a.agent.id,
      score: 77,
      components: '{}',
      computed_at: new Date(),
    });
    const path = `/agents/${a.handle}/reputation`;
    const first = await api('GET', path);
    const second = await queries(() => api('GET', path));
    expect(second.n).to.equal(0);
    expect(second.value.status).to.equal(200);
    expect(second.value.text).to.equal(first.text);
    expect(second.value.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    expect(second.value.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(second.value.headers.get('x-request-id')).to.be.a('string').and.not.equal(first.headers.get('x-request-id'));
    expect(
      (await api('GET', path, { headers: { 'x-request-id': 'cached-req-0001' } })).headers.get('x-request-id'),
    ).to.equal('cached-req-0001');

    const keyed = await api('GET', path, { key: a.key });
    expect(keyed.status).to.equal(200);
    expect(keyed.text).to.equal(first.text);
    // With a key the request takes the full path: on the feed (response-cached for anonymous
    // reads too) the agent's read limit is counted.
    await api('GET', '/feed?limit=3');
    const keyedFeed = await api('GET', '/feed?limit=3', { key: a.key });
    expect(keyedFeed.status).to.equal(200);
    expect(keyedFeed.headers.get('ratelimit')).to.match(/^"read-agent";r=\d+;t=\d+$/);
  });

  it('a write through this process, or another minute of the service clock, is never answered from an older entry', async () => {
    const ctx = await getContext();
    (await getContext()).deps.caches.setTtl('feed', 60_000);
    const a = await newAgent();
    const slug = 'general';
    const tag = `t${Date.now().toString(36)}`;
    const path = `/feed?sort=new&tag=${tag}`;
    expect((await api('GET', path)).body.data).to.deep.equal([]);
    const created = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: slug, body: 'fresh', tags: [tag] },
    });
    expect(created.status).to.equal(201);
    expect((await api('GET', path)).body.data.map((p: any) => p.id)).to.deep.equal([created.body.data.id]);

    expect((await queries(() => api('GET', path))).n).to.equal(0);

    // The current week's leaderboard, asked again a week later (service clock), is the new week's.
    const now = await api('GET', '/leaderboards?category=rising');
    ctx.setNow(new Date(Date.now() + 7 * 24 * 3600 * 1000));
    try {
      const later = await api('GET', '/leaderboards?category=rising');
      expect(later.body.data.week).to.not.equal(now.body.data.week);
    } finally {
      ctx.setNow(null);
    }
  });

  it('requests for a feed page that is not in memory share one query, and a new post still shows on the next read', async () => {
    (await getContext()).deps.caches.setTtl('feed', 60_000);
    const [a, b] = [await newAgent(), await newAgent()];
    const tag = `s${Date.now().toString(36)}`;
    // Two authors: one agent's posts are 3 s apart.
    const post = (key: string, body: string) =>
      api('POST', '/posts', { key, body: { communitySlug: 'general', body, tags: [tag] } });
    const first = (await post(a.key, 'one')).body.data.id;
    const path = `/feed?sort=new&tag=${tag}`;
    // Twenty at once, as after a new post empties the cache under load: one feed query, one answer.
    const many = await queries(() => Promise.all(Array.from({ length: 20 }, () => api('GET', path))));
    expect(many.value.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    expect(new Set(many.value.map((r) => r.text)).size).to.equal(1);
    expect(many.value[0].body.data.map((p: any) => p.id)).to.deep.equal([first]);
    // One load for all twenty: the page statement, then the parts of its item (new to this process).
    expect(many.sql.filter((q) => q.includes('from posts p'))).to.have.length(2);
    // A post created meanwhile empties the cache and ends the sharing: its author's next read shows it.
    const second = (await post(b.key, 'two')).body.data.id;
    expect((await api('GET', path)).body.data.map((p: any) => p.id)).to.deep.equal([second, first]);
  });

  it('errors are never stored, and requests with a body or a cookie are not answered from memory', async () => {
    const bad = await api('GET', '/leaderboards?category=nope');
    expect(bad.status).to.equal(400);
    expect((await api('GET', '/leaderboards?category=nope')).body.error.code).to.equal('INVALID_CATEGORY');
    const path = '/leaderboards?category=funny';
    expect((await api('GET', path)).status).to.equal(200);
    const { baseUrl } = await getContext();
    const withBody = await rawRequest(baseUrl, {
      method: 'GET',
      path: '/api/v1' + path,
      headers: { 'content-type': 'application/json' },
      body: '{"__proto__":null}',
    });
    expect(withBody.status).to.equal(400);
    expect(withBody.body.error.code).to.equal('VALIDATION_FAILED');
    const withCookie = await queries(() => api('GET', path, { headers: { cookie: 'svc_session=nothing.valid' } }));
    expect(withCookie.value.status).to.equal(200);
    expect(withCookie.n).to.equal(0); // the body comes from the leaderboard cache, after the full path
  });
});

describe('read caches: every write path shows at once in feed, post, profile and reputation reads', () => {
  // Every cache on, with TTLs far longer than the test: only eviction can make a read fresh.
  beforeEach(async () => (await getContext()).deps.caches.setTtl('feed', 60_000));
  afterEach(async () => (await getContext()).deps.caches.setTtl('*', null));

  /** Reads twice (the second from memory where cached) and returns the second answer's body. */
  const read = async (p: string) => {
    await api('GET', p);
    const r = await api('GET', p);
    return r.body;
  };

  it('posts, votes, reactions, comments and their deletions, follows, a suspension and a scoring run', async () => {
    const { deps } = await getContext();
    const community = await newCommunity();
    const author = await newAgent({ owner: await newOwner({ verified: true }) });
    const fan = await newAgent({ owner: await newOwner({ verified: true }) });
    const feed = `/feed?community=${community}&sort=new`;
    const item = async (id: string) => (await read(feed)).data.find((p: any) => p.id === id);

    expect((await read(feed)).data).to.deep.equal([]);
    const created = await api('POST', '/posts', { key: author.key, body: { communitySlug: community, body: 'paths' } });
    expect(created.status).to.equal(201);
    const id = created.body.data.id;
    expect(
      (await read(feed)).data.map((p: any) => p.id),
      'new post',
    ).to.deep.equal([id]);
    expect((await read(`/posts/${id}`)).data.score).to.equal(0);

    expect((await api('POST', `/posts/${id}/vote`, { key: fan.key, body: { value: 1 } })).status).to.equal(200);
    expect((await item(id)).score, 'vote: feed').to.equal(1);
    expect((await read(`/posts/${id}`)).data.score, 'vote: post').to.equal(1);

    expect((await api('POST', `/posts/${id}/react`, { key: fan.key, body: { type: 'fire' } })).status).to.equal(200);
    expect((await item(id)).reactions.fire, 'reaction: feed').to.equal(1);
    expect((await read(`/posts/${id}`)).data.metrics.reactions.fire, 'reaction: post').to.equal(1);

    const comment = await api('POST', `/posts/${id}/comments`, { key: fan.key, body: { body: 'a reply' } });
    expect(comment.status).to.equal(201);
    expect((await item(id)).commentsCount, 'comment: feed').to.equal(1);
    expect((await read(`/posts/${id}`)).data.commentsCount, 'comment: post').to.equal(1);
    expect((await api('DELETE', `/comments/${comment.body.data.id}`, { key: fan.key })).status).to.equal(200);
    expect((await item(id)).commentsCount, 'comment deleted: feed').to.equal(0);
    expect((await read(`/posts/${id}`)).data.commentsCount, 'comment deleted: post').to.equal(0);

    expect((await read(`/agents/${author.handle}`)).data.stats.followers).to.equal(0);
    expect((await api('POST', `/agents/${author.handle}/follow`, { key: fan.key })).status).to.equal(200);
    expect((await read(`/agents/${author.handle}`)).data.stats.followers, 'follow: profile').to.equal(1);

    expect((await read(`/agents/${author.handle}/reputation`)).data.score).to.equal(null);
    await runFull(deps);
    expect((await read(`/agents/${author.handle}/reputation`)).data.score, 'scoring run').to.be.a('number');

    const second = await api('POST', '/posts', { key: fan.key, body: { communitySlug: community, body: 'stays' } });
    expect((await api('DELETE', `/posts/${id}`, { key: author.key })).status).to.equal(200);
    expect(
      (await read(feed)).data.map((p: any) => p.id),
      'post deleted: feed',
    ).to.deep.equal([second.body.data.id]);
    expect((await api('GET', `/posts/${id}`)).status, 'post deleted: post').to.equal(404);

    // The suspended agent's post leaves the feed; its reputation reads 0, suspended.
    expect((await read(`/agents/${fan.handle}/reputation`)).data.suspended).to.equal(false);
    await setAgentStatus(deps, fan.handle, 'suspended');
    expect((await read(feed)).data, 'suspension: feed').to.deep.equal([]);
    expect((await read(`/agents/${fan.handle}/reputation`)).data, 'suspension: reputation').to.deep.include({
      score: 0,
      suspended: true,
    });
  });
});
