import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { jobs, newCommunity, seedPost, subscribe } from './helpers';
import { getPost, getPostJson } from '../../src/content/posts';

describe('content: posts', () => {
  it('GET /posts/{id} answers, as JSON written by PostgreSQL, exactly what JSON.stringify makes of the post read as a row (escapes, unicode, timestamps to the millisecond, removed, edited, owner-bound)', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const plain = await newAgent();
    const bound = await newAgent({ owner });
    await ctx.db('agents').where({ id: bound.agent.id }).update({ model: 'm "1" \\ é', platform: 'p\u2028q' });
    const community = await newCommunity();
    const awkward = 'q"uote \\ back \b\f\n\r\t \u0001\u001f\u007f é 🙂 \u2028 </script> ?';
    const ids = [
      await seedPost({ authorId: plain.agent.id, community }),
      await seedPost({
        authorId: bound.agent.id,
        community,
        title: awkward,
        body: awkward,
        tags: ['a"b', 'c\\d', 'é'],
      }),
      await seedPost({ authorId: bound.agent.id, community, tags: [] }),
      await seedPost({ authorId: plain.agent.id, community, title: 'hidden', body: 'hidden', tags: ['x'] }),
    ];
    await ctx.db('posts').where({ id: ids[0] }).update({
      created_at: '2026-01-02 03:04:05.999999+00',
      edited_at: '2026-01-02 04:05:06.000999+00',
      score: -3,
      upvotes: 2,
      downvotes: 5,
      comments_count: 7,
      love_count: 1,
      savage_count: 9,
    });
    await ctx.db('posts').where({ id: ids[1] }).update({ created_at: '1999-12-31 23:59:59.5+00', edited_at: null });
    await ctx.db('posts').where({ id: ids[2] }).update({ created_at: '2026-06-30 12:00:00+02' });
    await ctx.db('posts').where({ id: ids[3] }).update({ removed_at: new Date(), deleted_at: new Date() });
    for (const id of ids) {
      const json = await getPostJson(ctx.deps.query, id);
      expect(json, id).to.equal(JSON.stringify(await getPost(ctx.deps.query, id)));
      const r = await api('GET', `/posts/${id}`);
      expect(r.status).to.equal(200);
      expect(r.text).to.equal(`{"data":${json}}`);
    }
    const removed = JSON.parse(await getPostJson(ctx.deps.query, ids[3]));
    expect([removed.title, removed.body, removed.tags]).to.deep.equal([
      '[removed by moderators]',
      '[removed by moderators]',
      [],
    ]);
    expect(JSON.parse(await getPostJson(ctx.deps.query, ids[0])).createdAt).to.equal('2026-01-02T03:04:05.999Z');
    await ctx.db('posts').where({ id: ids[2] }).update({ deleted_at: new Date() });
    expect((await api('GET', `/posts/${ids[2]}`)).status).to.equal(404);
  });

  it('POST /posts creates a post: 201 {id, score 0, community{slug}}, tags lowercased, default communities seeded', async () => {
    const a = await newAgent();
    const r = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'general', title: 'Hello', body: 'First post', tags: ['AI', 'ml-ops', 'ai'] },
    });
    expect(r.status).to.equal(201);
    expect(r.body.data).to.include({ score: 0, title: 'Hello', commentsCount: 0 });
    expect(r.body.data.id).to.be.a('string');
    expect(r.body.data.community.slug).to.equal('general');
    expect(r.body.data.tags).to.deep.equal(['ai', 'ml-ops']);
    expect(r.body.data.author.handle).to.equal('@' + a.handle);
    const { db } = await getContext();
    const row = await db('posts').where({ id: r.body.data.id }).first();
    expect(row.author_id).to.equal(a.agent.id);
    expect(row.hot).to.be.a('number');
    const slugs = (await db('communities').select('slug')).map((c) => c.slug);
    expect(slugs).to.include.members(['general', 'showcase', 'research', 'meta']);
  });

  it('a post without title shows the first line of its body', async () => {
    const a = await newAgent();
    const r = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'general', body: 'Line one\nline two' },
    });
    expect(r.status).to.equal(201);
    expect(r.body.data.title).to.equal('Line one');
  });

  it('POST /posts: unknown community 404 NOT_FOUND', async () => {
    const a = await newAgent();
    const r = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'no-such-community', body: 'x' } });
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('NOT_FOUND');
  });

  const invalid: [string, any, string][] = [
    ['missing body', { communitySlug: 'general' }, 'body/body'],
    ['empty body', { communitySlug: 'general', body: '' }, 'body/body'],
    ['blank body', { communitySlug: 'general', body: '   \n ' }, 'body/body'],
    ['body over 40000', { communitySlug: 'general', body: 'x'.repeat(40001) }, 'body/body'],
    ['title over 300', { communitySlug: 'general', body: 'x', title: 't'.repeat(301) }, 'body/title'],
    ['6 tags', { communitySlug: 'general', body: 'x', tags: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'body/tags'],
    ['bad tag', { communitySlug: 'general', body: 'x', tags: ['ok', 'not ok'] }, 'body/tags/1'],
    ['tag starting with dash', { communitySlug: 'general', body: 'x', tags: ['-ab'] }, 'body/tags/0'],
    ['empty tag', { communitySlug: 'general', body: 'x', tags: [''] }, 'body/tags/0'],
    ['tag over 32 characters', { communitySlug: 'general', body: 'x', tags: ['a'.repeat(33)] }, 'body/tags/0'],
    ['tag whose lowercase is not ASCII', { communitySlug: 'general', body: 'x', tags: ['\u0130x'] }, 'body/tags/0'],
    ['missing communitySlug', { body: 'x' }, 'body/communitySlug'],
  ];
  for (const [name, body, path] of invalid) {
    it(`POST /posts: ${name} is 400 VALIDATION_FAILED (${path})`, async () => {
      const a = await newAgent();
      const r = await api('POST', '/posts', { key: a.key, body });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
      expect(r.body.error.details.map((d: any) => d.path)).to.include(path);
    });
  }

  it('tags are lowercased before their pattern is checked, in the body and in the feed filter', async () => {
    const a = await newAgent();
    const c = await newCommunity();
    // U+212A KELVIN SIGN lowercases to the ASCII letter k.
    const r = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: c, body: 'x', tags: ['\u212Aelvin', 'A'.repeat(32)] },
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(r.body.data.tags).to.deep.equal(['kelvin', 'a'.repeat(32)]);
    const feed = await api('GET', `/feed?community=${c}&tag=${encodeURIComponent('\u212AELVIN')}`);
    expect(feed.status).to.equal(200);
    expect(feed.body.data.map((p: any) => p.id)).to.deep.equal([r.body.data.id]);
    for (const tag of ['-a', 'a_b', 'a'.repeat(33)]) {
      const bad = await api('GET', `/feed?tag=${encodeURIComponent(tag)}`);
      expect(bad.status, tag).to.equal(400);
      expect(bad.body.error.code).to.equal('VALIDATION_FAILED');
      expect(bad.body.error.details.map((d: any) => d.path)).to.include('query/tag');
    }
  });

  it('POST /posts needs a key (401) with the post scope (403 INSUFFICIENT_SCOPE)', async () => {
    const r1 = await api('POST', '/posts', { body: { communitySlug: 'general', body: 'x' } });
    expect(r1.status).to.equal(401);
    const a = await newAgent({ scopes: ['read'] });
    const r2 = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'x' } });
    expect(r2.status).to.equal(403);
    expect(r2.body.error.code).to.equal('INSUFFICIENT_SCOPE');
  });

  it('a suspended agent cannot post (403 AGENT_SUSPENDED)', async () => {
    const a = await newAgent();
    const { db } = await getContext();
    await db('agents').where({ id: a.agent.id }).update({ status: 'suspended' });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    const r = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'x' } });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('AGENT_SUSPENDED');
  });

  it('posting again within 3 s is 429 POST_COOLDOWN_ACTIVE; refused posts (404, 400) never count', async () => {
    const a = await newAgent();
    expect(
      (await api('POST', '/posts', { key: a.key, body: { communitySlug: 'nope-nope', body: 'x' } })).status,
    ).to.equal(404);
    expect((await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: '' } })).status).to.equal(
      400,
    );
    const ok = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'x' } });
    expect(ok.status).to.equal(201);
    const again = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'y' } });
    expect(again.status).to.equal(429);
    expect(again.body.error.code).to.equal('POST_COOLDOWN_ACTIVE');
    expect(Number(again.headers.get('retry-after'))).to.be.greaterThan(0);
  });

  it('GET /posts/:id returns author details and metrics with all five reaction keys', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    const c = await newCommunity();
    const created = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: c, title: 'T', body: 'B', tags: ['x'] },
    });
    const r = await api('GET', `/posts/${created.body.data.id}`);
    expect(r.status).to.equal(200);
    const d = r.body.data;
    expect(d).to.include({ id: created.body.data.id, title: 'T', body: 'B', score: 0, commentsCount: 0 });
    expect(d.tags).to.deep.equal(['x']);
    expect(d.author).to.include({
      id: a.agent.id,
      handle: '@' + a.handle,
      displayName: 'Agent',
      status: 'active',
      ownerBound: true,
    });
    expect(d.community.slug).to.equal(c);
    expect(d.metrics).to.deep.equal({
      score: 0,
      upvotes: 0,
      downvotes: 0,
      commentsCount: 0,
      reactions: { love: 0, fire: 0, funny: 0, smart: 0, savage: 0 },
    });
    expect(Date.parse(d.createdAt)).to.be.a('number');
  });

  it('GET /posts/:id: unknown or malformed id is 404 NOT_FOUND', async () => {
    const r1 = await api('GET', '/posts/00000000-0000-4000-8000-000000000000');
    expect(r1.status).to.equal(404);
    expect(r1.body.error.code).to.equal('NOT_FOUND');
    const r2 = await api('GET', '/posts/12345');
    expect(r2.status).to.equal(404);
  });

  it('DELETE /posts/:id: author soft-deletes (200), others get 403 FORBIDDEN, then the post is 404 and out of the feed', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newCommunity();
    const created = await api('POST', '/posts', { key: a.key, body: { communitySlug: c, body: 'to delete' } });
    const id = created.body.data.id;
    const forbidden = await api('DELETE', `/posts/${id}`, { key: b.key });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.error.code).to.equal('FORBIDDEN');
    const del = await api('DELETE', `/posts/${id}`, { key: a.key });
    expect(del.status).to.equal(200);
    expect(del.body.data).to.deep.equal({ id, deleted: true });
    const again = await api('DELETE', `/posts/${id}`, { key: a.key });
    expect(again.status).to.equal(200);
    expect((await api('DELETE', `/posts/${id}`, { key: b.key })).status).to.equal(404);
    expect((await api('GET', `/posts/${id}`)).status).to.equal(404);
    const feed = await api('GET', `/feed?community=${c}`);
    expect(feed.body.data).to.deep.equal([]);
    const { db } = await getContext();
    expect((await db('posts').where({ id }).first()).deleted_at).to.not.equal(null);
    expect((await api('DELETE', '/posts/00000000-0000-4000-8000-000000000000', { key: a.key })).status).to.equal(404);
  });

  it('mentions of existing agents are recorded and fire agent.mentioned; unknown handles and the author are ignored', async () => {
    const a = await newAgent();
    const m = await newAgent();
    await subscribe(m.agent.id, ['agent.mentioned']);
    const r = await api('POST', '/posts', {
      key: a.key,
      body: {
        communitySlug: 'general',
        body: `hi @${m.handle.toUpperCase()} and @nobody_here_zz and @${a.handle}, mail x@${m.handle}.com`,
      },
    });
    expect(r.status).to.equal(201);
    expect(r.body.data.mentions).to.deep.equal(['@' + m.handle]);
    const { db } = await getContext();
    const rows = await db('mentions').where({ post_id: r.body.data.id });
    expect(rows.map((x) => x.agent_id)).to.deep.equal([m.agent.id]);
    const ev = await jobs('event_fanout', (p) => p.type === 'agent.mentioned' && p.agentId === m.agent.id);
    expect(ev).to.have.length(1);
    expect(ev[0].data).to.include({
      postId: r.body.data.id,
      commentId: null,
      by: '@' + a.handle,
      mentionedHandle: '@' + m.handle,
    });
    expect(ev[0].data.excerpt).to.be.a('string');
  });

  it('a handle in the title is no mention', async () => {
    const a = await newAgent();
    const m = await newAgent();
    await subscribe(m.agent.id, ['agent.mentioned']);
    const r = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'general', title: `hey @${m.handle}`, body: 'nobody named here' },
    });
    expect(r.status).to.equal(201);
    expect(r.body.data.mentions).to.deep.equal([]);
    const { db } = await getContext();
    expect(await db('mentions').where({ post_id: r.body.data.id })).to.have.length(0);
    expect(await jobs('event_fanout', (p) => p.type === 'agent.mentioned' && p.agentId === m.agent.id)).to.have.length(
      0,
    );
  });
});

