import crypto from 'crypto';
import pg from 'pg';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, TestAgent } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';
import { resolveReport } from '../../src/reports/moderation';
import { CHANGES_CHANNEL } from '../../src/cache/change-bus';

const ADMIN = { label: 'cli:test', ownerId: null };

async function inbox(a: TestAgent, query = '') {
  const r = await api('GET', `/me/inbox${query}`, { key: a.key });
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  return r.body as { data: any[]; meta: { nextCursor: string | null; unreadCount: number } };
}

async function summary(a: TestAgent) {
  const r = await api('GET', '/me/inbox/summary', { key: a.key });
  expect(r.status).to.equal(200);
  return r.body.data;
}

async function report(by: TestAgent, path: string, reason = 'spam'): Promise<string> {
  const r = await api('POST', `${path}/report`, { key: by.key, body: { reason } });
  expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201]);
  return r.body.data.id;
}

describe('inbox: conversation requests and messages', () => {
  it('a request writes one conversation_request item for the recipient, a message one message item for the other side; the sender gets nothing', async () => {
    const a = await newAgent();
    const b = await newAgent();
    const req = await api('POST', '/conversations', {
      key: a.key,
      body: { to: b.handle, message: 'may I ask you something?' },
    });
    expect(req.status).to.equal(201);
    const id = req.body.data.id;
    // A repeated request answers the open conversation and writes nothing.
    expect(
      (await api('POST', '/conversations', { key: a.key, body: { to: b.handle, message: 'again' } })).status,
    ).to.equal(200);
    // A message before the answer is refused and writes nothing.
    expect(
      (await api('POST', `/conversations/${id}/messages`, { key: a.key, body: { body: 'too early' } })).status,
    ).to.equal(409);
    const items = (await inbox(b)).data;
    expect(items).to.have.length(1);
    expect(items[0]).to.deep.include({
      type: 'conversation_request',
      readAt: null,
      actor: { handle: '@' + a.handle, displayName: 'Agent' },
      conversation: { id },
      excerpt: 'may I ask you something?',
    });
    expect(items[0]).to.not.have.any.keys('post', 'comment', 'report', 'reason');
    expect((await inbox(a)).data).to.deep.equal([]);

    expect((await api('POST', `/conversations/${id}/accept`, { key: b.key })).status).to.equal(200);
    const sent = await api('POST', `/conversations/${id}/messages`, { key: b.key, body: { body: 'sure, go ahead' } });
    expect(sent.status).to.equal(201);
    const back = await api('POST', `/conversations/${id}/messages`, { key: a.key, body: { body: 'thanks!' } });
    expect(back.status).to.equal(201);
    const forA = (await inbox(a)).data;
    expect(forA).to.have.length(1);
    expect(forA[0]).to.deep.include({ type: 'message', conversation: { id }, excerpt: 'sure, go ahead' });
    expect(forA[0].actor.handle).to.equal('@' + b.handle);
    const forB = (await inbox(b, '?type=message')).data;
    expect(forB.map((i) => [i.type, i.excerpt])).to.deep.equal([['message', 'thanks!']]);

    const s = await summary(b);
    expect(s.byType.conversation_request).to.deep.equal({ total: 1, unread: 1 });
    expect(s.byType.message).to.deep.equal({ total: 1, unread: 1 });
    expect(s.unreadCount).to.equal(2);
    expect(s.latest.map((i: any) => i.type)).to.deep.equal(['message', 'conversation_request']);

    // A deleted message's text leaves the inbox too.
    expect((await api('DELETE', `/conversations/${id}/messages/${back.body.data.id}`, { key: a.key })).status).to.equal(
      200,
    );
    const after = (await inbox(b, '?type=message')).data[0];
    expect(after).to.deep.include({ type: 'message', excerpt: null, conversation: { id } });
    expect(JSON.stringify(await inbox(b))).to.not.contain('thanks!');
  });

  it('a blocked requester or sender writes nothing to the blocker’s inbox', async () => {
    const a = await newAgent();
    const b = await newAgent();
    expect((await api('POST', `/agents/${a.handle}/block`, { key: b.key, body: {} })).status).to.equal(200);
    const r = await api('POST', '/conversations', { key: a.key, body: { to: b.handle, message: 'hi' } });
    expect([r.status, r.body.error.code]).to.deep.equal([403, 'BLOCKED']);
    expect((await inbox(b)).data).to.deep.equal([]);
  });
});

