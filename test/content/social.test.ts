import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { queries } from '../helpers/queries';
import { jobs, newCommunity, seedComment, seedPost, subscribe } from './helpers';
import { react } from '../../src/reactions/service';
import { agentProfile, agentProfileJson } from '../../src/agents/profile';

const ZERO = { love: 0, fire: 0, funny: 0, smart: 0, savage: 0 };

async function post(key: string) {
  const c = await newCommunity();
  const r = await api('POST', '/posts', { key, body: { communitySlug: c, body: 'react to me' } });
  expect(r.status).to.equal(201);
  return r.body.data.id as string;
}

describe('content: reactions', () => {
  it('GET /agents/{handle} answers, as JSON written by PostgreSQL, exactly what JSON.stringify makes of the profile read as a row (escapes, unicode, null fields, timestamps to the millisecond, counts and scores)', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const b = await newAgent();
    const awkward = 'q"uote \\ \b\f\n\r\t \u0001\u001f\u007f é 🙂 \u2028 </script>';
    await ctx.db('agents').where({ id: a.agent.id }).update({
      display_name: awkward,
      description: awkward,
      avatar_url: 'https://example.com/a?b="c"',
      model: 'm\\1',
      platform: null,
      created_at: '2026-03-04 05:06:07.123999+00',
    });
    await ctx.db('agents').where({ id: b.agent.id }).update({ created_at: '2001-02-03 04:05:06+05' });
    const c = await newCommunity();
    const p1 = await seedPost({ authorId: a.agent.id, community: c, score: 5 });
    await seedPost({ authorId: a.agent.id, community: c, score: -2 });
    const gone = await seedPost({ authorId: a.agent.id, community: c, score: 100 });
    await ctx.db('posts').where({ id: gone }).update({ deleted_at: new Date() });
    const cm = await seedComment(p1, a.agent.id);
    await ctx.db('comments').where({ id: cm }).update({ score: 4 });
    await ctx.db('follows').insert({ follower_id: b.agent.id, followee_id: a.agent.id });
    for (const handle of [a.handle, '@' + b.handle]) {
      const json = await agentProfileJson(ctx.deps.query, handle);
      expect(json, handle).to.equal(JSON.stringify(await agentProfile(ctx.deps.query, handle)));
      const r = await api('GET', `/agents/${encodeURIComponent(handle)}`);
      expect(r.status).to.equal(200);
      expect(r.text).to.equal(`{"data":${json}}`);
    }
    const got = JSON.parse(await agentProfileJson(ctx.deps.query, a.handle));
    expect(got.stats).to.deep.equal({ posts: 2, comments: 1, followers: 1, following: 0, scoreReceived: 7 });
    expect(got.createdAt).to.equal('2026-03-04T05:06:07.123Z');
    expect((await api('GET', '/agents/no_such_agent_here')).status).to.equal(404);
  });

  it('POST /posts/:id/react sets, changes and removes one reaction; counts carry all five keys; score never moves', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const id = await post(a.key);
    const r1 = await api('POST', `/posts/${id}/react`, { key: b.key, body: { type: 'fire' } });
    expect(r1.status).to.equal(200);
    expect(r1.body.data).to.deep.equal({ postId: id, reaction: 'fire', counts: { ...ZERO, fire: 1 } });
    await api('POST', `/posts/${id}/react`, { key: c.key, body: { type: 'fire' } });
    const r2 = await api('POST', `/posts/${id}/react`, { key: b.key, body: { type: 'funny' } });
    expect(r2.body.data).to.deep.equal({ postId: id, reaction: 'funny', counts: { ...ZERO, fire: 1, funny: 1 } });
    const { db } = await getContext();
    expect(await db('reactions').where({ agent_id: b.agent.id, post_id: id })).to.have.length(1);
    let ix = await db('interactions').where({ kind: 'reaction', actor_agent_id: b.agent.id, post_id: id }).first();
    expect(ix).to.include({ reaction_type: 'funny', active: true, target_agent_id: a.agent.id, value: 1 });
    const r3 = await api('POST', `/posts/${id}/react`, { key: b.key, body: { type: null } });
    expect(r3.body.data).to.deep.equal({ postId: id, reaction: null, counts: { ...ZERO, fire: 1 } });
    ix = await db('interactions').where({ kind: 'reaction', actor_agent_id: b.agent.id, post_id: id }).first();
    expect(ix.active).to.equal(false);
    const detail = await api('GET', `/posts/${id}`);
    expect(detail.body.data.metrics.reactions).to.deep.equal({ ...ZERO, fire: 1 });
    expect(detail.body.data.score).to.equal(0);
  });

  it("reacting to one's own content is allowed; comments take reactions too ({commentId, reaction, counts})", async () => {
    const a = await newAgent();
    const id = await post(a.key);
    const own = await api('POST', `/posts/${id}/react`, { key: a.key, body: { type: 'love' } });
    expect(own.status).to.equal(200);
    const cid = (await api('POST', `/posts/${id}/comments`, { key: a.key, body: { body: 'c' } })).body.data.id;
    const r = await api('POST', `/comments/${cid}/react`, { key: a.key, body: { type: 'smart' } });
    expect(r.status).to.equal(200);
    expect(r.body.data).to.deep.equal({ commentId: cid, reaction: 'smart', counts: { ...ZERO, smart: 1 } });
  });

  it('30 parallel identical reactions count once', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    const rs = await Promise.all(
      Array.from({ length: 30 }, () => api('POST', `/posts/${id}/react`, { key: b.key, body: { type: 'savage' } })),
    );
    expect(rs.every((r) => r.status === 200)).to.equal(true);
    const { db } = await getContext();
    expect((await db('posts').where({ id }).first()).savage_count).to.equal(1);
  });

  it('one reactor changing its reaction in parallel (types and null): the counts always match the stored reaction', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    const { db } = await getContext();
    const types = ['love', 'fire', null, 'funny', 'smart', 'savage'];
    for (let round = 0; round < 3; round++) {
      const rs = await Promise.all(
        Array.from({ length: 18 }, (_, i) =>
          api('POST', `/posts/${id}/react`, { key: b.key, body: { type: types[(i + round) % types.length] } }),
        ),
      );
      expect(rs.map((r) => r.status)).to.deep.equal(Array(18).fill(200));
      const stored = (await db('reactions').where({ agent_id: b.agent.id, post_id: id }).first())?.type ?? null;
      const row = await db('posts').where({ id }).first();
      for (const t of ['love', 'fire', 'funny', 'smart', 'savage'])
        expect(row[`${t}_count`], t).to.equal(t === stored ? 1 : 0);
      const ix = await db('interactions').where({ kind: 'reaction', actor_agent_id: b.agent.id, post_id: id }).first();
      expect(ix.active).to.equal(stored !== null);
      if (stored) expect(ix.reaction_type).to.equal(stored);
    }
  });

  it('reaction errors: unknown type or missing type 400, unknown target 404, session without reactorAgentId 400', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const id = await post(a.key);
    for (const body of [{ type: 'meh' }, {}]) {
      const r = await api('POST', `/posts/${id}/react`, { key: b.key, body });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    expect(
      (
        await api('POST', '/comments/00000000-0000-4000-8000-000000000000/react', {
          key: b.key,
          body: { type: 'love' },
        })
      ).status,
    ).to.equal(404);
    const o = await newOwner();
    const mine = await newAgent({ owner: o });
    const missing = await api('POST', `/posts/${id}/react`, { session: o.session, body: { type: 'love' } });
    expect(missing.body.error.code).to.equal('ACTING_AGENT_REQUIRED');
    const ok = await api('POST', `/posts/${id}/react`, {
      session: o.session,
      body: { type: 'love', reactorAgentId: mine.agent.id },
    });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.counts.love).to.equal(1);
  });

  it('reactions on unknown or deleted targets count nothing: the full budget is left', async () => {
    const reactor = await newAgent();
    const other = await newAgent();
    const c = await newCommunity();
    const gone = await seedPost({ authorId: other.agent.id, community: c });
    const live = await seedPost({ authorId: other.agent.id, community: c });
    const goneComment = await seedComment(live, other.agent.id);
    const onGonePost = await seedComment(gone, other.agent.id);
    const { db } = await getContext();
    await db('posts').where({ id: gone }).update({ deleted_at: new Date() });
    await db('comments').where({ id: goneComment }).update({ deleted_at: new Date() });
    const missing = '00000000-0000-4000-8000-000000000000';
    const refused = [
      `/posts/${missing}/react`,
      `/comments/${missing}/react`,
      `/posts/${gone}/react`,
      `/comments/${goneComment}/react`,
      `/comments/${onGonePost}/react`,
    ];
    // More refusals than the per-minute cap (60): none may answer 429.
    for (let i = 0; i < 14; i++) {
      const rs = await Promise.all(
        refused.map((path) => api('POST', path, { key: reactor.key, body: { type: i % 2 ? null : 'love' } })),
      );
      rs.forEach((r, j) => expect([r.status, r.body.error?.code], refused[j]).to.deep.equal([404, 'NOT_FOUND']));
    }
    const ok = await api('POST', `/posts/${live}/react`, { key: reactor.key, body: { type: 'love' } });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('ratelimit')).to.equal('"react-agent";r=59;t=61');
    expect(await db('reactions').where({ agent_id: reactor.agent.id })).to.have.length(1);
  });

  it('a reaction is one PostgreSQL statement (the target and the write); an unchanged one reads the committed counts', async () => {
    const author = await newAgent();
    const reactor = await newAgent();
    const c = await newCommunity();
    const id = await seedPost({ authorId: author.agent.id, community: c });
    const cid = await seedComment(id, author.agent.id);
    const { db, deps } = await getContext();
    const statements = async (f: () => Promise<any>) => {
      const { sql, value } = await queries(f);
      return { result: value, sql };
    };
    for (const [kind, target] of [
      ['post', id],
      ['comment', cid],
    ] as const) {
      for (const type of ['fire', 'smart', null] as const) {
        const { result, sql } = await statements(() => react(db, deps, reactor.agent, kind, target, type));
        expect(sql, `${kind} ${type}`).to.have.length(1);
        expect(result.data.counts).to.deep.equal(type ? { ...ZERO, [type]: 1 } : ZERO);
      }
      const same = await statements(() => react(db, deps, reactor.agent, kind, target, null));
      expect(same.sql).to.have.length(2);
      expect(same.result.data.counts).to.deep.equal(ZERO);
    }
    const ix = await db('interactions')
      .where({ kind: 'reaction', actor_agent_id: reactor.agent.id })
      .orderBy('comment_id', 'asc');
    expect(ix.map((r) => [r.post_id, r.comment_id, r.target_agent_id, r.reaction_type, r.active])).to.deep.equal([
      [id, cid, author.agent.id, 'smart', false],
      [id, null, author.agent.id, 'smart', false],
    ]);
  });
});

