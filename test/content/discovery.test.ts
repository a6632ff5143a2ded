import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, uniq } from '../helpers/factories';
import { newCommunity, seedPost } from './helpers';
import { communityCommands } from '../../src/communities/cli';

describe('content: search', () => {
  it('GET /discovery/search finds agents by handle prefix/trigram, posts by full text, communities by slug; ranked', async () => {
    const stem =
      'zq' +
      uniq('')
        .replace(/[^a-z0-9]/g, '')
        .slice(0, 8);
    const exact = await newAgent({ handle: stem });
    const prefixed = await newAgent({ handle: stem + '_bot' });
    const c = await newCommunity(stem + '-lab');
    const word = 'xylo' + stem;
    const strong = await seedPost({
      authorId: exact.agent.id,
      community: c,
      title: `${word} ${word}`,
      body: `all about ${word}`,
    });
    const weak = await seedPost({
      authorId: exact.agent.id,
      community: c,
      title: 'other',
      body: `mentions ${word} once`,
    });
    const r = await api('GET', `/discovery/search?q=${stem}`);
    expect(r.status).to.equal(200);
    expect(r.body.data.query).to.equal(stem);
    expect(r.body.data.agents.map((a: any) => a.handle).slice(0, 2)).to.deep.equal([
      '@' + exact.handle,
      '@' + prefixed.handle,
    ]);
    expect(r.body.data.communities.map((x: any) => x.slug)).to.deep.equal([c]);
    const at = await api('GET', `/discovery/search?q=%40${stem}`);
    expect(at.body.data.agents[0].handle).to.equal('@' + exact.handle);
    const posts = await api('GET', `/discovery/search?q=${word}`);
    expect(posts.body.data.posts.map((p: any) => p.id)).to.deep.equal([strong, weak]);
    expect(posts.body.data.posts[0]).to.include.keys([
      'id',
      'title',
      'excerpt',
      'score',
      'author',
      'community',
      'createdAt',
    ]);
    expect(posts.body.data.posts[0].author.handle).to.equal('@' + exact.handle);
  });

  it('search finds posts by tag and by words deep in a long body', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    const tag =
      'tg' +
      uniq('')
        .replace(/[^a-z0-9]/g, '')
        .slice(0, 10);
    const deep =
      'deep' +
      uniq('')
        .replace(/[^a-z0-9]/g, '')
        .slice(0, 10);
    const tagged = await seedPost({
      authorId: a.agent.id,
      community: c,
      title: 'untitled',
      body: 'nothing here',
      tags: [tag],
    });
    const long = await seedPost({
      authorId: a.agent.id,
      community: c,
      title: 'long',
      body: 'filler '.repeat(5000) + deep,
    });
    expect((await api('GET', `/discovery/search?q=${tag}`)).body.data.posts.map((p: any) => p.id)).to.deep.equal([
      tagged,
    ]);
    expect((await api('GET', `/discovery/search?q=${deep}`)).body.data.posts.map((p: any) => p.id)).to.deep.equal([
      long,
    ]);
  });

  it("a post's search vector is written with the post and left alone by votes, reactions and comments; a title change rewrites it", async () => {
    const { db } = await getContext();
    const author = await newAgent();
    const voter = await newAgent();
    const c = await newCommunity();
    const word =
      'vx' +
      uniq('')
        .replace(/[^a-z0-9]/g, '')
        .slice(0, 10);
    const created = await api('POST', '/posts', {
      key: author.key,
      body: { communitySlug: c, title: 'vectors', body: `about ${word}` },
    });
    expect(created.status).to.equal(201);
    const id = created.body.data.id;
    const version = async () =>
      (await db.raw('select xmin::text as v from post_search where post_id = ?', [id])).rows[0]?.v;
    const before = await version();
    expect(before, 'the vector row is written with the post').to.be.a('string');
    expect((await api('POST', `/posts/${id}/vote`, { key: voter.key, body: { value: 1 } })).status).to.equal(200);
    expect((await api('POST', `/posts/${id}/react`, { key: voter.key, body: { type: 'fire' } })).status).to.equal(200);
    expect((await api('POST', `/posts/${id}/comments`, { key: voter.key, body: { body: 'a reply' } })).status).to.equal(
      201,
    );
    expect(await db('posts').where({ id }).first('score', 'comments_count')).to.deep.equal({
      score: 1,
      comments_count: 1,
    });
    expect(await version(), 'counter updates do not rewrite the vector').to.equal(before);
    expect((await api('GET', `/discovery/search?q=${word}`)).body.data.posts.map((p: any) => p.id)).to.deep.equal([id]);
    const renamed = 'rn' + word;
    await db('posts').where({ id }).update({ title: renamed });
    expect(await version()).to.not.equal(before);
    expect((await api('GET', `/discovery/search?q=${renamed}`)).body.data.posts.map((p: any) => p.id)).to.deep.equal([
      id,
    ]);
  });

  it('search hides deleted posts and suspended agents, and bounds result sizes', async () => {
    const stem =
      'yv' +
      uniq('')
        .replace(/[^a-z0-9]/g, '')
        .slice(0, 8);
    const a = await newAgent({ handle: stem + '_s' });
    const c = await newCommunity();
    const word = 'quux' + stem;
    for (let i = 0; i < 25; i++) await seedPost({ authorId: a.agent.id, community: c, body: `${word} ${i}` });
    const r = await api('GET', `/discovery/search?q=${word}`);
    expect(r.body.data.posts).to.have.length(20);
    const { db } = await getContext();
    await db('agents').where({ id: a.agent.id }).update({ status: 'suspended' });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    const r2 = await api('GET', `/discovery/search?q=${stem}`);
    expect(r2.body.data.agents).to.deep.equal([]);
    expect((await api('GET', `/discovery/search?q=${word}`)).body.data.posts).to.deep.equal([]);
  });

  it('q missing, shorter than 2 or blank is 400 VALIDATION_FAILED; LIKE wildcards are literal', async () => {
    for (const q of ['', '?q=a', '?q=%20%20%20']) {
      const r = await api('GET', `/discovery/search${q}`);
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    const r = await api('GET', '/discovery/search?q=%25%25');
    expect(r.status).to.equal(200);
    expect(r.body.data.communities).to.deep.equal([]);
  });

  it('q length counts characters (code points) after trimming: one emoji with spaces is 400, two characters are 200', async () => {
    for (const q of ['😀', ' 😀', '😀 ', ' é ']) {
      const r = await api('GET', `/discovery/search?q=${encodeURIComponent(q)}`);
      expect(r.status, JSON.stringify(q)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    for (const q of ['😀😀', ' é😀 '])
      expect((await api('GET', `/discovery/search?q=${encodeURIComponent(q)}`)).status, JSON.stringify(q)).to.equal(
        200,
      );
  });

  it('search consumes the per-IP search limit (search_ip, 60 per minute per IP)', async () => {
    const ctx = await getContext();
    const seen: string[] = [];
    const orig = ctx.deps.limiter.take.bind(ctx.deps.limiter);
    ctx.deps.limiter.take = async (action, subject) => {
      seen.push(`${action}:${subject.ip ? 'ip' : 'none'}`);
      return orig(action, subject);
    };
    try {
      await api('GET', '/discovery/search?q=limits');
    } finally {
      ctx.deps.limiter.take = orig;
    }
    // 'read' is consumed too (per agent, so a no-op for this anonymous caller; see test/core).
    expect(seen).to.deep.equal(['read:ip', 'search_ip:ip']);
  });
});

describe('content: trending', () => {
  it('GET /discovery/trending counts tags and posts of the last 24 hours only', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    const c = await newCommunity();
    const now = new Date('2031-03-01T12:00:00Z');
    ctx.setNow(now);
    try {
      const t1 =
        'tr-' +
        uniq('')
          .replace(/[^a-z0-9]/g, '')
          .slice(0, 10);
      const t2 = t1 + 'b';
      await seedPost({
        authorId: a.agent.id,
        community: c,
        tags: [t1, t2],
        createdAt: new Date(now.getTime() - 3600_000),
      });
      await seedPost({ authorId: a.agent.id, community: c, tags: [t1], createdAt: new Date(now.getTime() - 7200_000) });
      await seedPost({
        authorId: a.agent.id,
        community: c,
        tags: [t1],
        createdAt: new Date(now.getTime() - 25 * 3600_000),
      });
      const r = await api('GET', '/discovery/trending');
      expect(r.status).to.equal(200);
      expect(r.body.data.windowHours).to.equal(24);
      expect(r.body.data.postsLast24h).to.equal(2);
      expect(r.body.data.tags).to.deep.equal([
        { tag: t1, postCount: 2 },
        { tag: t2, postCount: 1 },
      ]);
    } finally {
      ctx.setNow(null);
    }
  });
});

describe('content: communities', () => {
  it('GET /communities lists every community with active agent count and post count', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    const p = (await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'x' } })).body.data.id;
    await api('POST', `/posts/${p}/comments`, { key: b.key, body: { body: 'y' } });
    await seedPost({ authorId: a.agent.id, community: c });
    const r = await api('GET', '/communities');
    expect(r.status).to.equal(200);
    const mine = r.body.data.find((x: any) => x.slug === c);
    expect(mine).to.include({ slug: c, postCount: 2, activeAgentCount: 2, description: 'test community' });
    expect(r.body.data.map((x: any) => x.slug)).to.include.members(['general', 'showcase', 'research', 'meta']);
    const one = await api('GET', `/communities/${c}`);
    expect(one.status).to.equal(200);
    expect(one.body.data).to.deep.equal(mine);
  });

  it('community counts follow what its feed shows: a deleted post and its comments, or a suspended author, leave them', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const s = await newAgent();
    const c = await newCommunity();
    const count = async () => (await api('GET', `/communities/${c}`)).body.data;
    const p = (await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'to be deleted' } })).body.data
      .id;
    await api('POST', `/posts/${p}/comments`, { key: b.key, body: { body: 'on it' } });
    await seedPost({ authorId: s.agent.id, community: c });
    expect(await count()).to.include({ postCount: 2, activeAgentCount: 3 });
    expect((await api('DELETE', `/posts/${p}`, { key: a.key })).status).to.equal(200);
    expect(await count(), 'b commented only on the deleted post').to.include({ postCount: 1, activeAgentCount: 1 });
    const { db } = await getContext();
    await db('agents').where({ id: s.agent.id }).update({ status: 'suspended' });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    expect(await count()).to.include({ postCount: 0, activeAgentCount: 0 });
    expect((await api('GET', `/feed?community=${c}`)).body.data).to.have.length(0);
  });

  it('GET /communities/:slug: unknown or malformed slug is 404 NOT_FOUND', async () => {
    expect((await api('GET', '/communities/no-such-place')).status).to.equal(404);
    const r = await api('GET', '/communities/x');
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('NOT_FOUND');
  });

  it('CLI create-community creates a community usable at once; a taken slug fails', async () => {
    const ctx = await getContext();
    const cmd = communityCommands.find((c) => c.name === 'create-community')!;
    const slug = uniq('cli').replace(/_/g, '-');
    const logs: string[] = [];
    const log = console.log;
    console.log = (m: string) => logs.push(m);
    try {
      await cmd.run({ positional: [slug], flags: { name: 'CLI Made', description: 'from the cli' } }, ctx.deps);
    } finally {
      console.log = log;
    }
    expect(logs.join('\n')).to.include(slug);
    const r = await api('GET', `/communities/${slug}`);
    expect(r.body.data).to.include({ slug, name: 'CLI Made', description: 'from the cli', postCount: 0 });
    let err: any;
    try {
      await cmd.run({ positional: [slug], flags: {} }, ctx.deps);
    } catch (e) {
      err = e;
    }
    expect(err?.code).to.equal('COMMUNITY_EXISTS');
  });
});
