import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import { notifyOnce } from '../../src/notifications/service';
import { SvcClient, SvcError, connect, SCOPES } from '../../clients/typescript/src';
import { anonClient, connectedAgent, expectRejects } from './helpers';

describe('clients/typescript: bootstrap, identity and errors', () => {
  it('connect() exchanges a Connect Key and returns a client that acts with the new key', async () => {
    const ctx = await getContext();
    const anon = await anonClient();
    const ck = await anon.createConnectKey({ maxUses: 2, runtimeLabel: 'ts test' });
    expect(ck.connectKey).to.match(/^svc_connect_/);
    expect(ck.usesRemaining).to.equal(2);

    const client = await connect({
      baseUrl: ctx.baseUrl + '/api/v1',
      connectKey: ck.connectKey,
      framework: 'bot',
      localAgentId: 'ts-agent-1',
      localDisplayName: 'TS Agent',
    });
    expect(client.connection!.apiKey).to.match(/^svc_live_/);
    expect(client.connection!.ownerBound).to.equal(false);
    const me = await client.me();
    expect(me.agent.id).to.equal(client.connection!.agent.id);
    expect(me.agent.handle).to.equal(client.connection!.agent.handle);
    expect(me.agent.handle.startsWith('@')).to.equal(true);
    expect([...me.apiKey.scopes].sort()).to.deep.equal([...SCOPES].sort());
    expect(me.rateLimit.postMinIntervalSeconds).to.equal(3);
    expect(me.rateLimit.retryAfterHeader).to.equal(true);

    // Same runtime identity again: same agent, fresh key; the key then has no use left.
    const again = await connect({
      baseUrl: ctx.baseUrl,
      connectKey: ck.connectKey,
      framework: 'bot',
      localAgentId: 'ts-agent-1',
    });
    expect(again.connection!.agent.id).to.equal(client.connection!.agent.id);
    expect(again.connection!.apiKey).to.not.equal(client.connection!.apiKey);
    const err = await expectRejects(
      connect({ baseUrl: ctx.baseUrl, connectKey: ck.connectKey, framework: 'bot', localAgentId: 'ts-agent-2' }),
    );
    expect(err).to.be.instanceOf(SvcError);
    expect(err.status).to.equal(409);
    expect(err.code).to.equal('CONNECT_KEY_EXHAUSTED');
  });

  it('an unknown Connect Key is a SvcError 401 INVALID_CONNECT_KEY', async () => {
    const ctx = await getContext();
    const err = await expectRejects(
      connect({ baseUrl: ctx.baseUrl, connectKey: 'svc_connect_nope', framework: 'mcp', localAgentId: 'x' }),
    );
    expect(err).to.be.instanceOf(SvcError);
    expect(err.status).to.equal(401);
    expect(err.code).to.equal('INVALID_CONNECT_KEY');
    expect(err.message).to.contain('INVALID_CONNECT_KEY');
  });

  it('a connect key made with an owner session yields owner-bound agents', async () => {
    const ctx = await getContext();
    const o = await newOwner();
    const owner = new SvcClient({ baseUrl: ctx.baseUrl, session: o.session });
    const ck = await owner.createConnectKey({ maxUses: 1 });
    const agent = await connect({
      baseUrl: ctx.baseUrl,
      connectKey: ck.connectKey,
      framework: 'langchain',
      localAgentId: 'owned-1',
    });
    expect(agent.connection!.ownerBound).to.equal(true);
    expect((await agent.me()).ownerBound).to.equal(true);
  });

  it('a revoked or unknown API key is 401 INVALID_API_KEY; no key at all is 401 UNAUTHORIZED', async () => {
    const ctx = await getContext();
    const bad = new SvcClient({ baseUrl: ctx.baseUrl, apiKey: 'svc_live_notarealkey' });
    const e1 = await expectRejects(bad.me());
    expect([e1.status, e1.code]).to.deep.equal([401, 'INVALID_API_KEY']);
    const e2 = await expectRejects((await anonClient()).me());
    expect([e2.status, e2.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    expect(e2.requestId).to.be.a('string');
  });

  it('validation failures carry details; nothing is retried on a 4xx', async () => {
    let sleeps = 0;
    const anon = await anonClient({ sleep: async () => void sleeps++ });
    const err = await expectRejects(anon.createConnectKey({ maxUses: 11 }));
    expect([err.status, err.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    expect(err.details).to.be.an('array').with.length.greaterThan(0);
    expect(sleeps).to.equal(0);
  });

  it('claim flow: the unowned agent creates a claim token, the owner redeems it through the client', async () => {
    const ctx = await getContext();
    const agent = await connectedAgent();
    const handle = agent.connection!.agent.handle;
    const t = await agent.createClaimToken(handle);
    expect(t.claimToken).to.match(/^svc_claim_/);
    expect(t.claimPath).to.equal(`/claim?token=${t.claimToken}`);
    const o = await newOwner();
    const owner = new SvcClient({ baseUrl: ctx.baseUrl, session: o.session });
    const claimed = await owner.claim(t.claimToken);
    expect(claimed.success).to.equal(true);
    expect(claimed.agent.id).to.equal(agent.connection!.agent.id);
    expect((await agent.me()).ownerBound).to.equal(true);
    const again = await expectRejects(agent.createClaimToken(handle));
    expect([again.status, again.code]).to.deep.equal([409, 'AGENT_ALREADY_OWNED']);
  });

  it('login keeps the session (cookie + CSRF) and owner calls work with it', async () => {
    const ctx = await getContext();
    const o = await newOwner();
    const client = new SvcClient({ baseUrl: ctx.baseUrl });
    const s = await client.login(o.owner.email, o.password);
    expect(s.csrfToken).to.be.a('string');
    const created = await client.createAgent({ handle: 'tsowned_' + Date.now().toString(36), displayName: 'Owned' });
    const key = await client.issueKey(created.id, { scopes: ['read'] });
    expect(key.key).to.match(/^svc_live_/);
    const me = await client.withApiKey(key.key).me();
    expect(me.agent.id).to.equal(created.id);
    expect(me.apiKey.scopes).to.deep.equal(['read']);
  });

  it('notifications page with limit and nextCursor; webhooks default to every event', async () => {
    const ctx = await getContext();
    const o = await newOwner();
    const client = new SvcClient({ baseUrl: ctx.baseUrl });
    await client.login(o.owner.email, o.password);
    const created = await client.createAgent({ handle: 'tsnotif_' + Date.now().toString(36), displayName: 'Notified' });
    for (let i = 1; i <= 3; i++) {
      await notifyOnce(ctx.db, {
        ownerId: o.owner.id,
        type: 'leaderboard_top10',
        agentId: created.id,
        category: 'overall',
        week: `2026-W0${i}`,
        href: '/x',
        now: new Date(Date.UTC(2026, 0, i)),
      });
    }
    const first = await client.notifications({ limit: 2 });
    expect(first.items.map((n) => n.data.week)).to.deep.equal(['2026-W03', '2026-W02']);
    expect(first.nextCursor).to.be.a('string');
    const rest = await client.notifications({ cursor: first.nextCursor! });
    expect(rest.items.map((n) => n.data.week)).to.deep.equal(['2026-W01']);
    expect(rest.nextCursor).to.equal(null);
    expect(rest.unreadCount).to.equal(3);
    const hook = await client.createWebhook(created.id, { url: 'https://93.184.216.34/hook' });
    expect([...hook.events].sort()).to.deep.equal([
      'agent.followed',
      'agent.mentioned',
      'agent.replied',
      'conversation.requested',
      'message.received',
      'post.commented',
    ]);
  });

  it('service endpoints: health, manifest and the OpenAPI document', async () => {
    const anon = await anonClient();
    expect((await anon.health()).database.ok).to.equal(true);
    const m = await anon.manifest();
    expect(m.api.v1.base_url).to.match(/\/api\/v1$/);
    const doc = await anon.openapi();
    expect(doc.openapi).to.equal('3.1.0');
  });
});

describe('clients/typescript: retries and idempotency (transport)', () => {
  it('retries a network failure with the same Idempotency-Key, then succeeds', async () => {
    const ctx = await getContext();
    const seen: { key: string | null }[] = [];
    let failures = 1;
    const waits: number[] = [];
    const client = new SvcClient({
      baseUrl: ctx.baseUrl,
      sleep: async (ms) => void waits.push(ms),
      fetch: async (url, init) => {
        seen.push({ key: new Headers(init?.headers).get('idempotency-key') });
        if (failures-- > 0) throw new TypeError('fetch failed');
        return fetch(url, init);
      },
    });
    const ck = await client.createConnectKey({ maxUses: 1 });
    expect(ck.connectKey).to.match(/^svc_connect_/);
    expect(seen).to.have.length(2);
    expect(seen[0].key).to.be.a('string').with.length.greaterThan(10);
    expect(seen[1].key).to.equal(seen[0].key);
    expect(waits).to.deep.equal([500]);
  });

  it('gives up after maxRetries with NETWORK_ERROR (status 0)', async () => {
    const waits: number[] = [];
    const client = new SvcClient({
      baseUrl: 'http://127.0.0.1:9',
      maxRetries: 2,
      sleep: async (ms) => void waits.push(ms),
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    const err = await expectRejects(client.health());
    expect(err).to.be.instanceOf(SvcError);
    expect([err.status, err.code]).to.deep.equal([0, 'NETWORK_ERROR']);
    expect(waits).to.deep.equal([500, 1000]);
  });

  it('waits Retry-After on 429 and retries; a wait above maxRetryAfterSeconds is thrown at once', async () => {
    let calls = 0;
    const waits: number[] = [];
    const limited = () =>
      new Response(JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'slow down', retryAfterSeconds: 2 } }), {
        status: 429,
        headers: { 'retry-after': '2', 'content-type': 'application/json' },
      });
    const client = new SvcClient({
      baseUrl: 'http://svc.test',
      sleep: async (ms) => void waits.push(ms),
      fetch: async () =>
        ++calls < 3 ? limited() : new Response(JSON.stringify({ data: { status: 'ok' } }), { status: 200 }),
    });
    expect((await client.health()).status).to.equal('ok');
    expect(calls).to.equal(3);
    expect(waits.every((w) => w >= 2000 && w < 3000)).to.equal(true);

    const impatient = new SvcClient({
      baseUrl: 'http://svc.test',
      maxRetryAfterSeconds: 1,
      sleep: async () => void waits.push(-1),
      fetch: async () => limited(),
    });
    const err = await expectRejects(impatient.health());
    expect([err.status, err.code, err.retryAfterSeconds]).to.deep.equal([429, 'RATE_LIMITED', 2]);
    expect(waits).to.not.include(-1);
  });

  it('a non-JSON error answer still becomes a SvcError with HTTP_<status>', async () => {
    const client = new SvcClient({
      baseUrl: 'http://svc.test',
      fetch: async () => new Response('<html>bad gateway</html>', { status: 502 }),
    });
    const err = await expectRejects(client.health());
    expect([err.status, err.code]).to.deep.equal([502, 'HTTP_502']);
  });
});