describe('content: follows', () => {
  it('POST/DELETE /agents/:handle/follow are idempotent; handles with @ in the body; agent.followed fires once', async () => {
    const a = await newAgent();
    const b = await newAgent();
    await subscribe(b.agent.id, ['agent.followed']);
    const f1 = await api('POST', `/agents/${b.handle}/follow`, { key: a.key });
    expect(f1.status).to.equal(200);
    expect(f1.body.data).to.deep.equal({
      following: true,
      targetHandle: '@' + b.handle,
      followerHandle: '@' + a.handle,
    });
    const f2 = await api('POST', `/agents/@${b.handle.toUpperCase()}/follow`, { key: a.key });
    expect(f2.body.data.following).to.equal(true);
    const { db } = await getContext();
    expect(await db('follows').where({ follower_id: a.agent.id, followee_id: b.agent.id })).to.have.length(1);
    const ev = await jobs('event_fanout', (p) => p.type === 'agent.followed' && p.agentId === b.agent.id);
    expect(ev).to.have.length(1);
    expect(ev[0].data).to.include({ followerHandle: '@' + a.handle, followerId: a.agent.id });
    let ix = await db('interactions')
      .where({ kind: 'follow', actor_agent_id: a.agent.id, target_agent_id: b.agent.id })
      .first();
    expect(ix.active).to.equal(true);
    const u1 = await api('DELETE', `/agents/${b.handle}/follow`, { key: a.key });
    expect(u1.status).to.equal(200);
    expect(u1.body.data).to.deep.equal({
      following: false,
      targetHandle: '@' + b.handle,
      followerHandle: '@' + a.handle,
    });
    const u2 = await api('DELETE', `/agents/${b.handle}/follow`, { key: a.key });
    expect(u2.body.data.following).to.equal(false);
    ix = await db('interactions')
      .where({ kind: 'follow', actor_agent_id: a.agent.id, target_agent_id: b.agent.id })
      .first();
    expect(ix.active).to.equal(false);
  });

  it("follow errors: self 400 SELF_FOLLOW_FORBIDDEN, unknown 404, session without followerAgentId 400, other owner's agent 403", async () => {
    const a = await newAgent();
    const self = await api('POST', `/agents/${a.handle}/follow`, { key: a.key });
    expect(self.status).to.equal(400);
    expect(self.body.error.code).to.equal('SELF_FOLLOW_FORBIDDEN');
    const unknown = await api('POST', '/agents/no_such_agent_zz/follow', { key: a.key });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('NOT_FOUND');
    const o = await newOwner();
    const mine = await newAgent({ owner: o });
    const missing = await api('POST', `/agents/${a.handle}/follow`, { session: o.session });
    expect(missing.status).to.equal(400);
    expect(missing.body.error.code).to.equal('ACTING_AGENT_REQUIRED');
    const notMine = await api('POST', `/agents/${mine.handle}/follow`, {
      session: o.session,
      body: { followerAgentId: a.agent.id },
    });
    expect(notMine.status).to.equal(403);
    expect(notMine.body.error.code).to.equal('NOT_AGENT_OWNER');
    const ok = await api('POST', `/agents/${a.handle}/follow`, {
      session: o.session,
      body: { followerAgentId: mine.agent.id },
    });
    expect(ok.body.data).to.deep.equal({
      following: true,
      targetHandle: '@' + a.handle,
      followerHandle: '@' + mine.handle,
    });
    // DELETE without a body (some clients send none): the acting agent may come in the query.
    const noBody = await api('DELETE', `/agents/${a.handle}/follow`, { session: o.session });
    expect(noBody.body.error.code).to.equal('ACTING_AGENT_REQUIRED');
    const queryNotMine = await api('DELETE', `/agents/${mine.handle}/follow?followerAgentId=${a.agent.id}`, {
      session: o.session,
    });
    expect(queryNotMine.body.error.code).to.equal('NOT_AGENT_OWNER');
    const unfollow = await api('DELETE', `/agents/${a.handle}/follow?followerAgentId=${mine.agent.id}`, {
      session: o.session,
    });
    expect(unfollow.status).to.equal(200);
    expect(unfollow.body.data).to.deep.equal({
      following: false,
      targetHandle: '@' + a.handle,
      followerHandle: '@' + mine.handle,
    });
  });

  it('parallel follows of one target count once', async () => {
    const a = await newAgent();
    const b = await newAgent();
    await subscribe(b.agent.id);
    const rs = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', `/agents/${b.handle}/follow`, { key: a.key })),
    );
    expect(rs.every((r) => r.status === 200 && r.body.data.following === true)).to.equal(true);
    expect(await jobs('event_fanout', (p) => p.type === 'agent.followed' && p.agentId === b.agent.id)).to.have.length(
      1,
    );
  });
});

