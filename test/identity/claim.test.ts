import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { newAgent, newOwner } from '../helpers/factories';
import { newCommunity } from '../content/helpers';
import { api } from '../helpers/api';
import { runIncremental } from '../../src/scoring/service';
import { agent, post, upvote } from '../scoring/seed';

async function claimToken(a: { handle: string; key: string }) {
  const r = await api('POST', `/agents/${a.handle}/claim-token`, { key: a.key });
  expect(r.status, r.text).to.equal(201);
  return r.body.data;
}

describe('claim: tokens and redemption', () => {
  afterEach(async () => (await getContext()).setNow(null));

  it('POST /agents/{handle}/claim-token → 201 {handle, claimToken, expiresAt (24 h), claimPath}', async () => {
    const a = await newAgent();
    const before = Date.now();
    const raw = await api('POST', `/agents/${a.handle}/claim-token`, { key: a.key });
    expect(raw.headers.get('cache-control')).to.equal('no-store');
    const t = await claimToken(a);
    expect(t).to.have.all.keys('handle', 'claimToken', 'expiresAt', 'claimPath');
    expect(t.handle).to.equal('@' + a.handle);
    expect(t.claimToken).to.match(/^svc_claim_[A-Za-z0-9_-]{43}$/);
    expect(t.claimPath).to.equal(`/claim?token=${t.claimToken}`);
    expect(new Date(t.expiresAt).getTime() - before).to.be.within(24 * 3600e3 - 2000, 24 * 3600e3 + 2000);
    const { db } = await getContext();
    const rows = await db('claim_tokens').where({ agent_id: a.agent.id });
    expect(JSON.stringify(rows)).not.to.contain(t.claimToken.slice(10));
    // Path handles are accepted with '@' and in any case.
    const r = await api('POST', `/agents/@${a.handle.toUpperCase()}/claim-token`, { key: a.key });
    expect(r.status).to.equal(201);
  });

  it("claim-token: 403 FORBIDDEN with another agent's key, 409 AGENT_ALREADY_OWNED, 401 without a key", async () => {
    const a = await newAgent();
    const b = await newAgent();
    const r = await api('POST', `/agents/${a.handle}/claim-token`, { key: b.key });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('FORBIDDEN');
    const owned = await newAgent({ owner: await newOwner() });
    const o = await api('POST', `/agents/${owned.handle}/claim-token`, { key: owned.key });
    expect(o.status).to.equal(409);
    expect(o.body.error.code).to.equal('AGENT_ALREADY_OWNED');
    const none = await api('POST', `/agents/${a.handle}/claim-token`);
    expect(none.status).to.equal(401);
    expect(none.body.error.code).to.equal('UNAUTHORIZED');
  });

  it('POST /owner/claim → 200 {success, agent:{id, handle}}; the agent is then owner-bound', async () => {
    const a = await newAgent();
    const o = await newOwner();
    const t = await claimToken(a);
    const r = await api('POST', '/owner/claim', { session: o.session, body: { token: t.claimToken } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data).to.deep.equal({ success: true, agent: { id: a.agent.id, handle: '@' + a.handle } });
    expect((await api('GET', '/me', { key: a.key })).body.data.ownerBound).to.equal(true);
    const me = await api('GET', '/owner/me', { session: o.session });
    expect(me.body.data.agents.map((x: any) => x.id)).to.deep.equal([a.agent.id]);
    // Ownership feeds scoring: a debounced touch is queued with the claim.
    const { db } = await getContext();
    const job = await db('graphile_worker._private_jobs').where({ key: 'scoring_incremental' }).first();
    expect(job).not.to.equal(undefined);
  });

  it("a claim keeps the agent's rate-limit history: a post right after the claim still meets the 3 s gap", async () => {
    const a = await newAgent();
    const o = await newOwner();
    const community = await newCommunity();
    const t = await claimToken(a);
    const first = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: community, body: 'before the claim' },
    });
    expect(first.status, first.text).to.equal(201);
    expect((await api('POST', '/owner/claim', { session: o.session, body: { token: t.claimToken } })).status).to.equal(
      200,
    );
    const second = await api('POST', '/posts', {
      key: a.key,
      body: { communitySlug: community, body: 'right after the claim' },
    });
    expect(second.status, second.text).to.equal(429);
    expect(second.body.error.code).to.equal('POST_COOLDOWN_ACTIVE');
  });

  it('POST /owner/claim: 404 CLAIM_TOKEN_NOT_FOUND, 409 CLAIM_TOKEN_USED, 410 CLAIM_TOKEN_EXPIRED, 409 AGENT_ALREADY_OWNED', async () => {
    const o = await newOwner();
    const unknown = await api('POST', '/owner/claim', {
      session: o.session,
      body: { token: 'svc_claim_' + 'x'.repeat(43) },
    });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('CLAIM_TOKEN_NOT_FOUND');

    const a = await newAgent();
    const first = await claimToken(a);
    const second = await claimToken(a);
    expect(
      (await api('POST', '/owner/claim', { session: o.session, body: { token: first.claimToken } })).status,
    ).to.equal(200);
    const used = await api('POST', '/owner/claim', { session: o.session, body: { token: first.claimToken } });
    expect(used.status).to.equal(409);
    expect(used.body.error.code).to.equal('CLAIM_TOKEN_USED');
    const other = await newOwner();
    const owned = await api('POST', '/owner/claim', { session: other.session, body: { token: second.claimToken } });
    expect(owned.status).to.equal(409);
    expect(owned.body.error.code).to.equal('AGENT_ALREADY_OWNED');
    const { db } = await getContext();
    expect((await db('agents').where({ id: a.agent.id }).first()).owner_id).to.equal(o.owner.id);

    const b = await newAgent();
    const t = await claimToken(b);
    (await getContext()).setNow(new Date(Date.now() + 24 * 3600e3 + 1000));
    const expired = await api('POST', '/owner/claim', { session: o.session, body: { token: t.claimToken } });
    expect(expired.status).to.equal(410);
    expect(expired.body.error.code).to.equal('CLAIM_TOKEN_EXPIRED');
  });

  it('POST /owner/claim needs a session (401) and X-CSRF-Token (403); a missing token is 400', async () => {
    const a = await newAgent();
    const t = await claimToken(a);
    const o = await newOwner();
    const noSession = await api('POST', '/owner/claim', { body: { token: t.claimToken } });
    expect(noSession.status).to.equal(401);
    expect(noSession.body.error.code).to.equal('INVALID_SESSION');
    const noCsrf = await api('POST', '/owner/claim', {
      session: o.session,
      noCsrf: true,
      body: { token: t.claimToken },
    });
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body.error.code).to.equal('CSRF_TOKEN_INVALID');
    const empty = await api('POST', '/owner/claim', { session: o.session, body: {} });
    expect(empty.status).to.equal(400);
    expect(empty.body.error.code).to.equal('VALIDATION_FAILED');
    const { db } = await getContext();
    expect((await db('agents').where({ id: a.agent.id }).first()).owner_id).to.equal(null);
  });

  it('10 parallel redeems of one token by 10 owners: exactly one succeeds', async () => {
    const a = await newAgent();
    const t = await claimToken(a);
    const owners = await Promise.all(Array.from({ length: 10 }, () => newOwner()));
    const results = await Promise.all(
      owners.map((o) => api('POST', '/owner/claim', { session: o.session, body: { token: t.claimToken } })),
    );
    const ok = results.map((r, i) => ({ r, o: owners[i] })).filter((x) => x.r.status === 200);
    expect(ok).to.have.length(1);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === 'CLAIM_TOKEN_USED')).to.have.length(9);
    const { db } = await getContext();
    expect((await db('agents').where({ id: a.agent.id }).first()).owner_id).to.equal(ok[0].o.owner.id);
  });

  it('a claim rescores the agent: its vote on an agent of its new owner weighs 0 (SAME_OWNER) after the next incremental run', async () => {
    const { db, deps } = await getContext();
    const o = await newOwner({ verified: true });
    const x = await agent({ owner: null });
    const y = await agent({ owner: o });
    await upvote(x, y, await post(y));
    await runIncremental(deps);
    const edge = async () =>
      db('interactions as i')
        .join('scoring_edges as e', 'e.interaction_id', 'i.id')
        .where({ 'i.actor_agent_id': x.agent.id, 'i.kind': 'vote' })
        .first('e.weight', 'e.reasons');
    expect((await edge()).reasons).to.not.include('SAME_OWNER');
    const r = await api('POST', '/owner/claim', {
      session: o.session,
      body: { token: (await claimToken(x)).claimToken },
    });
    expect(r.status, r.text).to.equal(200);
    const queued = await db.raw(`select count(*)::int n from graphile_worker.jobs where key = ?`, [
      `reputation_recompute:{"agentId":"${x.agent.id}"}`,
    ]);
    expect(queued.rows[0].n).to.equal(1);
    await runIncremental(deps);
    expect((await edge()).reasons).to.include('SAME_OWNER');
    expect(Number((await edge()).weight)).to.equal(0);
  });
});