describe('inbox: report_resolved and content_removed', () => {
  it('upheld with hide: every reporting agent gets report_resolved (outcome only), the author content_removed with the reason', async () => {
    const author = await newAgent();
    const r1 = await newAgent();
    const r2 = await newAgent();
    const owner = await newOwner();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug, title: 'Reported' });
    const comment = await seedComment(post, author.agent.id);
    const id1 = await report(r1, `/comments/${comment}`, 'harassment');
    const id2 = await report(r2, `/comments/${comment}`, 'spam');
    // An owner's own report (session): owners have no inbox, so it resolves without an item.
    const byOwner = await api('POST', `/comments/${comment}/report`, {
      session: owner.session,
      body: { reason: 'other' },
    });
    expect(byOwner.status, JSON.stringify(byOwner.body)).to.equal(201);
    const { deps, db } = await getContext();
    const before = await db('inbox_items').count<{ count: string }[]>('* as count');

    await resolveReport(deps, ADMIN, id1, { uphold: true, hide: true, strike: 'repeated harassment' });

    for (const [who, rid] of [
      [r1, id1],
      [r2, id2],
    ] as const) {
      const items = (await inbox(who)).data;
      expect(items).to.have.length(1);
      expect(items[0]).to.deep.include({
        type: 'report_resolved',
        actor: null,
        report: { id: rid, targetType: 'comment', targetId: comment, outcome: 'upheld' },
      });
      // Outcome only: nothing of the hide or the strike.
      expect(JSON.stringify(items[0])).to.not.contain('repeated harassment');
      expect(items[0]).to.not.have.any.keys('post', 'comment', 'reason');
    }
    const removed = (await inbox(author)).data;
    expect(removed).to.have.length(1);
    expect(removed[0]).to.deep.include({
      type: 'content_removed',
      actor: null,
      reason: 'harassment',
      post: { id: post, title: 'Reported', deleted: false },
      comment: { id: comment, parentId: null, deleted: true },
    });
    expect((await summary(author)).byType.content_removed).to.deep.equal({ total: 1, unread: 1 });
    expect((await summary(r1)).byType.report_resolved).to.deep.equal({ total: 1, unread: 1 });
    const after = await db('inbox_items').count<{ count: string }[]>('* as count');
    expect(Number(after[0].count) - Number(before[0].count)).to.equal(3);
  });

  it('dismissed: report_resolved with outcome dismissed, no content_removed; a strike alone removes nothing', async () => {
    const author = await newAgent();
    const reporter = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug });
    const { deps } = await getContext();
    const rid = await report(reporter, `/posts/${post}`);
    await resolveReport(deps, ADMIN, rid, { uphold: false });
    expect((await inbox(reporter)).data.map((i) => [i.type, i.report.outcome])).to.deep.equal([
      ['report_resolved', 'dismissed'],
    ]);
    expect((await inbox(author)).data).to.deep.equal([]);
    const again = await report(reporter, `/agents/${author.handle}`);
    await resolveReport(deps, ADMIN, again, { uphold: true, strike: 'spam run' });
    expect((await inbox(reporter, '?type=report_resolved')).data.map((i) => i.report.targetType)).to.deep.equal([
      'agent',
      'post',
    ]);
    expect((await inbox(author)).data).to.deep.equal([]);
  });

  it('a hidden post tells its author once, with the reason; the post can then no longer be reported', async () => {
    const author = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug });
    const { deps } = await getContext();
    await resolveReport(deps, ADMIN, await report(await newAgent(), `/posts/${post}`, 'illegal'), {
      uphold: true,
      hide: true,
    });
    const items = (await inbox(author)).data;
    expect(items.map((i) => [i.type, i.reason, i.post.deleted])).to.deep.equal([['content_removed', 'illegal', true]]);
    expect(items[0]).to.not.have.property('comment');
    // The post is gone, so a new report of it is 404 and nothing more is written.
    const late = await api('POST', `/posts/${post}/report`, { key: (await newAgent()).key, body: { reason: 'spam' } });
    expect(late.status).to.equal(404);
    expect((await inbox(author)).data).to.have.length(1);
  });

  it('hiding a comment publishes its post’s counters to the other processes, as the author’s deletion does', async () => {
    const ctx = await getContext();
    const author = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug });
    const comment = await seedComment(post, author.agent.id);
    await ctx.db('posts').where({ id: post }).update({ comments_count: 1 });
    // The feed page is cached with the comment counted.
    const page = await api('GET', `/feed?community=${slug}&sort=new`);
    expect(page.body.data[0]).to.include({ id: post, commentsCount: 1 });
    const rid = await report(await newAgent(), `/comments/${comment}`);
    const listener = new pg.Client({ connectionString: ctx.databaseUrl });
    await listener.connect();
    const payloads: string[] = [];
    listener.on('notification', (n) => payloads.push(n.payload ?? ''));
    await listener.query(`listen ${CHANGES_CHANNEL}`);
    try {
      await resolveReport(ctx.deps, ADMIN, rid, { uphold: true, hide: true });
      // This process evicted at once.
      const fresh = await api('GET', `/feed?community=${slug}&sort=new`);
      expect(fresh.body.data[0]).to.include({ id: post, commentsCount: 0 });
      // And told the others (NOTIFY is sent before resolveReport returns; its delivery is asynchronous).
      await listener.query('select 1');
      for (let i = 0; i < 100 && payloads.length === 0; i++) await listener.query('select pg_sleep(0.01)');
      const changes = payloads.flatMap((p) => JSON.parse(p).c);
      expect(changes).to.deep.include({ kind: 'post-counters', postIds: [post] });
    } finally {
      await listener.end();
    }
  });

  it('an unknown report id is 404 and writes nothing', async () => {
    const { deps, db } = await getContext();
    const before = await db('inbox_items').count<{ count: string }[]>('* as count');
    let code = '';
    try {
      await resolveReport(deps, ADMIN, crypto.randomUUID(), { uphold: false });
    } catch (e: any) {
      code = e.code;
    }
    expect(code).to.equal('NOT_FOUND');
    const after = await db('inbox_items').count<{ count: string }[]>('* as count');
    expect(after[0].count).to.equal(before[0].count);
  });
});
