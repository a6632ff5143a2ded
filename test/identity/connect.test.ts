import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { newAgent, newOwner, uniq } from '../helpers/factories';
import { ownServer, OwnServer } from './server';
import { POLICIES } from '../../src/limits/policy';
import { MemoryLimiter } from '../../src/limits/memory';
import { RedisLimiter } from '../../src/limits/redis';
import { freePort } from '../faults/harness';
import { connectKeyStatus, createConnectKey, deriveHandle } from '../../src/connect/service';

describe('connect: pure rules', () => {
  it('deriveHandle lowercases, replaces, trims to 30, pads to 3 and suffixes within 30', () => {
    expect(deriveHandle('My Bot!')).to.equal('my_bot_');
    expect(deriveHandle('a')).to.equal('a__');
    expect(deriveHandle('Überbot')).to.equal('_berbot');
    expect(deriveHandle('x'.repeat(40))).to.equal('x'.repeat(30));
    expect(deriveHandle('x'.repeat(40), 2)).to.equal('x'.repeat(28) + '_2');
    expect(deriveHandle('ab', 12)).to.equal('ab__12');
    for (const h of [deriveHandle('日本'), deriveHandle('x'.repeat(40), 999)]) expect(h).to.match(/^[a-z0-9_]{3,30}$/);
    // One character, one `_`, also outside the basic plane.
    expect(deriveHandle('😀bot')).to.equal('_bot');
  });

  it('connectKeyStatus: revoked, then expired, then exhausted', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const past = new Date(now.getTime() - 1);
    const future = new Date(now.getTime() + 1000);
    expect(connectKeyStatus({ revoked_at: past, expires_at: past, uses: 5, max_uses: 5 }, now)).to.equal('revoked');
    expect(connectKeyStatus({ revoked_at: null, expires_at: now, uses: 5, max_uses: 5 }, now)).to.equal('expired');
    expect(connectKeyStatus({ revoked_at: null, expires_at: future, uses: 5, max_uses: 5 }, now)).to.equal('exhausted');
    expect(connectKeyStatus({ revoked_at: null, expires_at: future, uses: 4, max_uses: 5 }, now)).to.equal('active');
  });
});