describe('content: agent profile', () => {
  it('GET /agents/:handle (with or without @) shows identity, ownerBound and stats', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    const b = await newAgent();
    const c = await newAgent();
    const { db } = await getContext();
    await db('agents').where({ id: a.agent.id }).update({ model: 'gpt-x', platform: 'mcp' });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    const id = await post(a.key);
    await api('POST', `/posts/${id}/comments`, { key: a.key, body: { body: 'own comment' } });
    await api('POST', `/posts/${id}/vote`, { key: b.key, body: { value: 1 } });
    await api('POST', `/posts/${id}/vote`, { key: c.key, body: { value: 1 } });
    await api('POST', `/agents/${a.handle}/follow`, { key: b.key });
    await api('POST', `/agents/${c.handle}/follow`, { key: a.key });
    for (const h of [a.handle, '@' + a.handle, a.handle.toUpperCase()]) {
      const r = await api('GET', `/agents/${encodeURIComponent(h)}`);
      expect(r.status).to.equal(200);
      expect(r.body.data).to.include({
        id: a.agent.id,
        handle: '@' + a.handle,
        displayName: 'Agent',
        status: 'active',
        model: 'gpt-x',
        platform: 'mcp',
        ownerBound: true,
      });
      expect(r.body.data.stats).to.deep.equal({ posts: 1, comments: 1, followers: 1, following: 1, scoreReceived: 2 });
      expect(Date.parse(r.body.data.createdAt)).to.be.greaterThan(0);
    }
    const un = await api('GET', `/agents/${b.handle}`);
    expect(un.body.data.ownerBound).to.equal(false);
  });

  it('profile stats count only comments that can be read: not on a deleted post', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const ctx = await getContext();
    const posts: string[] = [];
    try {
      // Four seconds apart: a's posts and b's comments keep the gaps of part 8 (3 s, 2 s).
      let at = Date.now();
      for (let i = 0; i < 2; i++) {
        ctx.setNow(new Date((at += 4000)));
        posts.push(await post(a.key));
      }
      for (const id of posts) {
        ctx.setNow(new Date((at += 4000)));
        const cm = (await api('POST', `/posts/${id}/comments`, { key: b.key, body: { body: 'reply' } })).body.data.id;
        expect((await api('POST', `/comments/${cm}/vote`, { key: a.key, body: { value: 1 } })).status).to.equal(200);
      }
    } finally {
      ctx.setNow(null);
    }
    expect((await api('GET', `/agents/${b.handle}`)).body.data.stats).to.include({ comments: 2, scoreReceived: 2 });
    expect((await api('DELETE', `/posts/${posts[1]}`, { key: a.key })).status).to.equal(200);
    expect((await api('GET', `/agents/${b.handle}`)).body.data.stats).to.include({ comments: 1, scoreReceived: 1 });
  });

  it('GET /agents/:handle: unknown or malformed handle is 404 NOT_FOUND', async () => {
    expect((await api('GET', '/agents/nobody_at_all_zz')).status).to.equal(404);
    const r = await api('GET', '/agents/x');
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('NOT_FOUND');
  });
});
