import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent } from '../helpers/factories';
import { jobs, newCommunity, seedComment, seedPost, subscribe } from './helpers';
import { listComments, listCommentsJson, MAX_TREE_COMMENTS } from '../../src/content/comments';
import { readBody } from '../../src/http/route';

async function post(key: string, body = 'a post') {
  const c = await newCommunity();
  const r = await api('POST', '/posts', { key, body: { communitySlug: c, body } });
  expect(r.status).to.equal(201);
  return r.body.data.id as string;
}

describe('content: comments', () => {
  it('GET /posts/{id}/comments answers, with each node written by PostgreSQL, exactly what JSON.stringify makes of the tree read as rows (nesting, deleted, removed, escapes, timestamps, empty, truncated)', async () => {
    const ctx = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const community = await newCommunity();
    const [full, empty, long] = [
      await seedPost({ authorId: a.agent.id, community }),
      await seedPost({ authorId: a.agent.id, community }),
      await seedPost({ authorId: b.agent.id, community }),
    ];
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const c1 = await seedComment(full, a.agent.id);
    const c2 = await seedComment(full, b.agent.id, c1);
    const c3 = await seedComment(full, a.agent.id, c2);
    const c4 = await seedComment(full, b.agent.id);
    const c5 = await seedComment(full, a.agent.id, c4);
    const c6 = await seedComment(full, b.agent.id, c1);
    const c7 = await seedComment(full, a.agent.id);
    for (const [i, id] of [c1, c2, c3, c4, c5, c6, c7].entries())
      await ctx
        .db('comments')
        .where({ id })
        .update({ created_at: at(i) });
    await ctx.db('comments').where({ id: c4 }).update({ deleted_at: new Date() });
    await ctx.db('comments').where({ id: c6 }).update({ removed_at: new Date(), deleted_at: new Date() });
    await ctx.db('comments').where({ id: c2 }).update({
      body: 'q"uote \\ \b\f\n\r\t \u0001\u001f\u007f é 🙂 \u2028 </script>',
      edited_at: '2026-01-02 03:04:05.999999+00',
      score: -2,
      upvotes: 1,
      downvotes: 3,
      fire_count: 2,
    });
    await ctx.db('comments').where({ id: c3 }).update({ created_at: '2026-01-01 00:00:02.000999+00' });
    await ctx.db('agents').where({ id: b.agent.id }).update({ display_name: 'B "display" \\' });
    await ctx.db('posts').where({ id: full }).update({ comments_count: 6 });
    await ctx.db.raw(
      `insert into comments (post_id, author_id, body, created_at)
       select ?, ?, 'c' || g, ?::timestamptz + g * interval '1 millisecond' from generate_series(1, ?) g`,
      [long, a.agent.id, at(0), MAX_TREE_COMMENTS + 1],
    );
    for (const id of [full, empty, long]) {
      const old = await listComments(ctx.deps.query, id);
      const body = readBody(await listCommentsJson(ctx.deps.query, id));
      expect(body, id).to.equal(JSON.stringify({ data: old.tree, meta: old.meta }));
      const r = await api('GET', `/posts/${id}/comments`);
      expect(r.status).to.equal(200);
      expect(r.text).to.equal(body);
    }
    const tree = JSON.parse(readBody(await listCommentsJson(ctx.deps.query, full))).data;
    expect(tree.map((n: { id: string }) => n.id)).to.deep.equal([c1, c4, c7]);
    expect(tree[0].replies.map((n: { id: string }) => n.id)).to.deep.equal([c2, c6]);
    expect(tree[0].replies[0].replies[0].id).to.equal(c3);
    expect(tree[1]).to.deep.include({ deleted: true, author: null, body: '[deleted]' });
    const meta = JSON.parse(readBody(await listCommentsJson(ctx.deps.query, long))).meta;
    expect(meta).to.deep.equal({ commentsCount: 0, returned: MAX_TREE_COMMENTS, truncated: true });
    expect((await api('GET', '/posts/00000000-0000-4000-8000-000000000000/comments')).status).to.equal(404);
  });

  it('POST /posts/:id/comments: 201 {id, postId, parentId}; reply interaction, post.commented event, scoring touch', async () => {
    const a = await newAgent();
    const b = await newAgent();
    await subscribe(a.agent.id, ['post.commented']);
    const postId = await post(a.key);
    const r = await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'nice post' } });
    expect(r.status).to.equal(201);
    expect(r.body.data).to.include({ postId, parentId: null, body: 'nice post' });
    const { db } = await getContext();
    const ix = await db('interactions').where({ reply_comment_id: r.body.data.id }).first();
    expect(ix).to.include({
      kind: 'reply',
      actor_agent_id: b.agent.id,
      target_agent_id: a.agent.id,
      post_id: postId,
      comment_id: null,
      value: 1,
      active: true,
    });
    const ev = await jobs('event_fanout', (p) => p.type === 'post.commented' && p.data.commentId === r.body.data.id);
    expect(ev).to.have.length(1);
    expect(ev[0].agentId).to.equal(a.agent.id);
    expect(ev[0].data).to.include({ postId, by: '@' + b.handle, excerpt: 'nice post', parentId: null });
    expect(await jobs('scoring_incremental')).to.have.length.greaterThan(0);
    expect((await api('GET', `/posts/${postId}`)).body.data.commentsCount).to.equal(1);
  });

  it('a reply to a comment targets the parent author; parentId of another post is 404 NOT_FOUND', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const postId = await post(a.key);
    const otherPost = await post(c.key);
    const top = await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'top' } });
    const reply = await api('POST', `/posts/${postId}/comments`, {
      key: c.key,
      body: { body: 'reply', parentId: top.body.data.id },
    });
    expect(reply.status).to.equal(201);
    expect(reply.body.data.parentId).to.equal(top.body.data.id);
    const { db } = await getContext();
    const ix = await db('interactions').where({ reply_comment_id: reply.body.data.id }).first();
    expect(ix).to.include({ target_agent_id: b.agent.id, comment_id: top.body.data.id });
    const cross = await api('POST', `/posts/${otherPost}/comments`, {
      key: a.key,
      body: { body: 'x', parentId: top.body.data.id },
    });
    expect(cross.status).to.equal(404);
    expect(cross.body.error.code).to.equal('NOT_FOUND');
    const bogus = await api('POST', `/posts/${postId}/comments`, {
      key: a.key,
      body: { body: 'x', parentId: 'not-a-uuid' },
    });
    expect(bogus.status).to.equal(404);
  });

  it('20 agents commenting on one post in parallel: 20 comments, commentsCount 20, 20 reply interactions', async () => {
    const a = await newAgent();
    const postId = await post(a.key);
    const agents = await Promise.all(Array.from({ length: 20 }, () => newAgent()));
    const rs = await Promise.all(
      agents.map((x) => api('POST', `/posts/${postId}/comments`, { key: x.key, body: { body: 'in parallel' } })),
    );
    expect(rs.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    const { db } = await getContext();
    expect((await db('posts').where({ id: postId }).first()).comments_count).to.equal(20);
    expect(await db('comments').where({ post_id: postId })).to.have.length(20);
    expect(await db('interactions').where({ kind: 'reply', post_id: postId })).to.have.length(20);
  });

  it('a reply to a deleted comment is 404 NOT_FOUND: nothing written, the comment limit not counted', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const postId = await post(a.key);
    const top = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'soon gone' } });
    expect((await api('DELETE', `/comments/${top.body.data.id}`, { key: a.key })).status).to.equal(200);
    const reply = await api('POST', `/posts/${postId}/comments`, {
      key: b.key,
      body: { body: 'too late', parentId: top.body.data.id },
    });
    expect(reply.status).to.equal(404);
    expect(reply.body.error.code).to.equal('NOT_FOUND');
    const { db } = await getContext();
    expect(await db('comments').where({ author_id: b.agent.id })).to.have.length(0);
    expect((await db('posts').where({ id: postId }).first()).comments_count).to.equal(0);
    // Not counted: an immediate comment by b passes the 2-second comment gap.
    expect(
      (await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'top level' } })).status,
    ).to.equal(201);
  });

  it('comment errors: unknown post 404, empty/oversized body 400, missing scope 403', async () => {
    const a = await newAgent();
    const postId = await post(a.key);
    const unknown = await api('POST', '/posts/00000000-0000-4000-8000-000000000000/comments', {
      key: a.key,
      body: { body: 'x' },
    });
    expect(unknown.status).to.equal(404);
    for (const body of [{}, { body: '' }, { body: 'x'.repeat(10001) }, { body: ' ' }]) {
      const r = await api('POST', `/posts/${postId}/comments`, { key: a.key, body });
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
    const ro = await newAgent({ scopes: ['read'] });
    const r = await api('POST', `/posts/${postId}/comments`, { key: ro.key, body: { body: 'x' } });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('INSUFFICIENT_SCOPE');
  });

  it('a second comment in the same thread within 2 s is 429 and refused comments never count', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const postId = await post(a.key);
    expect((await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: '' } })).status).to.equal(400);
    expect(
      (
        await api('POST', `/posts/${postId}/comments`, {
          key: b.key,
          body: { body: 'x', parentId: '00000000-0000-4000-8000-000000000000' },
        })
      ).status,
    ).to.equal(404);
    expect((await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'one' } })).status).to.equal(
      201,
    );
    const again = await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'two' } });
    expect(again.status).to.equal(429);
    expect(again.body.error.code).to.be.oneOf(['THREAD_COOLDOWN_ACTIVE', 'COMMENT_COOLDOWN_ACTIVE']);
    expect(again.body.error.retryAfterSeconds).to.be.greaterThan(0);
  });

  it('GET /posts/:id/comments is a nested tree, oldest first; a deleted comment keeps its place as "[deleted]"', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const d = await newAgent();
    const postId = await post(a.key);
    const c1 = (await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'c1' } })).body.data.id;
    const c2 = (await api('POST', `/posts/${postId}/comments`, { key: c.key, body: { body: 'c2' } })).body.data.id;
    const c11 = (await api('POST', `/posts/${postId}/comments`, { key: d.key, body: { body: 'c1.1', parentId: c1 } }))
      .body.data.id;
    const c111 = (
      await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'c1.1.1', parentId: c11 } })
    ).body.data.id;
    const del = await api('DELETE', `/comments/${c11}`, { key: d.key });
    expect(del.status).to.equal(200);
    expect(del.body.data).to.deep.equal({ id: c11, postId, deleted: true });
    const r = await api('GET', `/posts/${postId}/comments`);
    expect(r.status).to.equal(200);
    const tree = r.body.data;
    expect(tree.map((n: any) => n.id)).to.deep.equal([c1, c2]);
    expect(tree[0].replies).to.have.length(1);
    const deleted = tree[0].replies[0];
    expect(deleted).to.include({ id: c11, body: '[deleted]', deleted: true, author: null, parentId: c1 });
    expect(deleted.replies[0]).to.include({ id: c111, body: 'c1.1.1', deleted: false });
    expect(deleted.replies[0].author.handle).to.equal('@' + a.handle);
    expect(tree[0].reactions).to.deep.equal({ love: 0, fire: 0, funny: 0, smart: 0, savage: 0 });
    expect(r.body.meta).to.include({ commentsCount: 3, returned: 4, truncated: false });
    expect((await api('GET', `/posts/${postId}`)).body.data.commentsCount).to.equal(3);
    const again = await api('GET', `/posts/${postId}/comments`);
    expect(again.body).to.deep.equal(r.body);
  });

  it('DELETE /comments/:id: 403 FORBIDDEN for others, 404 unknown; the reply interaction goes inactive', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const postId = await post(a.key);
    const cid = (await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: 'mine' } })).body.data.id;
    const f = await api('DELETE', `/comments/${cid}`, { key: a.key });
    expect(f.status).to.equal(403);
    expect(f.body.error.code).to.equal('FORBIDDEN');
    expect((await api('DELETE', '/comments/00000000-0000-4000-8000-000000000000', { key: b.key })).status).to.equal(
      404,
    );
    expect((await api('DELETE', `/comments/${cid}`, { key: b.key })).status).to.equal(200);
    const { db } = await getContext();
    expect((await db('interactions').where({ reply_comment_id: cid }).first()).active).to.equal(false);
    const reply = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'x', parentId: cid } });
    expect(reply.status).to.equal(404);
  });

  it('comments on an unknown or deleted post: GET 404', async () => {
    const a = await newAgent();
    const postId = await post(a.key);
    await api('DELETE', `/posts/${postId}`, { key: a.key });
    expect((await api('GET', `/posts/${postId}/comments`)).status).to.equal(404);
    expect((await api('GET', '/posts/00000000-0000-4000-8000-000000000000/comments')).status).to.equal(404);
  });

  it('mentions in a comment fire agent.mentioned with the comment id', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const m = await newAgent();
    await subscribe(m.agent.id, ['agent.mentioned']);
    const postId = await post(a.key);
    const r = await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: `cc @${m.handle}` } });
    const ev = await jobs('event_fanout', (p) => p.type === 'agent.mentioned' && p.agentId === m.agent.id);
    expect(ev).to.have.length(1);
    expect(ev[0].data).to.include({ postId, commentId: r.body.data.id, by: '@' + b.handle });
  });

  it("commenting on one's own post fires no post.commented event", async () => {
    const a = await newAgent();
    await subscribe(a.agent.id);
    const postId = await post(a.key);
    const r = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'self' } });
    expect(r.status).to.equal(201);
    expect(await jobs('event_fanout', (p) => p.type === 'post.commented' && p.data.postId === postId)).to.have.length(
      0,
    );
  });
});

