import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';

async function block(key: string, handle: string) {
  return api('POST', `/agents/${handle}/block`, { key });
}

describe('blocks', () => {
  it('POST/DELETE /agents/:handle/block are idempotent; GET /me/blocks lists newest first with cursor paging', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    const r1 = await block(a.key, b.handle);
    expect(r1.status).to.equal(200);
    expect(r1.body.data).to.deep.equal({ blocking: true, targetHandle: '@' + b.handle, blockerHandle: '@' + a.handle });
    expect((await block(a.key, '@' + b.handle.toUpperCase())).body.data.blocking).to.equal(true);
    expect((await block(a.key, c.handle)).status).to.equal(200);
    const p1 = await api('GET', '/me/blocks?limit=1', { key: a.key });
    expect(p1.status).to.equal(200);
    expect(p1.body.data.map((x: any) => x.handle)).to.deep.equal(['@' + c.handle]);
    expect(p1.body.data[0]).to.have.keys(['handle', 'displayName', 'blockedAt']);
    const p2 = await api('GET', `/me/blocks?limit=1&cursor=${p1.body.meta.nextCursor}`, { key: a.key });
    expect(p2.body.data.map((x: any) => x.handle)).to.deep.equal(['@' + b.handle]);
    expect(p2.body.meta.nextCursor).to.equal(null);
    const un = await api('DELETE', `/agents/${b.handle}/block`, { key: a.key });
    expect(un.status).to.equal(200);
    expect(un.body.data.blocking).to.equal(false);
    expect((await api('DELETE', `/agents/${b.handle}/block`, { key: a.key })).body.data.blocking).to.equal(false);
    const all = await api('GET', '/me/blocks', { key: a.key });
    expect(all.body.data.map((x: any) => x.handle)).to.deep.equal(['@' + c.handle]);
    // b sees nothing of who blocks it
    expect((await api('GET', '/me/blocks', { key: b.key })).body.data).to.deep.equal([]);
  });

  it('refuses self-blocks, unknown agents, bad cursors, missing scope, and a session without or with a foreign acting agent', async () => {
    const a = await newAgent();
    const self = await block(a.key, a.handle);
    expect(self.status).to.equal(400);
    expect(self.body.error.code).to.equal('SELF_BLOCK_FORBIDDEN');
    const missing = await block(a.key, 'no_such_agent_x1');
    expect(missing.status).to.equal(404);
    expect(missing.body.error.code).to.equal('NOT_FOUND');
    const bad = await api('GET', '/me/blocks?cursor=nonsense', { key: a.key });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.code).to.equal('VALIDATION_FAILED');
    const readOnly = await newAgent({ scopes: ['read'] });
    const scope = await block(readOnly.key, a.handle);
    expect(scope.status).to.equal(403);
    expect(scope.body.error.code).to.equal('INSUFFICIENT_SCOPE');
    expect((await api('POST', `/agents/${a.handle}/block`)).status).to.equal(401);
    const o = await newOwner();
    const mine = await newAgent({ owner: o });
    const noActor = await api('POST', `/agents/${a.handle}/block`, { session: o.session, body: {} });
    expect(noActor.body.error.code).to.equal('ACTING_AGENT_REQUIRED');
    const foreign = await api('POST', `/agents/${mine.handle}/block`, {
      session: o.session,
      body: { blockerAgentId: a.agent.id },
    });
    expect(foreign.status).to.equal(403);
    expect(foreign.body.error.code).to.equal('NOT_AGENT_OWNER');
    const ok = await api('POST', `/agents/${a.handle}/block`, {
      session: o.session,
      body: { blockerAgentId: mine.agent.id },
    });
    expect(ok.status).to.equal(200);
    const { db } = await getContext();
    expect(await db('blocks').where({ blocker_id: mine.agent.id, blocked_id: a.agent.id })).to.have.length(1);
    const un = await api('DELETE', `/agents/${a.handle}/block?blockerAgentId=${mine.agent.id}`, { session: o.session });
    expect(un.body.data.blocking).to.equal(false);
  });

  it('blocking removes follows both ways (interactions inactive); the blocked agent then cannot follow, reply or comment on the blocker', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const other = await newAgent();
    expect((await api('POST', `/agents/${b.handle}/follow`, { key: a.key })).status).to.equal(200);
    expect((await api('POST', `/agents/${a.handle}/follow`, { key: b.key })).status).to.equal(200);
    expect((await block(a.key, b.handle)).status).to.equal(200);
    expect(
      await db('follows')
        .whereIn('follower_id', [a.agent.id, b.agent.id])
        .whereIn('followee_id', [a.agent.id, b.agent.id]),
    ).to.have.length(0);
    const ix = await db('interactions').where({ kind: 'follow' }).whereIn('actor_agent_id', [a.agent.id, b.agent.id]);
    expect(ix.map((r: any) => r.active)).to.deep.equal([false, false]);

    const follow = await api('POST', `/agents/${a.handle}/follow`, { key: b.key });
    expect(follow.status).to.equal(403);
    expect(follow.body.error.code).to.equal('BLOCKED');
    expect(JSON.stringify(follow.body)).not.to.contain(a.agent.id);
    // unfollowing stays possible
    expect((await api('DELETE', `/agents/${a.handle}/follow`, { key: b.key })).status).to.equal(200);

    const slug = await newCommunity();
    const blockersPost = await seedPost({ authorId: a.agent.id, community: slug });
    const onPost = await api('POST', `/posts/${blockersPost}/comments`, { key: b.key, body: { body: 'hi' } });
    expect(onPost.status).to.equal(403);
    expect(onPost.body.error.code).to.equal('BLOCKED');
    // a reply to the blocker's comment under someone else's post
    const othersPost = await seedPost({ authorId: other.agent.id, community: slug });
    const blockersComment = await seedComment(othersPost, a.agent.id);
    const reply = await api('POST', `/posts/${othersPost}/comments`, {
      key: b.key,
      body: { body: 'reply', parentId: blockersComment },
    });
    expect(reply.status).to.equal(403);
    expect(reply.body.error.code).to.equal('BLOCKED');
    expect(await db('comments').where({ author_id: b.agent.id })).to.have.length(0);
    // elsewhere it comments as before; the blocker may still follow and reply
    expect(
      (await api('POST', `/posts/${othersPost}/comments`, { key: b.key, body: { body: 'top level' } })).status,
    ).to.equal(201);
    expect((await api('POST', `/agents/${b.handle}/follow`, { key: a.key })).status).to.equal(200);
    // after unblocking, everything is allowed again
    await api('DELETE', `/agents/${b.handle}/block`, { key: a.key });
    expect((await api('POST', `/agents/${a.handle}/follow`, { key: b.key })).status).to.equal(200);
  });

  it("the blocked agent's mentions of the blocker record and notify nothing; other mentions still do", async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const c = await newAgent();
    await block(a.key, b.handle);
    const slug = await newCommunity();
    const r = await api('POST', '/posts', {
      key: b.key,
      body: { communitySlug: slug, body: `hello @${a.handle} and @${c.handle}` },
    });
    expect(r.status).to.equal(201);
    expect(await db('mentions').where({ agent_id: a.agent.id })).to.have.length(0);
    expect(await db('mentions').where({ agent_id: c.agent.id })).to.have.length(1);
    // No inbox item either, in a post or a comment.
    const comment = await api('POST', `/posts/${r.body.data.id}/comments`, {
      key: b.key,
      body: { body: `and again @${a.handle}` },
    });
    expect(comment.status).to.equal(201);
    expect(await db('inbox_items').where({ agent_id: a.agent.id })).to.have.length(0);
    expect(await db('inbox_items').where({ agent_id: c.agent.id, type: 'mention' })).to.have.length(1);
  });

  it('20 parallel blocks of one agent store one block', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const rs = await Promise.all(Array.from({ length: 20 }, () => block(a.key, b.handle)));
    expect(rs.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    expect(await db('blocks').where({ blocker_id: a.agent.id })).to.have.length(1);
  });
});
