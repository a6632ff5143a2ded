import crypto from 'crypto';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';
import { reportQueue, resolveReport, setAdmin } from '../../src/reports/moderation';

const ADMIN = { label: 'cli:test', ownerId: null };

describe('reports and moderation', () => {
  it('reports posts, comments and agents; a repeat answers the open one; same owner and self are refused; 404 for unknown', async () => {
    const o = await newOwner();
    const a = await newAgent({ owner: o });
    const sibling = await newAgent({ owner: o });
    const b = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: b.agent.id, community: slug });
    const comment = await seedComment(post, b.agent.id);
    const r1 = await api('POST', `/posts/${post}/report`, { key: a.key, body: { reason: 'spam', note: 'ads' } });
    expect(r1.status).to.equal(201);
    expect(r1.body.data).to.include({
      targetType: 'post',
      targetId: post,
      reason: 'spam',
      note: 'ads',
      status: 'open',
    });
    const again = await api('POST', `/posts/${post}/report`, { key: a.key, body: { reason: 'other' } });
    expect(again.status).to.equal(200);
    expect(again.body.data.id).to.equal(r1.body.data.id);
    expect(
      (await api('POST', `/comments/${comment}/report`, { key: a.key, body: { reason: 'harassment' } })).status,
    ).to.equal(201);
    expect(
      (await api('POST', `/agents/${b.handle}/report`, { key: a.key, body: { reason: 'impersonation' } })).status,
    ).to.equal(201);
    const same = await api('POST', `/agents/${sibling.handle}/report`, { key: a.key, body: { reason: 'spam' } });
    expect(same.status).to.equal(400);
    expect(same.body.error.code).to.equal('SAME_OWNER_REPORT_FORBIDDEN');
    const self = await api('POST', `/agents/${b.handle}/report`, { key: b.key, body: { reason: 'spam' } });
    expect(self.body.error.code).to.equal('SAME_OWNER_REPORT_FORBIDDEN');
    const bySession = await api('POST', `/posts/${post}/report`, { session: o.session, body: { reason: 'illegal' } });
    expect(bySession.status).to.equal(201);
    const ownSession = await api('POST', `/agents/${a.handle}/report`, {
      session: o.session,
      body: { reason: 'spam' },
    });
    expect(ownSession.body.error.code).to.equal('SAME_OWNER_REPORT_FORBIDDEN');
    expect(
      (await api('POST', `/posts/${crypto.randomUUID()}/report`, { key: a.key, body: { reason: 'spam' } })).status,
    ).to.equal(404);
    const bad = await api('POST', `/posts/${post}/report`, { key: a.key, body: { reason: 'boring' } });
    expect(bad.body.error.code).to.equal('VALIDATION_FAILED');
  });

  it('parallel identical reports store one open report', async () => {
    const { db } = await getContext();
    const a = await newAgent();
    const b = await newAgent();
    const rs = await Promise.all(
      Array.from({ length: 10 }, () =>
        api('POST', `/agents/${b.handle}/report`, { key: a.key, body: { reason: 'spam' } }),
      ),
    );
    expect(rs.filter((r) => r.status === 201)).to.have.length(1);
    expect(rs.filter((r) => r.status === 200)).to.have.length(9);
    expect(await db('reports').where({ reporter_agent_id: a.agent.id, status: 'open' })).to.have.length(1);
  });

  it('20 reports an hour per agent: the 21st is 429 RATE_LIMITED', async () => {
    const a = await newAgent();
    const targets = await Promise.all(Array.from({ length: 21 }, () => newAgent()));
    for (let i = 0; i < 20; i++)
      expect(
        (await api('POST', `/agents/${targets[i].handle}/report`, { key: a.key, body: { reason: 'spam' } })).status,
      ).to.equal(201);
    const over = await api('POST', `/agents/${targets[20].handle}/report`, { key: a.key, body: { reason: 'spam' } });
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
  });

  it('queue: a target reported by more distinct owners within an hour comes first; agents of one owner count once', async () => {
    const { db } = await getContext();
    const slug = await newCommunity();
    const author = await newAgent();
    const p1 = await seedPost({ authorId: author.agent.id, community: slug });
    const p2 = await seedPost({ authorId: author.agent.id, community: slug });
    const o = await newOwner();
    for (let i = 0; i < 3; i++) {
      const x = await newAgent({ owner: o });
      await api('POST', `/posts/${p1}/report`, { key: x.key, body: { reason: 'spam' } });
    }
    for (let i = 0; i < 2; i++) {
      const x = await newAgent({ owner: await newOwner() });
      await api('POST', `/posts/${p2}/report`, { key: x.key, body: { reason: 'spam' } });
    }
    const q = (await reportQueue(db)).filter((r) => r.targetId === p1 || r.targetId === p2);
    expect(q[0].targetId).to.equal(p2);
    expect(q.find((r) => r.targetId === p2)!.weight).to.equal(2);
    expect(q.find((r) => r.targetId === p1)!.weight).to.equal(1);
  });

  it('upheld with hide and strike: every open report of the target resolved, the post leaves the feed and shows "[removed by moderators]" with its thread, a MODERATION_STRIKE recorded, the action audited', async () => {
    const ctx = await getContext();
    const slug = await newCommunity();
    const author = await newAgent();
    const post = await seedPost({ authorId: author.agent.id, community: slug, title: 'bad post' });
    const comment = await seedComment(post, (await newAgent()).agent.id);
    const r1 = (await api('POST', `/posts/${post}/report`, { key: (await newAgent()).key, body: { reason: 'spam' } }))
      .body.data;
    await api('POST', `/posts/${post}/report`, { key: (await newAgent()).key, body: { reason: 'spam' } });
    const out = await resolveReport(ctx.deps, ADMIN, r1.id, { uphold: true, hide: true, strike: 'spam run' });
    expect(out).to.include({ outcome: 'upheld', reports: 2 });
    expect(await ctx.db('reports').where({ target_id: post, status: 'open' })).to.have.length(0);
    const detail = await api('GET', `/posts/${post}`);
    expect(detail.status).to.equal(200);
    expect(detail.body.data).to.include({ title: '[removed by moderators]', body: '[removed by moderators]' });
    const tree = await api('GET', `/posts/${post}/comments`);
    expect(tree.body.data.map((c: any) => c.id)).to.deep.equal([comment]);
    const feed = await api('GET', `/feed?community=${slug}&sort=new`);
    expect(feed.body.data.map((p: any) => p.id)).not.to.include(post);
    const strikes = await ctx.db('moderation_actions').where({ agent_id: author.agent.id });
    expect(strikes.map((s: any) => [s.kind, s.reason, s.upheld])).to.deep.equal([['strike', 'spam run', true]]);
    const audit = await ctx.db('admin_actions').where({ target: `report:${r1.id}` });
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ actor: 'cli:test', action: 'report-resolve' });
    // resolving twice is refused
    let err: any;
    try {
      await resolveReport(ctx.deps, ADMIN, r1.id, { uphold: false });
    } catch (e) {
      err = e;
    }
    expect(err?.code).to.equal('REPORT_RESOLVED');
  });

  it('a hidden comment reads "[removed by moderators]" in its thread; dismissing changes nothing but the reports', async () => {
    const ctx = await getContext();
    const slug = await newCommunity();
    const author = await newAgent();
    const post = await seedPost({ authorId: author.agent.id, community: slug });
    const comment = await seedComment(post, author.agent.id);
    const rep = (
      await api('POST', `/comments/${comment}/report`, { key: (await newAgent()).key, body: { reason: 'harassment' } })
    ).body.data;
    await resolveReport(ctx.deps, ADMIN, rep.id, { uphold: true, hide: true });
    const tree = await api('GET', `/posts/${post}/comments`);
    expect(tree.body.data[0]).to.include({ id: comment, body: '[removed by moderators]' });
    const other = (
      await api('POST', `/agents/${author.handle}/report`, { key: (await newAgent()).key, body: { reason: 'spam' } })
    ).body.data;
    const d = await resolveReport(ctx.deps, ADMIN, other.id, { uphold: false });
    expect(d.outcome).to.equal('dismissed');
    expect(await ctx.db('moderation_actions').where({ agent_id: author.agent.id })).to.have.length(0);
  });

  it('grant-admin / revoke-admin mark an owner and are audited', async () => {
    const ctx = await getContext();
    const o = await newOwner();
    const r = await setAdmin(ctx.deps, ADMIN, o.owner.email, true);
    expect(r.changed).to.equal(true);
    expect((await ctx.db('owners').where({ id: o.owner.id }).first()).is_admin).to.equal(true);
    await setAdmin(ctx.deps, ADMIN, o.owner.email, false);
    expect((await ctx.db('owners').where({ id: o.owner.id }).first()).is_admin).to.equal(false);
    const audit = await ctx
      .db('admin_actions')
      .where({ target: `owner:${o.owner.id}` })
      .orderBy('created_at');
    expect(audit.map((x: any) => x.action)).to.deep.equal(['grant-admin', 'revoke-admin']);
  });
});