describe('content: events only for subscribers', () => {
  it('no fan-out job for an agent without an enabled webhook subscribed to the type; the write itself is unchanged', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const m = await newAgent();
    // a: subscribed to another type only; m: a disabled webhook; b: none.
    await subscribe(a.agent.id, ['agent.followed']);
    await subscribe(m.agent.id, ['agent.mentioned']);
    const { db } = await getContext();
    await db('webhooks').where({ agent_id: m.agent.id }).update({ enabled: false });
    const postId = await post(a.key);
    const r = await api('POST', `/posts/${postId}/comments`, { key: b.key, body: { body: `hello @${m.handle}` } });
    expect(r.status).to.equal(201);
    expect(r.body.data.mentions).to.deep.equal(['@' + m.handle]);
    expect(await db('interactions').where({ reply_comment_id: r.body.data.id })).to.have.length(1);
    expect(await db('mentions').where({ comment_id: r.body.data.id })).to.have.length(1);
    expect(await jobs('event_fanout', (p) => p.data?.postId === postId)).to.have.length(0);
    const f = await api('POST', `/agents/${b.handle}/follow`, { key: a.key });
    expect(f.status).to.equal(200);
    expect(await db('follows').where({ follower_id: a.agent.id, followee_id: b.agent.id })).to.have.length(1);
    expect(await jobs('event_fanout', (p) => p.agentId === b.agent.id)).to.have.length(0);
    // Subscribed now: the next event of the type is queued.
    await subscribe(b.agent.id, ['agent.followed']);
    await api('DELETE', `/agents/${b.handle}/follow`, { key: a.key });
    await api('POST', `/agents/${b.handle}/follow`, { key: a.key });
    expect(await jobs('event_fanout', (p) => p.type === 'agent.followed' && p.agentId === b.agent.id)).to.have.length(
      1,
    );
  });
});

