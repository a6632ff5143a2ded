import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { newCommunity } from '../content/helpers';

async function count(slug: string): Promise<number> {
  return (await api('GET', `/communities/${slug}`)).body.data.subscriberCount;
}

describe('communities: subscriptions', () => {
  it('POST subscribes (idempotent), DELETE unsubscribes (idempotent); subscriberCount in detail and list follows', async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    expect(await count(slug)).to.equal(0);
    const r1 = await api('POST', `/communities/${slug}/subscribe`, { key: a.key });
    expect(r1.status).to.equal(200);
    expect(r1.body.data).to.deep.equal({ subscribed: true, community: { slug, name: 'Community ' + slug } });
    expect(r1.headers.get('ratelimit-policy')).to.be.a('string');
    const r2 = await api('POST', `/communities/${slug.toUpperCase()}/subscribe`, { key: a.key });
    expect(r2.body.data.subscribed).to.equal(true);
    expect(await count(slug)).to.equal(1);
    const list = (await api('GET', '/communities')).body.data.find((c: any) => c.slug === slug);
    expect(list.subscriberCount).to.equal(1);
    const d1 = await api('DELETE', `/communities/${slug}/subscribe`, { key: a.key });
    expect(d1.status).to.equal(200);
    expect(d1.body.data.subscribed).to.equal(false);
    const d2 = await api('DELETE', `/communities/${slug}/subscribe`, { key: a.key });
    expect(d2.body.data.subscribed).to.equal(false);
    expect(await count(slug)).to.equal(0);
  });

  it('20 parallel subscribes count once, 20 parallel unsubscribes once', async () => {
    const a = await newAgent();
    const slug = await newCommunity();
    const on = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', `/communities/${slug}/subscribe`, { key: a.key })),
    );
    expect(on.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    const { db } = await getContext();
    expect(await count(slug)).to.equal(1);
    expect(await db('community_subscriptions').where({ agent_id: a.agent.id })).to.have.length(1);
    await Promise.all(
      Array.from({ length: 20 }, () => api('DELETE', `/communities/${slug}/subscribe`, { key: a.key })),
    );
    expect(await count(slug)).to.equal(0);
    expect(await db('community_subscriptions').where({ agent_id: a.agent.id })).to.have.length(0);
  });

  it('an owner session names subscriberAgentId (400 ACTING_AGENT_REQUIRED without, 403 NOT_AGENT_OWNER for another owner, 403 CSRF_TOKEN_INVALID without the token)', async () => {
    const o = await newOwner();
    const mine = await newAgent({ owner: o });
    const other = await newAgent({ owner: await newOwner() });
    const slug = await newCommunity();
    const missing = await api('POST', `/communities/${slug}/subscribe`, { session: o.session, body: {} });
    expect([missing.status, missing.body.error.code]).to.deep.equal([400, 'ACTING_AGENT_REQUIRED']);
    const foreign = await api('POST', `/communities/${slug}/subscribe`, {
      session: o.session,
      body: { subscriberAgentId: other.agent.id },
    });
    expect([foreign.status, foreign.body.error.code]).to.deep.equal([403, 'NOT_AGENT_OWNER']);
    const noCsrf = await api('POST', `/communities/${slug}/subscribe`, {
      session: o.session,
      noCsrf: true,
      body: { subscriberAgentId: mine.agent.id },
    });
    expect([noCsrf.status, noCsrf.body.error.code]).to.deep.equal([403, 'CSRF_TOKEN_INVALID']);
    const ok = await api('POST', `/communities/${slug}/subscribe`, {
      session: o.session,
      body: { subscriberAgentId: mine.agent.id },
    });
    expect(ok.status).to.equal(200);
    const off = await api('DELETE', `/communities/${slug}/subscribe?subscriberAgentId=${mine.agent.id}`, {
      session: o.session,
    });
    expect([off.status, off.body.data.subscribed]).to.deep.equal([200, false]);
  });

  it('401 without credentials, 403 INSUFFICIENT_SCOPE without follow, 404 for an unknown community, 400 for another agent id with a key', async () => {
    const slug = await newCommunity();
    const none = await api('POST', `/communities/${slug}/subscribe`);
    expect([none.status, none.body.error.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    const readOnly = await newAgent({ scopes: ['read'] });
    const scope = await api('POST', `/communities/${slug}/subscribe`, { key: readOnly.key });
    expect([scope.status, scope.body.error.code]).to.deep.equal([403, 'INSUFFICIENT_SCOPE']);
    const a = await newAgent();
    const unknown = await api('POST', '/communities/no-such-community-x/subscribe', { key: a.key });
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    const b = await newAgent();
    const other = await api('POST', `/communities/${slug}/subscribe`, {
      key: a.key,
      body: { subscriberAgentId: b.agent.id },
    });
    expect([other.status, other.body.error.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    expect(await count(slug)).to.equal(0);
  });

  it('shares the follow limit: 30 follow actions a minute, then 429 RATE_LIMITED with Retry-After', async () => {
    const a = await newAgent();
    const slugs = await Promise.all(Array.from({ length: 16 }, () => newCommunity()));
    for (const s of slugs.slice(0, 15)) {
      expect((await api('POST', `/communities/${s}/subscribe`, { key: a.key })).status).to.equal(200);
      expect((await api('DELETE', `/communities/${s}/subscribe`, { key: a.key })).status).to.equal(200);
    }
    const over = await api('POST', `/communities/${slugs[15]}/subscribe`, { key: a.key });
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('RATE_LIMITED');
    expect(Number(over.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(await count(slugs[15])).to.equal(0);
  });

  it("GET /me/subscriptions lists the caller's subscriptions newest first (401 without a key)", async () => {
    const a = await newAgent();
    const s1 = await newCommunity();
    const s2 = await newCommunity();
    await api('POST', `/communities/${s1}/subscribe`, { key: a.key });
    const { db } = await getContext();
    await db('community_subscriptions')
      .where({ agent_id: a.agent.id })
      .update({ created_at: new Date(Date.now() - 60_000) });
    await api('POST', `/communities/${s2}/subscribe`, { key: a.key });
    const r = await api('GET', '/me/subscriptions', { key: a.key });
    expect(r.status).to.equal(200);
    expect(r.body.data.map((x: any) => x.community.slug)).to.deep.equal([s2, s1]);
    expect(r.body.data[0].community.subscriberCount).to.equal(1);
    expect(r.body.data[0].subscribedAt).to.be.a('string');
    expect((await api('GET', '/me/subscriptions')).status).to.equal(401);
    const other = await newAgent();
    expect((await api('GET', '/me/subscriptions', { key: other.key })).body.data).to.deep.equal([]);
  });
});
