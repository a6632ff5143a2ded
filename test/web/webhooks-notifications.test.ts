import crypto from 'crypto';
import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { uniq } from '../helpers/factories';
import { fanoutEvent } from '../../src/webhooks/fanout';
import { notifyOnce } from '../../src/notifications/service';
import { WebClient } from './client';

async function ownerWithAgent() {
  const c = new WebClient();
  await c.signup();
  const csrf = await c.csrf();
  const created = await c.post('/dashboard/agents', { handle: uniq('hook'), displayName: 'Hooked', _csrf: csrf });
  const agentPath = created.location!.split('?')[0];
  const { db } = await getContext();
  const agent = await db('agents')
    .where({ id: agentPath.split('/').pop() })
    .first();
  return { c, csrf, agentPath, agent };
}

async function deliverJobs(deliveryId: string): Promise<any[]> {
  const { db } = await getContext();
  const { rows } = await db.raw(
    `select j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'webhook_deliver' and j.payload->>'deliveryId' = ?`,
    [deliveryId],
  );
  return rows.map((r: any) => r.payload);
}

describe('web: webhooks and notifications on the dashboard', () => {
  it('creates a webhook with chosen events and shows its secret once', async () => {
    const { c, csrf, agentPath } = await ownerWithAgent();
    const none = await c.post(agentPath + '/webhooks', { _csrf: csrf, url: 'http://127.0.0.1:9/hook' });
    expect(none.status).to.equal(400);
    expect(none.text).to.include('Choose at least one event');
    const bad = await c.post(agentPath + '/webhooks', { _csrf: csrf, url: 'not a url', events: 'post.commented' });
    expect(bad.status).to.equal(400);
    expect(bad.text).to.include('value="not a url"');

    const res = await c.post(agentPath + '/webhooks', {
      _csrf: csrf,
      url: 'http://127.0.0.1:9/hook',
      events: ['post.commented', 'agent.followed'],
    });
    expect(res.status).to.equal(201);
    const secret = /id="webhook-secret">([^<]+)</.exec(res.text)![1];
    expect(secret).to.match(/^whsec_/);
    const page = await c.get(agentPath);
    expect(page.text).not.to.include(secret);
    expect(page.text).to.include('http://127.0.0.1:9/hook');
    expect(page.text).to.include('post.commented');
    expect(page.text).to.include('>enabled<');
  });

  it('disables, enables, rotates and deletes a webhook', async () => {
    const { c, csrf, agentPath, agent } = await ownerWithAgent();
    await c.post(agentPath + '/webhooks', { _csrf: csrf, url: 'http://127.0.0.1:9/hook', events: 'agent.followed' });
    const { db } = await getContext();
    const hook = await db('webhooks').where({ agent_id: agent.id }).first();
    const base = `${agentPath}/webhooks/${hook.id}`;

    const off = await c.post(base + '/enabled', { _csrf: csrf, enabled: 'false' });
    expect(off.location).to.equal(agentPath + '?done=webhook_updated');
    expect((await db('webhooks').where({ id: hook.id }).first()).enabled).to.equal(false);
    expect((await c.get(agentPath)).text).to.include('>disabled<');
    await c.post(base + '/enabled', { _csrf: csrf, enabled: 'true' });
    expect((await db('webhooks').where({ id: hook.id }).first()).enabled).to.equal(true);

    const rotated = await c.post(base + '/rotate-secret', { _csrf: csrf });
    expect(rotated.status).to.equal(200);
    expect(rotated.text).to.match(/id="webhook-secret">whsec_/);
    expect((await db('webhooks').where({ id: hook.id }).first()).secret_enc).not.to.equal(hook.secret_enc);

    const noCsrf = await c.post(base + '/delete', {});
    expect(noCsrf.status).to.equal(403);
    const del = await c.post(base + '/delete', { _csrf: csrf });
    expect(del.location).to.equal(agentPath + '?done=webhook_deleted');
    expect(await db('webhooks').where({ id: hook.id }).first()).to.equal(undefined);
  });

  it('lists deliveries and queues a redelivery', async () => {
    const { c, csrf, agentPath, agent } = await ownerWithAgent();
    await c.post(agentPath + '/webhooks', { _csrf: csrf, url: 'http://127.0.0.1:9/hook', events: 'post.commented' });
    const { db, deps } = await getContext();
    const hook = await db('webhooks').where({ agent_id: agent.id }).first();
    const eventId = 'evt_' + crypto.randomUUID().replace(/-/g, '');
    expect(
      await fanoutEvent(deps, {
        eventId,
        type: 'post.commented',
        agentId: agent.id,
        data: { postId: 'p' },
        occurredAt: new Date().toISOString(),
      }),
    ).to.have.length(1);
    const page = await c.get(`${agentPath}/webhooks/${hook.id}`);
    expect(page.status).to.equal(200);
    expect(page.text).to.include(eventId);
    expect(page.text).to.include('post.commented');
    const action = /action="([^"]+\/redeliver)"/.exec(page.text)![1];
    const deliveryId = action.split('/').slice(-2)[0];
    const before = (await deliverJobs(deliveryId)).length;
    const res = await c.post(action, { _csrf: csrf });
    expect(res.location).to.equal(`${agentPath}/webhooks/${hook.id}?done=redelivered`);
    const jobs = await deliverJobs(deliveryId);
    expect(jobs.length).to.equal(before + 1);
    expect(jobs.some((j) => String(j.token).startsWith('redeliver:'))).to.equal(true);
  });

  it("hides another owner's webhooks and deliveries", async () => {
    const a = await ownerWithAgent();
    await a.c.post(a.agentPath + '/webhooks', {
      _csrf: a.csrf,
      url: 'http://127.0.0.1:9/hook',
      events: 'post.commented',
    });
    const { db } = await getContext();
    const hook = await db('webhooks').where({ agent_id: a.agent.id }).first();
    const b = new WebClient();
    await b.signup();
    expect((await b.get(`${a.agentPath}/webhooks/${hook.id}`)).status).to.equal(403);
    expect((await b.post(`${a.agentPath}/webhooks/${hook.id}/delete`, { _csrf: await b.csrf() })).status).to.equal(403);
    expect(await db('webhooks').where({ id: hook.id }).first()).to.not.equal(undefined);
  });

  it('shows notifications with an unread badge, marks one and then all read', async () => {
    const { c, csrf, agent } = await ownerWithAgent();
    const { db } = await getContext();
    const empty = await c.get('/notifications');
    expect(empty.text).to.include('data-testid="no-notifications"');
    expect(empty.text).not.to.include('data-testid="unread-badge"');
    for (const [type, rank] of [
      ['leaderboard_top10', 3],
      ['leaderboard_rank1', 1],
    ] as const) {
      await notifyOnce(db, {
        ownerId: agent.owner_id,
        type,
        agentId: agent.id,
        category: 'funny',
        week: '2026-W02',
        data: { category: 'funny', week: '2026-W02', rank, handle: '@' + agent.handle },
        href: '/leaderboards?category=funny&week=2026-W02',
      });
    }
    const page = await c.get('/notifications');
    expect(/data-testid="unread-badge">(\d+)</.exec(page.text)![1]).to.equal('2');
    expect(page.text).to.include(`<strong><bdi>@${agent.handle}</bdi></strong> is #1 in <strong>funny</strong>`);
    expect(page.text).to.include('href="/leaderboards?category=funny&amp;week=2026-W02"');
    const id = /name="ids" value="([^"]+)"/.exec(page.text)![1];
    const one = await c.post('/notifications/read', { _csrf: csrf, ids: id });
    expect(one.location).to.equal('/notifications?done=marked_read');
    expect(/data-testid="unread-badge">(\d+)</.exec((await c.get('/dashboard')).text)![1]).to.equal('1');
    await c.post('/notifications/read', { _csrf: csrf, all: 'true' });
    const after = await c.get('/notifications');
    expect(after.text).not.to.include('data-testid="unread-badge"');
    expect(/data-testid="unread-count">(\d+)</.exec(after.text)![1]).to.equal('0');
    const forged = await c.post('/notifications/read', { all: 'true' });
    expect(forged.status).to.equal(403);
  });
});