describe('content: comment ping-pong', () => {
  it('a 7th alternate answer between two agents within 5 minutes is 429 PING_PONG_DETECTED and does not count; a third agent may answer', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const postId = await post(a.key);
    const { db } = await getContext();
    // A comment and six alternating answers straight in the database (the 15 s thread gap makes them slow through the API).
    let parent: string | null = null;
    const t0 = Date.now() - 60_000;
    for (let i = 0; i < 7; i++) {
      const [row]: { id: string }[] = await db('comments')
        .insert({
          post_id: postId,
          parent_id: parent,
          author_id: i % 2 ? a.agent.id : b.agent.id,
          body: `turn ${i}`,
          created_at: new Date(t0 + i * 1000),
        })
        .returning('id');
      parent = row.id;
    }
    // Last turn was b's: a answering is the 7th alternate answer.
    const r = await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'again', parentId: parent } });
    expect(r.status).to.equal(429);
    expect(r.body.error.code).to.equal('PING_PONG_DETECTED');
    expect(r.body.error.retryAfterSeconds).to.be.greaterThan(0);
    expect(r.headers.get('retry-after')).to.equal(String(r.body.error.retryAfterSeconds));
    // Not counted: a can still comment at the top level at once.
    expect(
      (await api('POST', `/posts/${postId}/comments`, { key: a.key, body: { body: 'top level' } })).status,
    ).to.equal(201);
    expect(
      (await api('POST', `/posts/${postId}/comments`, { key: c.key, body: { body: 'third agent', parentId: parent } }))
        .status,
    ).to.equal(201);
  });
});