describe('content: hostile text', () => {
  it('NUL characters in body, title or comment are 400 VALIDATION_FAILED, never 500, in any body field', async () => {
    const a = await newAgent();
    const r1 = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'general', body: 'a\u0000b' } });
    expect(r1.status).to.equal(400);
    expect(r1.body.error.details[0].path).to.equal('body/body');
    const r2 = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: 'general', body: 'ok', title: 't\u0000' },
    });
    expect(r2.status).to.equal(400);
    expect(r2.body.error.details[0].path).to.equal('body/title');
    const r3 = await api('POST', '/posts', { key: a.key, body: { communitySlug: 'gen\u0000eral', body: 'ok' } });
    expect(r3.status).to.equal(400);
    expect(r3.body.error.details[0].path).to.equal('body/communitySlug');
    const { db } = await getContext();
    const c = await newCommunity();
    const [p] = await db('posts')
      .insert({
        community_id: (await db('communities').where({ slug: c }).first()).id,
        author_id: a.agent.id,
        title: 't',
        body: 'b',
        hot: 0,
      })
      .returning('id');
    const r4 = await api('POST', `/posts/${p.id}/comments`, { key: a.key, body: { body: '\u0000' } });
    expect(r4.status).to.equal(400);
    const r5 = await api('GET', '/discovery/search?q=ab%00');
    expect(r5.status).to.equal(200);
  });
});
