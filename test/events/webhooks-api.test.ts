import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent, newOwner } from '../helpers/factories';
import { decryptSecret, webhookSecret } from '../../src/webhooks/signing';
import { MAX_WEBHOOKS_PER_AGENT } from '../../src/webhooks/policy';

const RX = 'http://127.0.0.1:9/hook';

describe('webhook management API', () => {
  it('POST creates: 201 with id, url, events, enabled true and a whsec_ secret shown once', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const r = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, {
      session: owner.session,
      body: { url: RX, events: ['agent.mentioned', 'post.commented'] },
    });
    expect(r.status).to.equal(201);
    expect(Object.keys(r.body.data).sort()).to.deep.equal(['enabled', 'events', 'id', 'secret', 'url']);
    expect(r.body.data).to.include({ url: RX, enabled: true });
    expect(r.body.data.events).to.deep.equal(['agent.mentioned', 'post.commented']);
    expect(r.body.data.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(r.body.data.secret.slice(6), 'base64')).to.have.length(32);
    expect(r.headers.get('cache-control')).to.equal('no-store');

    // Stored encrypted, never in clear, and decryptable only with the server key.
    const ctx = await getContext();
    const row = await ctx.db('webhooks').where({ id: r.body.data.id }).first();
    expect(JSON.stringify(row)).to.not.include(r.body.data.secret.slice(6));
    expect(decryptSecret(ctx.config.sessionSecret, row.id, row.secret_enc)).to.equal(r.body.data.secret);
    expect(() => decryptSecret('another-session-secret-0123456789abcdef', row.id, row.secret_enc)).to.throw();
    // The worker's opened secrets: the same secret twice, and a secret opened once is no key for
    // another SESSION_SECRET or another webhook id.
    expect(webhookSecret(ctx.config.sessionSecret, row.id, row.secret_enc)).to.equal(r.body.data.secret);
    expect(webhookSecret(ctx.config.sessionSecret, row.id, row.secret_enc)).to.equal(r.body.data.secret);
    expect(() => webhookSecret('another-session-secret-0123456789abcdef', row.id, row.secret_enc)).to.throw();
    expect(() => webhookSecret(ctx.config.sessionSecret, a.agent.id, row.secret_enc)).to.throw();

    const list = await api('GET', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session });
    expect(list.status).to.equal(200);
    expect(list.body.data).to.deep.equal([
      { id: r.body.data.id, url: RX, events: ['agent.mentioned', 'post.commented'], enabled: true },
    ]);
    expect(list.text).to.not.include('whsec_');
  });

  it('the url is answered and listed as the owner wrote it', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    for (const url of ['http://127.0.0.1:9', 'http://127.0.0.1:9/a b?x=1', 'HTTP://127.0.0.1:80/Hook']) {
      const r = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session, body: { url } });
      expect(r.status, url).to.equal(201);
      expect(r.body.data.url).to.equal(url);
    }
    const list = await api('GET', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session });
    expect(list.body.data.map((w: { url: string }) => w.url).sort()).to.deep.equal([
      'HTTP://127.0.0.1:80/Hook',
      'http://127.0.0.1:9',
      'http://127.0.0.1:9/a b?x=1',
    ]);
  });

  it('events default to every event type and duplicates collapse', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const r = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session, body: { url: RX } });
    expect(r.body.data.events).to.deep.equal([
      'agent.mentioned',
      'post.commented',
      'agent.replied',
      'agent.followed',
      'conversation.requested',
      'message.received',
    ]);
    const d = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, {
      session: owner.session,
      body: { url: RX, events: ['agent.followed', 'agent.followed'] },
    });
    expect(d.status).to.equal(201);
    expect(d.body.data.events).to.deep.equal(['agent.followed']);
  });

  it('validation failures are 400 VALIDATION_FAILED with details', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const path = `/owner/agents/${a.agent.id}/webhooks`;
    for (const body of [
      {},
      { url: 5 },
      { url: RX, events: [] },
      { url: RX, events: ['agent.deleted'] },
      { url: RX, extra: 1 },
      { url: 'not a url' },
      { url: 'x'.repeat(3000) },
    ]) {
      const r = await api('POST', path, { session: owner.session, body });
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
      expect(r.body.error.details).to.be.an('array').with.length.greaterThan(0);
    }
    const bad = await api('POST', path, { session: owner.session, raw: '{nope' });
    expect(bad.body.error.code).to.equal('INVALID_JSON');
  });

  it('non-http(s) schemes and URLs with credentials are 400 WEBHOOK_URL_FORBIDDEN', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    for (const url of [
      'ftp://example.com/x',
      'file:///etc/passwd',
      'gopher://127.0.0.1/',
      'https://user:pw@example.com/hook',
    ]) {
      const r = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session, body: { url } });
      expect(r.status, url).to.equal(400);
      expect(r.body.error.code).to.equal('WEBHOOK_URL_FORBIDDEN');
    }
  });

  it("another owner's agent and an unowned one are 403 NOT_AGENT_OWNER, an unknown or malformed id 404 NOT_FOUND, on every webhook route", async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const created = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, {
      session: owner.session,
      body: { url: RX },
    });
    const wid = created.body.data.id;
    const intruder = await newOwner();
    const unowned = await newAgent();
    const agentIds: [string, number, string][] = [
      [a.agent.id, 403, 'NOT_AGENT_OWNER'],
      [unowned.agent.id, 403, 'NOT_AGENT_OWNER'],
      ['00000000-0000-4000-8000-000000000000', 404, 'NOT_FOUND'],
    ];
    for (const [agentId, status, code] of agentIds) {
      const base = `/owner/agents/${agentId}/webhooks`;
      const calls: [string, string, unknown?][] = [
        ['POST', base, { url: RX }],
        ['GET', base],
        ['PATCH', `${base}/${wid}`, { enabled: false }],
        ['DELETE', `${base}/${wid}`],
        ['POST', `${base}/${wid}/rotate-secret`],
        ['GET', `${base}/${wid}/deliveries`],
        ['POST', `${base}/${wid}/deliveries/00000000-0000-4000-8000-000000000000/redeliver`],
      ];
      for (const [m, p, body] of calls) {
        const r = await api(m, p, { session: intruder.session, body });
        expect(r.status, `${m} ${p}`).to.equal(status);
        expect(r.body.error.code).to.equal(code);
      }
    }
    const malformed = await api('GET', `/owner/agents/not-a-uuid/webhooks`, { session: owner.session });
    expect(malformed.status).to.equal(404);
    // A webhook id of another agent of the same owner is 404 too.
    const b = await newAgent({ owner });
    const cross = await api('PATCH', `/owner/agents/${b.agent.id}/webhooks/${wid}`, {
      session: owner.session,
      body: { enabled: false },
    });
    expect(cross.status).to.equal(404);
    // Nothing changed.
    const list = await api('GET', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session });
    expect(list.body.data).to.have.length(1);
    expect(list.body.data[0].enabled).to.equal(true);
  });

  it('needs a session (401 INVALID_SESSION; an API key is not enough) and X-CSRF-Token on writes (403)', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const base = `/owner/agents/${a.agent.id}/webhooks`;
    expect((await api('GET', base)).body.error.code).to.equal('INVALID_SESSION');
    const byKey = await api('POST', base, { key: a.key, body: { url: RX } });
    expect(byKey.status).to.equal(401);
    const noCsrf = await api('POST', base, { session: owner.session, noCsrf: true, body: { url: RX } });
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    const created = await api('POST', base, { session: owner.session, body: { url: RX } });
    for (const [m, p] of [
      ['PATCH', `${base}/${created.body.data.id}`],
      ['DELETE', `${base}/${created.body.data.id}`],
      ['POST', `${base}/${created.body.data.id}/rotate-secret`],
    ]) {
      const r = await api(m, p, {
        session: owner.session,
        noCsrf: true,
        body: m === 'PATCH' ? { enabled: false } : undefined,
      });
      expect(r.status, `${m} ${p}`).to.equal(403);
    }
    expect((await api('GET', base, { session: owner.session })).body.data).to.have.length(1);
  });

  it('rotate-secret racing a DELETE of the same webhook: 404, never a secret for a webhook that is gone', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const base = `/owner/agents/${a.agent.id}/webhooks`;
    const c = await api('POST', base, { session: owner.session, body: { url: RX } });
    const { db } = await getContext();
    // The DELETE holds its row lock: rotate's ownership check still sees the row, its UPDATE waits.
    const trx = await db.transaction();
    await trx('webhooks').where({ id: c.body.data.id }).del();
    const rotating = api('POST', `${base}/${c.body.data.id}/rotate-secret`, { session: owner.session });
    await new Promise((r) => setTimeout(r, 300));
    await trx.commit();
    const r = await rotating;
    expect(r.status, r.text).to.equal(404);
    expect(r.body.error.code).to.equal('NOT_FOUND');
    expect(await db('webhooks').where({ id: c.body.data.id }).first()).to.equal(undefined);
  });

  it('PATCH changes url, events and enabled; an empty body is 400; DELETE removes it', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const base = `/owner/agents/${a.agent.id}/webhooks`;
    const c = await api('POST', base, { session: owner.session, body: { url: RX } });
    const p = `${base}/${c.body.data.id}`;
    const u = await api('PATCH', p, {
      session: owner.session,
      body: { url: 'http://127.0.0.1:10/other', events: ['agent.followed'], enabled: false },
    });
    expect(u.status).to.equal(200);
    expect(u.body.data).to.deep.equal({
      id: c.body.data.id,
      url: 'http://127.0.0.1:10/other',
      events: ['agent.followed'],
      enabled: false,
    });
    expect((await api('PATCH', p, { session: owner.session, body: {} })).body.error.code).to.equal('VALIDATION_FAILED');
    expect((await api('PATCH', p, { session: owner.session, body: { events: [] } })).status).to.equal(400);
    expect(
      (await api('PATCH', p, { session: owner.session, body: { url: 'ftp://x.example' } })).body.error.code,
    ).to.equal('WEBHOOK_URL_FORBIDDEN');
    const d = await api('DELETE', p, { session: owner.session });
    expect(d.status).to.equal(200);
    expect(d.body.data).to.deep.equal({ id: c.body.data.id, deleted: true });
    expect((await api('DELETE', p, { session: owner.session })).status).to.equal(404);
    expect((await api('GET', base, { session: owner.session })).body.data).to.deep.equal([]);
    expect((await api('GET', `${p}/deliveries`, { session: owner.session })).status).to.equal(404);
  });

  it(`an agent has at most ${MAX_WEBHOOKS_PER_AGENT} webhooks (409 WEBHOOK_LIMIT_REACHED), also under concurrent creation`, async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const base = `/owner/agents/${a.agent.id}/webhooks`;
    const rs = await Promise.all(
      Array.from({ length: MAX_WEBHOOKS_PER_AGENT + 3 }, () =>
        api('POST', base, { session: owner.session, body: { url: RX } }),
      ),
    );
    expect(rs.filter((r) => r.status === 201)).to.have.length(MAX_WEBHOOKS_PER_AGENT);
    const refused = rs.filter((r) => r.status !== 201);
    expect(refused).to.have.length(3);
    for (const r of refused) expect(r.body.error.code).to.equal('WEBHOOK_LIMIT_REACHED');
  });

  it('deliveries of a new webhook are an empty list', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const c = await api('POST', `/owner/agents/${a.agent.id}/webhooks`, { session: owner.session, body: { url: RX } });
    const r = await api('GET', `/owner/agents/${a.agent.id}/webhooks/${c.body.data.id}/deliveries`, {
      session: owner.session,
    });
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({ data: [] });
  });
});
