import crypto from 'crypto';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, TestOwner } from '../helpers/factories';
import { newCommunity, seedComment, seedPost } from '../content/helpers';
import { reportQueue } from '../../src/reports/moderation';
import { WebClient } from './client';

function browserOf(o: TestOwner): WebClient {
  const c = new WebClient();
  c.cookies.set('svc_session', o.session.cookie);
  return c;
}

async function newAdmin(): Promise<TestOwner> {
  const o = await newOwner();
  const { db } = await getContext();
  await db('owners').where({ id: o.owner.id }).update({ is_admin: true });
  return o;
}

/** A post by a fresh agent, reported by `n` agents of distinct owners. */
async function reportedPost(n: number, title = 'reported post') {
  const author = await newAgent();
  const slug = await newCommunity();
  const post = await seedPost({ authorId: author.agent.id, community: slug, title, body: 'buy <b>now</b>' });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await newAgent({ owner: await newOwner() });
    const res = await api('POST', `/posts/${post}/report`, { key: r.key, body: { reason: 'spam', note: `note ${i}` } });
    expect(res.status).to.equal(201);
    ids.push(res.body.data.id);
  }
  return { author, post, slug, ids };
}

describe('web: moderation page', () => {
  it('is 404 for visitors and owners not marked admin, page and action alike; admins get a nav link', async () => {
    const { ids } = await reportedPost(1);
    const plain = browserOf(await newOwner());
    expect((await new WebClient().get('/admin/reports')).status).to.equal(404);
    const page = await plain.get('/admin/reports');
    expect(page.status).to.equal(404);
    expect(page.text).not.to.include('nav-moderation');
    const post = await plain.post(`/admin/reports/${ids[0]}/resolve`, {
      _csrf: await plain.csrf(),
      outcome: 'dismiss',
    });
    expect(post.status).to.equal(404);
    expect((await new WebClient().post(`/admin/reports/${ids[0]}/resolve`, { outcome: 'dismiss' })).status).to.equal(
      404,
    );
    const { db } = await getContext();
    expect((await db('reports').where({ id: ids[0] }).first('status')).status).to.equal('open');

    const admin = browserOf(await newAdmin());
    const ok = await admin.get('/admin/reports');
    expect(ok.status).to.equal(200);
    expect(ok.text).to.include('data-testid="nav-moderation"');
  });

  it('lists the open queue in the CLI order with each target (escaped), weight and reporter', async () => {
    const one = await reportedPost(1, 'one <i>owner</i>');
    const three = await reportedPost(3, 'three owners');
    const admin = browserOf(await newAdmin());
    const page = await admin.get('/admin/reports');
    const order = [...page.text.matchAll(/data-report-id="([0-9a-f-]{36})" data-status="open"/g)].map((m) => m[1]);
    const cli = (await reportQueue((await getContext()).db, { all: false })).map((r) => r.id);
    // The same order as the CLI's queue (other tests' reports share the database and the page's 200 rows).
    expect(order).to.deep.equal(cli);
    expect(order).to.include(three.ids[0]);
    if (order.includes(one.ids[0])) expect(order.indexOf(three.ids[0])).to.be.lessThan(order.indexOf(one.ids[0]));
    expect(page.text).to.include('<bdi>one &lt;i&gt;owner&lt;/i&gt;</bdi>');
    expect(page.text).to.include('buy &lt;b&gt;now&lt;/b&gt;');
    expect(page.text).to.include(`<bdi>@${three.author.handle}</bdi>`);
    expect(page.text).to.match(/<strong title="distinct owners">3<\/strong>/);
    expect(page.text).to.include('note 2');
  });

  it('upholds with hide and strike through the CLI service: content removed, every report of the target resolved, audit row with who and when', async () => {
    const { post, ids, author } = await reportedPost(2);
    const adminOwner = await newAdmin();
    const admin = browserOf(adminOwner);
    const csrf = await admin.csrf('/admin/reports');
    const path = `/admin/reports/${ids[1]}/resolve`;
    expect((await admin.post(path, { outcome: 'uphold', hide: 'true' })).status).to.equal(403);

    const before = new Date();
    const res = await admin.post(path, { _csrf: csrf, outcome: 'uphold', hide: 'true', strike: 'spam run' });
    expect(res.status).to.equal(302);
    expect(res.location).to.equal('/admin/reports?done=report_resolved');
    const { db } = await getContext();
    const rows = await db('reports').whereIn('id', ids).select('status', 'hidden', 'resolved_by');
    expect(rows.map((r) => r.status)).to.deep.equal(['upheld', 'upheld']);
    expect(rows[0].resolved_by).to.equal(`owner:${adminOwner.owner.email}`);
    expect((await db('posts').where({ id: post }).first('removed_at')).removed_at).to.be.an.instanceOf(Date);
    const strike = await db('moderation_actions').where({ agent_id: author.agent.id, kind: 'strike' }).first();
    expect(strike.reason).to.equal('spam run');
    const audit = await db('admin_actions')
      .where({ target: `report:${ids[1]}` })
      .first();
    expect(audit.actor).to.equal(`owner:${adminOwner.owner.email}`);
    expect(audit.admin_owner_id).to.equal(adminOwner.owner.id);
    expect(audit.details).to.include({ outcome: 'upheld', hide: true, strike: 'spam run' });
    expect(new Date(audit.created_at).getTime()).to.be.at.least(before.getTime() - 1000);
    expect((await api('GET', `/posts/${post}`)).body.data.body).to.not.include('buy');
    // Removed content cannot be reported again: no form on its page.
    const removed = await admin.get(`/p/${post}`);
    expect(removed.text).to.include('[removed by moderators]');
    expect(removed.text).not.to.include('data-testid="report-form"');

    const page = await admin.get(res.location!);
    expect(page.text).to.include('Report resolved');
    expect(page.text).not.to.include(`data-report-id="${ids[0]}"`);
    expect(page.text).to.match(new RegExp(`<td><code>report:${ids[1]}</code></td>`));
    const all = await admin.get('/admin/reports?all=1');
    expect(all.status).to.equal(200);
    expect(all.text).to.include('<a class="on" href="/admin/reports?all=1">All</a>');

    // Resolving again: the service's refusal, shown on the page.
    const again = await admin.post(path, { _csrf: csrf, outcome: 'dismiss' });
    expect(again.status).to.equal(409);
    expect(again.text).to.include('already upheld');
  });

  it('dismisses; refuses hide or strike with dismiss, hiding an agent, no outcome, and unknown reports', async () => {
    const { ids } = await reportedPost(1);
    const admin = browserOf(await newAdmin());
    const csrf = await admin.csrf('/admin/reports');
    const path = `/admin/reports/${ids[0]}/resolve`;
    const { db } = await getContext();
    for (const [form, status, text] of [
      [{ outcome: 'dismiss', hide: 'true' }, 400, 'go with --uphold only'],
      [{ outcome: 'dismiss', strike: 'x' }, 400, 'go with --uphold only'],
      [{}, 400, 'Choose uphold or dismiss'],
      [{ outcome: 'uphold', strike: 'y'.repeat(501) }, 400, 'at most 500'],
    ] as const) {
      const res = await admin.post(path, { _csrf: csrf, ...form });
      expect(res.status, JSON.stringify(form)).to.equal(status);
      expect(res.text).to.include(text);
    }
    expect((await db('reports').where({ id: ids[0] }).first('status')).status).to.equal('open');
    expect(
      (
        await admin.post(`/admin/reports/00000000-0000-4000-8000-000000000000/resolve`, {
          _csrf: csrf,
          outcome: 'dismiss',
        })
      ).status,
    ).to.equal(404);

    const agentReported = await newAgent();
    const reporter = await newAgent({ owner: await newOwner() });
    const rep = await api('POST', `/agents/${agentReported.handle}/report`, {
      key: reporter.key,
      body: { reason: 'impersonation' },
    });
    const hideAgent = await admin.post(`/admin/reports/${rep.body.data.id}/resolve`, {
      _csrf: csrf,
      outcome: 'uphold',
      hide: 'true',
    });
    expect(hideAgent.status).to.equal(400);
    expect(hideAgent.text).to.include('Only a reported post or comment can be hidden');

    const ok = await admin.post(path, { _csrf: csrf, outcome: 'dismiss' });
    expect(ok.status).to.equal(302);
    expect((await db('reports').where({ id: ids[0] }).first('status')).status).to.equal('dismissed');
  });

  it('hides a reported comment: the thread keeps its place with the removal marker', async () => {
    const author = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug });
    const comment = await seedComment(post, author.agent.id);
    const reporter = await newAgent({ owner: await newOwner() });
    const rep = await api('POST', `/comments/${comment}/report`, { key: reporter.key, body: { reason: 'harassment' } });
    const admin = browserOf(await newAdmin());
    const page = await admin.get('/admin/reports');
    expect(page.text).to.include(`href="/p/${post}#c-${comment}"`);
    const res = await admin.post(`/admin/reports/${rep.body.data.id}/resolve`, {
      _csrf: await admin.csrf('/admin/reports'),
      outcome: 'uphold',
      hide: 'true',
    });
    expect(res.status).to.equal(302);
    const thread = await new WebClient().get(`/p/${post}`);
    expect(thread.text).to.include(`id="c-${comment}"`);
    expect(thread.text).to.include('[removed by moderators]');
    expect(thread.text).not.to.include('seeded comment');
  });

  it('owners report posts and agents from their pages (as themselves, the API rules); visitors see no form', async () => {
    const o = await newOwner();
    const mine = await newAgent({ owner: o });
    const author = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug });
    const own = await seedPost({ authorId: mine.agent.id, community: slug });
    expect((await new WebClient().get(`/p/${post}`)).text).not.to.include('data-testid="report-form"');
    const c = browserOf(o);
    const page = await c.get(`/p/${post}`);
    expect(page.text).to.include(`<form method="post" action="/p/${post}/report">`);
    const csrf = await c.csrf(`/p/${post}`);
    expect((await c.post(`/p/${post}/report`, { reason: 'spam' })).status).to.equal(403);
    const sent = await c.post(`/p/${post}/report`, { _csrf: csrf, reason: 'spam', note: 'ads\r\neverywhere' });
    expect(sent.status).to.equal(302);
    expect(sent.location).to.equal(`/p/${post}?done=reported`);
    expect((await c.get(sent.location!)).text).to.include('Report sent');
    // A repeat answers the open report.
    expect((await c.post(`/p/${post}/report`, { _csrf: csrf, reason: 'other' })).status).to.equal(302);
    const { db } = await getContext();
    const rows = await db('reports').where({ target_id: post });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({
      reporter_owner_id: o.owner.id,
      reporter_agent_id: null,
      reason: 'spam',
      note: 'ads\neverywhere',
    });
    expect((await c.get('/dashboard')).text).to.match(/data-testid="report-made"[\s\S]*<td>you<\/td>/);

    const bad = await c.post(`/p/${post}/report`, { _csrf: csrf, reason: 'boring' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('must be one of');
    expect(
      (await c.post(`/p/${post}/report`, { _csrf: csrf, reason: 'spam', note: 'n'.repeat(1001) })).status,
    ).to.equal(400);
    const self = await c.post(`/p/${own}/report`, { _csrf: csrf, reason: 'spam' });
    expect(self.status).to.equal(400);
    expect(self.text).to.include('SAME_OWNER_REPORT_FORBIDDEN');
    expect((await c.post(`/p/${crypto.randomUUID()}/report`, { _csrf: csrf, reason: 'spam' })).status).to.equal(404);

    const profile = await c.get(`/a/${author.handle}`);
    expect(profile.text).to.include(`action="/a/${author.handle}/report"`);
    const agentReport = await c.post(`/a/${author.handle}/report`, { _csrf: csrf, reason: 'impersonation' });
    expect(agentReport.status).to.equal(302);
    expect(agentReport.location).to.equal(`/a/${author.handle}?done=reported`);
    expect(
      await db('reports').where({ target_type: 'agent', target_id: author.agent.id, reporter_owner_id: o.owner.id }),
    ).to.have.length(1);
    expect((await c.post('/a/nobody_at_all_here/report', { _csrf: csrf, reason: 'spam' })).status).to.equal(404);
    expect((await new WebClient().post(`/a/${author.handle}/report`, { reason: 'spam' })).status).to.equal(302);
  });

  it('owners report a comment from its own page, linked from the thread', async () => {
    const o = await newOwner();
    const author = await newAgent();
    const slug = await newCommunity();
    const post = await seedPost({ authorId: author.agent.id, community: slug, title: 'Thread' });
    const other = await seedPost({ authorId: author.agent.id, community: slug });
    const comment = await seedComment(post, author.agent.id);
    const { db } = await getContext();
    await db('comments').where({ id: comment }).update({ body: 'rude <b>words</b>' });
    const path = `/p/${post}/comments/${comment}/report`;
    expect((await new WebClient().get(`/p/${post}`)).text).not.to.include('data-testid="comment-report"');
    const anon = await new WebClient().get(path);
    expect(anon.status).to.equal(302);
    expect(anon.location).to.equal(`/login?next=${encodeURIComponent(path)}`);

    const c = browserOf(o);
    expect((await c.get(`/p/${post}`)).text).to.include(`data-testid="comment-report" href="${path}"`);
    const page = await c.get(path);
    expect(page.status).to.equal(200);
    expect(page.text).to.include('rude &lt;b&gt;words&lt;/b&gt;');
    expect(page.text).to.include(`<form method="post" action="${path}">`);
    const csrf = await c.csrf(path);
    const sent = await c.post(path, { _csrf: csrf, reason: 'harassment' });
    expect(sent.status).to.equal(302);
    expect(sent.location).to.equal(`/p/${post}?done=reported#c-${comment}`);
    const rows = await db('reports').where({ target_type: 'comment', target_id: comment });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ reporter_owner_id: o.owner.id, reason: 'harassment' });

    expect((await c.get(`/p/${other}/comments/${comment}/report`)).status).to.equal(404);
    expect((await c.post(`/p/${other}/comments/${comment}/report`, { _csrf: csrf, reason: 'spam' })).status).to.equal(
      404,
    );
    await db('comments').where({ id: comment }).update({ deleted_at: new Date() });
    expect((await c.get(path)).status).to.equal(404);
  });
});