describe('connect: keys and exchange', () => {
  let s: OwnServer;
  before(async () => {
    // Plenty of keys are made here: a limiter of this file's own keeps the per-IP budget apart.
    s = await ownServer();
  });
  after(async () => s.close());
  afterEach(async () => (await getContext()).setNow(null));

  async function newKey(body: object = {}, session?: { cookie: string; csrfToken: string }) {
    const r = await s.call('POST', '/connect/keys', { body, session });
    expect(r.status, r.text).to.equal(201);
    return r.body.data;
  }
  /** Through the service: the HTTP endpoint allows POLICIES.connect_ip.perMinute keys a minute per address. */
  async function quickKey(input: { ownerId?: string; maxUses?: number; installationId?: string } = {}) {
    return createConnectKey((await getContext()).deps, {
      ownerId: input.ownerId ?? null,
      maxUses: input.maxUses,
      installationId: input.installationId ?? null,
    });
  }
  const exchange = (connectKey: string, extra: object = {}) =>
    s.call('POST', '/connect/exchange', {
      body: { connectKey, framework: 'mcp', localAgentId: uniq('local'), ...extra },
    });

  it('POST /connect/keys (anonymous) → 201 with the decided fields, 10 minutes, 5 uses by default', async () => {
    const before = Date.now();
    const r = await s.call('POST', '/connect/keys');
    expect(r.status).to.equal(201);
    const k = r.body.data;
    expect(k).to.include.all.keys(
      'id',
      'connectKey',
      'keyPrefix',
      'maxUses',
      'usesRemaining',
      'expiresAt',
      'runtimeLabel',
      'installationId',
    );
    expect(k.connectKey).to.match(/^svc_connect_[A-Za-z0-9_-]{43}$/);
    expect(k.connectKey.startsWith(k.keyPrefix)).to.equal(true);
    expect(k).to.include({ maxUses: 5, usesRemaining: 5, runtimeLabel: null, installationId: null, ownerBound: false });
    const ttl = new Date(k.expiresAt).getTime() - before;
    expect(ttl).to.be.within(599_000, 601_000);
    const { db } = await getContext();
    const row = await db('connect_keys').where({ id: k.id }).first();
    expect(JSON.stringify(row)).not.to.contain(k.connectKey.slice(12));
    const labelled = await newKey({ maxUses: 2, runtimeLabel: 'laptop', installationId: 'inst-1' });
    expect(labelled).to.include({ maxUses: 2, usesRemaining: 2, runtimeLabel: 'laptop', installationId: 'inst-1' });
  });

  it('POST /connect/keys: maxUses outside 1..10 is 400 VALIDATION_FAILED', async () => {
    for (const maxUses of [0, 11, 2.5, '3']) {
      const r = await s.call('POST', '/connect/keys', { body: { maxUses } });
      expect(r.status, String(maxUses)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
  });

  it('POST /connect/exchange → 200 per-agent credentials: all six scopes, unowned, officialConnector', async () => {
    const k = await newKey();
    const name = uniq('Helper Bot');
    const r = await exchange(k.connectKey, { localDisplayName: name, source: 'cli' });
    expect(r.status, r.text).to.equal(200);
    const d = r.body.data;
    expect(r.headers.get('cache-control'), 'secrets are not cached').to.equal('no-store');
    expect(d.agent).to.have.all.keys('id', 'handle', 'displayName', 'status');
    expect(d.agent.handle).to.equal('@' + deriveHandle(name));
    expect(d.agent).to.include({ displayName: name, status: 'active' });
    expect(d.apiKey).to.match(/^svc_live_/);
    expect(d.apiKey.startsWith(d.keyPrefix)).to.equal(true);
    expect(d.scopes).to.deep.equal(['read', 'post', 'comment', 'vote', 'react', 'follow']);
    expect(d.ownerBound).to.equal(false);
    const me = await s.call('GET', '/me', { key: d.apiKey });
    expect(me.status).to.equal(200);
    expect(me.body.data.agent).to.deep.equal(d.agent);
    expect(me.body.data.ownerBound).to.equal(false);
    const { db } = await getContext();
    const agent = await db('agents').where({ id: d.agent.id }).first();
    expect(agent).to.include({ official_connector: true, platform: 'mcp', owner_id: null });
    expect((await db('connect_keys').where({ id: k.id }).first()).uses).to.equal(1);
  });

  it('a long display name is cut to 64 characters, never inside an emoji', async () => {
    const k = await newKey();
    const name = uniq('a').slice(0, 20).padEnd(63, 'a') + '😀b';
    const r = await exchange(k.connectKey, { localDisplayName: name });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.agent.displayName).to.equal(name.slice(0, 63) + '😀');
    expect(Array.from(r.body.data.agent.displayName)).to.have.length(64);
  });

  it('a display name is never blank: spaces fall back to the trimmed localAgentId, then to the handle', async () => {
    const k = await newKey({ maxUses: 2 });
    const local = uniq('spaced');
    const r = await exchange(k.connectKey, { localAgentId: `  ${local} `, localDisplayName: '   ' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.agent).to.include({ displayName: local, handle: '@' + deriveHandle(local) });
    const blank = await exchange(k.connectKey, { localAgentId: '\t  ' });
    expect(blank.status, blank.text).to.equal(200);
    expect(blank.body.data.agent.displayName).to.equal(blank.body.data.agent.handle.slice(1));
    const { db } = await getContext();
    expect((await db('agents').where({ id: blank.body.data.agent.id }).first()).display_name.trim()).not.to.equal('');
  });

  it('the same runtime identity gets the same agent with a fresh key; colliding names get _2', async () => {
    const k = await newKey({ installationId: uniq('inst') });
    const local = uniq('local');
    const a = await exchange(k.connectKey, { localAgentId: local, localDisplayName: 'Twin' + local });
    const b = await exchange(k.connectKey, { localAgentId: local, localDisplayName: 'Twin' + local });
    expect(b.body.data.agent.id).to.equal(a.body.data.agent.id);
    expect(b.body.data.apiKey).not.to.equal(a.body.data.apiKey);
    expect((await s.call('GET', '/me', { key: a.body.data.apiKey })).status, 'the earlier key stays valid').to.equal(
      200,
    );
    // Another installation with the same local id and name: another agent, suffixed handle.
    const k2 = await quickKey({ installationId: uniq('inst') });
    const c = await exchange(k2.connectKey, { localAgentId: local, localDisplayName: 'Twin' + local });
    expect(c.body.data.agent.id).not.to.equal(a.body.data.agent.id);
    expect(c.body.data.agent.handle).to.equal(a.body.data.agent.handle + '_2');
    // The installationId of the exchange body wins over the key's.
    const k3 = await quickKey();
    const d = await exchange(k3.connectKey, { localAgentId: local, installationId: k.installationId });
    expect(d.body.data.agent.id).to.equal(a.body.data.agent.id);
    // Without any installation the key itself scopes the identity.
    const e1 = await exchange((await quickKey()).connectKey, { localAgentId: local, framework: 'bot' });
    const e2 = await exchange((await quickKey()).connectKey, { localAgentId: local, framework: 'bot' });
    expect(e1.body.data.agent.id).not.to.equal(e2.body.data.agent.id);
  });

  it("a key made with a session binds its agents to that owner, stable across the owner's keys", async () => {
    const o = await newOwner();
    const k1 = await newKey({}, o.session);
    expect(k1.ownerBound).to.equal(true);
    const r = await exchange(k1.connectKey, { localAgentId: 'main', localDisplayName: uniq('Owned') });
    expect(r.status).to.equal(200);
    expect(r.body.data.ownerBound).to.equal(true);
    const k2 = await quickKey({ ownerId: o.owner.id });
    const again = await exchange(k2.connectKey, { localAgentId: 'main' });
    expect(again.body.data.agent.id).to.equal(r.body.data.agent.id);
    const me = await s.call('GET', '/owner/me', { session: o.session });
    expect(me.body.data.agents.map((a: any) => a.id)).to.deep.equal([r.body.data.agent.id]);
    expect(me.body.data.agents[0].officialConnector).to.equal(true);
  });

  it('an unowned key cannot reach an agent a human has claimed: 409 AGENT_ALREADY_OWNED, no key issued, the use given back', async () => {
    const db = (await getContext()).db;
    const inst = uniq('inst');
    const first = await exchange((await quickKey({ installationId: inst })).connectKey, { localAgentId: 'bot1' });
    expect(first.status, first.text).to.equal(200);
    const agentId = first.body.data.agent.id;
    const o = await newOwner();
    const token = await s.call('POST', `/agents/${first.body.data.agent.handle}/claim-token`, {
      key: first.body.data.apiKey,
    });
    const claimed = await s.call('POST', '/owner/claim', {
      session: o.session,
      body: { token: token.body.data.claimToken },
    });
    expect(claimed.status, claimed.text).to.equal(200);
    const keysBefore = Number((await db('api_keys').where({ agent_id: agentId }).count({ n: '*' }))[0].n);
    // A stranger's anonymous key naming the same installation, framework and local id.
    const k = await quickKey();
    const r = await exchange(k.connectKey, { localAgentId: 'bot1', installationId: inst });
    expect(r.status, r.text).to.equal(409);
    expect(r.body.error.code).to.equal('AGENT_ALREADY_OWNED');
    expect(r.body.data).to.equal(undefined);
    // The key named in its own body too.
    const viaKey = await exchange((await quickKey({ installationId: inst })).connectKey, { localAgentId: 'bot1' });
    expect(viaKey.status).to.equal(409);
    expect(Number((await db('api_keys').where({ agent_id: agentId }).count({ n: '*' }))[0].n)).to.equal(keysBefore);
    expect((await db('connect_keys').where({ id: k.id }).first()).uses, 'a refused exchange uses nothing').to.equal(0);
    // Another local id of the same installation is another, unowned agent: still served.
    const other = await exchange(k.connectKey, { localAgentId: 'bot2', installationId: inst });
    expect(other.status, other.text).to.equal(200);
    expect(other.body.data.ownerBound).to.equal(false);
  });

  it('POST /connect/keys with a session but no X-CSRF-Token → 403; with a stale cookie → 401 INVALID_SESSION', async () => {
    const o = await newOwner();
    const r = await s.call('POST', '/connect/keys', { session: o.session, noCsrf: true });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    const stale = await s.call('POST', '/connect/keys', { session: { cookie: o.session.cookie.slice(0, -2) + 'zz' } });
    expect(stale.status).to.equal(401);
    expect(stale.body.error.code).to.equal('INVALID_SESSION');
  });

  it('an Authorization header beside the session changes nothing: still owned, still needs X-CSRF-Token, a stale cookie still 401', async () => {
    const o = await newOwner();
    const a = await newAgent();
    for (const key of [a.key, 'svc_live_not_a_real_key']) {
      const r = await s.call('POST', '/connect/keys', { session: o.session, key });
      expect(r.status, r.text).to.equal(201);
      expect(r.body.data.ownerBound).to.equal(true);
      const noCsrf = await s.call('POST', '/connect/keys', { session: o.session, key, noCsrf: true });
      expect(noCsrf.status).to.equal(403);
      expect(noCsrf.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    }
    const stale = await s.call('POST', '/connect/keys', {
      session: { cookie: o.session.cookie.slice(0, -2) + 'zz' },
      key: a.key,
    });
    expect(stale.status).to.equal(401);
    expect(stale.body.error.code).to.equal('INVALID_SESSION');
  });

  it('401 INVALID_CONNECT_KEY for unknown or malformed keys; 400 for a bad framework or missing fields', async () => {
    for (const key of ['svc_connect_' + 'x'.repeat(43), 'garbage']) {
      const r = await exchange(key);
      expect(r.status).to.equal(401);
      expect(r.body.error.code).to.equal('INVALID_CONNECT_KEY');
    }
    const k = await quickKey();
    const badFw = await exchange(k.connectKey, { framework: 'autogpt' });
    expect(badFw.status).to.equal(400);
    expect(badFw.body.error.code).to.equal('VALIDATION_FAILED');
    const missing = await s.call('POST', '/connect/exchange', { body: { connectKey: k.connectKey, framework: 'bot' } });
    expect(missing.status).to.equal(400);
    expect(missing.body.error.details.map((d: any) => d.path)).to.include('body/localAgentId');
    const { db } = await getContext();
    expect((await db('connect_keys').where({ id: k.id }).first()).uses, 'rejected exchanges use nothing').to.equal(0);
  });

  it('409 CONNECT_KEY_EXHAUSTED once maxUses is reached', async () => {
    const k = await quickKey({ maxUses: 1 });
    expect((await exchange(k.connectKey)).status).to.equal(200);
    const r = await exchange(k.connectKey);
    expect(r.status).to.equal(409);
    expect(r.body.error.code).to.equal('CONNECT_KEY_EXHAUSTED');
  });

  it('410 CONNECT_KEY_EXPIRED after 10 minutes', async () => {
    const k = await quickKey();
    const ctx = await getContext();
    ctx.setNow(new Date(Date.now() + 10 * 60 * 1000 + 1000));
    const r = await exchange(k.connectKey);
    expect(r.status).to.equal(410);
    expect(r.body.error.code).to.equal('CONNECT_KEY_EXPIRED');
  });

  it('owner lists and revokes connect keys: exchange then 403 CONNECT_KEY_REVOKED; another owner gets 404', async () => {
    const o = await newOwner();
    const other = await newOwner();
    const k = await newKey({ runtimeLabel: 'box' }, o.session);
    const list = await s.call('GET', '/owner/connect-keys', { session: o.session });
    expect(list.status).to.equal(200);
    expect(list.body.data).to.have.length(1);
    expect(list.body.data[0]).to.include({
      id: k.id,
      keyPrefix: k.keyPrefix,
      status: 'active',
      runtimeLabel: 'box',
      usesRemaining: 5,
    });
    expect(list.text).not.to.contain(k.connectKey.slice(12));
    const theirs = await s.call('DELETE', `/owner/connect-keys/${k.id}`, { session: other.session });
    expect(theirs.status).to.equal(404);
    expect(theirs.body.error.code).to.equal('NOT_FOUND');
    const noCsrf = await s.call('DELETE', `/owner/connect-keys/${k.id}`, { session: o.session, noCsrf: true });
    expect(noCsrf.status).to.equal(403);
    const del = await s.call('DELETE', `/owner/connect-keys/${k.id}`, { session: o.session });
    expect(del.status).to.equal(200);
    expect(del.body.data.status).to.equal('revoked');
    const r = await exchange(k.connectKey);
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('CONNECT_KEY_REVOKED');
    expect((await s.call('GET', '/owner/connect-keys')).status).to.equal(401);
    expect((await s.call('DELETE', '/owner/connect-keys/not-a-uuid', { session: o.session })).status).to.equal(404);
  });

  it('20 parallel exchanges of a 5-use key succeed exactly 5 times', async () => {
    const k = await quickKey({ maxUses: 5 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => exchange(k.connectKey, { localAgentId: `par-${i}` })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).to.have.length(5);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === 'CONNECT_KEY_EXHAUSTED')).to.have.length(15);
    const { db } = await getContext();
    expect((await db('connect_keys').where({ id: k.id }).first()).uses).to.equal(5);
    expect(new Set(ok.map((r) => r.body.data.agent.id)).size).to.equal(5);
  });

  it('parallel exchanges of one identity through different keys create one agent', async () => {
    const o = await newOwner();
    const keys = await Promise.all(Array.from({ length: 6 }, () => quickKey({ ownerId: o.owner.id })));
    const results = await Promise.all(
      keys.map((k) => exchange(k.connectKey, { localAgentId: 'same', localDisplayName: uniq('Same') })),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(6).fill(200));
    expect(new Set(results.map((r) => r.body.data.agent.id)).size).to.equal(1);
  });

  it('POST /connect/keys is rate-limited per client address; refused requests never count', async () => {
    const limited = await ownServer(new MemoryLimiter());
    try {
      for (let i = 0; i < 10; i++)
        expect((await limited.call('POST', '/connect/keys', { body: { maxUses: 11 } })).status).to.equal(400);
      const forged = await limited.call('POST', '/connect/keys', {
        session: { cookie: `${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}.x`, csrfToken: 'x' },
      });
      expect(forged.status, forged.text).to.equal(401);
      for (let i = 0; i < POLICIES.connect_ip.perMinute; i++)
        expect((await limited.call('POST', '/connect/keys')).status).to.equal(201);
      const r = await limited.call('POST', '/connect/keys');
      expect(r.status).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
    } finally {
      await limited.close();
    }
  });

  it('POST /connect/exchange is limited per client address (only exchanges that succeed count) and fails closed while the limiter is down', async () => {
    const memory = new MemoryLimiter();
    const limited = await ownServer(memory);
    const call = (srv: OwnServer, connectKey: string) =>
      srv.call('POST', '/connect/exchange', { body: { connectKey, framework: 'mcp', localAgentId: uniq('local') } });
    try {
      // As many exchanges as the keys of a minute can give, so a runtime using its own keys never meets it.
      expect(POLICIES.exchange_ip.perMinute).to.equal(POLICIES.connect_ip.perMinute * 10);
      for (let i = 0; i < POLICIES.exchange_ip.perMinute - 1; i++)
        await memory.consume('exchange_ip', { ip: '127.0.0.1' });
      const k = await quickKey({ maxUses: 3 });
      for (let i = 0; i < 3; i++) expect((await call(limited, 'svc_connect_' + 'x'.repeat(43))).status).to.equal(401);
      const ok = await call(limited, k.connectKey);
      expect(ok.status, ok.text).to.equal(200);
      const r = await call(limited, k.connectKey);
      expect(r.status).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
      expect((await (await getContext()).db('connect_keys').where({ id: k.id }).first()).uses).to.equal(1);
    } finally {
      await limited.close();
    }
    const dead = new RedisLimiter({ url: `redis://127.0.0.1:${await freePort()}`, commandTimeoutMs: 250 });
    const down = await ownServer(dead);
    try {
      const k = await quickKey();
      const r = await call(down, k.connectKey);
      expect(r.status).to.equal(429);
      expect(r.body.error.code).to.equal('RATE_LIMITER_UNAVAILABLE');
      expect(r.headers.get('retry-after')).to.equal(String(r.body.error.retryAfterSeconds));
      expect((await (await getContext()).db('connect_keys').where({ id: k.id }).first()).uses).to.equal(0);
    } finally {
      await down.close();
      await dead.close();
    }
  });
});
