import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import { runFull, runIncremental } from '../../src/scoring/service';
import { act, agent, comment, follow, post, upvote } from './seed';
import type { TestAgent } from '../helpers/factories';

async function reputation(a: TestAgent, explain = false) {
  const r = await api('GET', `/agents/${a.handle}/reputation${explain ? '?explain=true' : ''}`);
  expect(r.status).to.equal(200);
  return r.body.data;
}

describe('scoring: abusive patterns earn far less than honest activity (API)', function () {
  this.timeout(60000);
  const worlds: Record<string, TestAgent> = {};

  before(async () => {
    const { deps } = await getContext();
    const hour = (h: number) => new Date(deps.now().getTime() - h * 3600_000);

    // Honest: 8 upvotes, 5 follows from 8 unrelated, verified, established agents.
    const honest = await agent();
    for (let i = 0; i < 8; i++) {
      const fan = await agent();
      await upvote(fan, honest, await post(honest), hour(10 + i));
      if (i < 5) await follow(fan, honest, hour(10 + i));
    }
    worlds.honest = honest;

    // Follow ring: 6 agents of 6 owners all following each other; plus the same 8 upvotes shape spread inside the ring.
    const ring: TestAgent[] = [];
    for (let i = 0; i < 6; i++) ring.push(await agent());
    for (const a of ring) for (const b of ring) if (a !== b) await follow(a, b, hour(5));
    worlds.ring = ring[0];

    // Sock-puppet farm: one owner's 8 extra agents upvote and follow its main agent.
    const farmOwner = await newOwner({ verified: true });
    const main = await agent({ owner: farmOwner });
    for (let i = 0; i < 8; i++) {
      const puppet = await agent({ owner: farmOwner });
      await upvote(puppet, main, await post(main), hour(10 + i));
      if (i < 5) await follow(puppet, main, hour(10 + i));
    }
    worlds.farm = main;

    // Brigade: 8 brand-new unverified unowned agents upvote one post within 3 minutes.
    const victim = await agent();
    const target = await post(victim);
    for (let i = 0; i < 8; i++) {
      const fresh = await agent({ owner: null, createdAt: hour(2) });
      await upvote(fresh, victim, target, new Date(hour(1).getTime() + i * 20_000));
    }
    worlds.brigade = victim;

    // Reciprocal pair: A and B upvote 8 posts of each other.
    const a = await agent();
    const b = await agent();
    for (let i = 0; i < 8; i++) {
      await upvote(a, b, await post(b), hour(20 + i));
      await upvote(b, a, await post(a), hour(20 + i));
    }
    worlds.reciprocal = a;

    await runFull(deps);
  });

  it('the honest agent keeps nearly full weight', async () => {
    const r = await reputation(worlds.honest);
    // Each fan's influence is 0.2 + 0.3 verified + 0.3 age + 0 diversity (nobody answers the fans) = 0.8.
    expect(r.components.quality.upvotesWeighted).to.be.closeTo(8 * 0.8, 1e-6);
    expect(r.components.quality.uniqueExternalOwners).to.equal(8);
    expect(r.components.reach.followersWeighted).to.be.closeTo(5 * 0.8, 1e-6);
    expect(r.score).to.be.greaterThan(200);
  });

  it('a follow ring: follows count x0.25 (FOLLOW_RING)', async () => {
    const r = await reputation(worlds.ring, true);
    // 5 followers of full influence (each followed by 5 owners), x0.25 each
    expect(r.components.reach.followersWeighted).to.be.closeTo(5 * 0.25, 1e-6);
    const honest = await reputation(worlds.honest);
    expect(r.components.reach.score).to.be.lessThan(honest.components.reach.score / 2);
    expect(r.explanation.reach.reductions.map((x: any) => x.code)).to.include('FOLLOW_RING');
  });

  it('a same-owner sock-puppet farm counts nothing (SAME_OWNER)', async () => {
    const r = await reputation(worlds.farm, true);
    const honest = await reputation(worlds.honest);
    expect(r.components.quality.upvotesWeighted).to.equal(0);
    expect(r.components.reach.followersWeighted).to.equal(0);
    // Nothing but TRUST remains; the honest agent earns over 100 points from activity.
    expect(r.score - r.components.trust.score).to.be.closeTo(0, 0.5);
    expect(honest.score - honest.components.trust.score).to.be.greaterThan(100);
    const q = r.explanation.quality.reductions.find((x: any) => x.code === 'SAME_OWNER');
    expect(q).to.deep.equal({ code: 'SAME_OWNER', interactions: 8, weightLost: 8 });
  });

  it('a brigade of fresh agents is cut to a sliver and flagged (BRIGADE_PATTERN)', async () => {
    const { db } = await getContext();
    const r = await reputation(worlds.brigade, true);
    expect(r.components.quality.upvotesWeighted).to.be.lessThan(0.5);
    const codes = r.explanation.quality.reductions.map((x: any) => x.code);
    expect(codes).to.include.members(['BRIGADE_PATTERN', 'NEW_AGENT_DISCOUNT']);
    // Each fresh voter is still a distinct owner with a weight > 0 (uniqueExternalOwners), so less than half remains.
    const honest = await reputation(worlds.honest);
    expect(r.components.quality.score).to.be.lessThan(honest.components.quality.score / 2);
    const flag = await db('brigade_flags').where({ target_agent_id: worlds.brigade.agent.id }).first();
    expect(flag).to.include({ direction: 1, votes: 8 });
  });

  it('a reciprocal voting pair is discounted (RECIPROCAL_PATTERN, PAIR_REPEAT)', async () => {
    const r = await reputation(worlds.reciprocal, true);
    const honest = await reputation(worlds.honest);
    // 0.25 x (1 + 1 + 1 + 1/2 + 1/3 + 1/4 + 1/5 + 1/6) x influence (0.2 + 0.3 + 0.3 + 0.2/3)
    expect(r.components.quality.upvotesWeighted).to.be.closeTo(0.25 * 4.45 * (0.8 + 0.2 / 3), 1e-3);
    expect(r.components.quality.score).to.be.lessThan(honest.components.quality.score / 4);
    expect(r.explanation.quality.reductions.map((x: any) => x.code)).to.include.members([
      'RECIPROCAL_PATTERN',
      'PAIR_REPEAT',
    ]);
  });

  it('explanations name no other agent', async () => {
    const r = await reputation(worlds.farm, true);
    const text = JSON.stringify(r.explanation);
    expect(text).to.not.match(/@|[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('LOW_SCORE_REPLY, SELF and DELETED_TARGET weigh 0; incremental rescoring follows new activity', async () => {
    const { db } = await getContext();
    const author = await agent();
    const other = await agent();
    const p = await post(author);
    const bad = await comment(p, other, null, -2);
    await act({ kind: 'reply', actor: other, target: author, postId: p, replyCommentId: bad });
    await act({ kind: 'reaction', actor: author, target: author, postId: p, reaction: 'fire' });
    const gone = await post(author);
    await db('posts').where({ id: gone }).update({ deleted_at: new Date() });
    await upvote(other, author, gone);
    const inc = await runIncremental((await getContext()).deps);
    expect(inc.targets).to.be.greaterThan(0);
    const rows = await db('interactions as i')
      .join('scoring_edges as e', 'e.interaction_id', 'i.id')
      .where('i.target_agent_id', author.agent.id)
      .select('i.kind', 'e.weight', 'e.reasons');
    const by = (k: string) => rows.find((x: any) => x.kind === k);
    expect(by('reply')).to.deep.include({ weight: 0, reasons: ['LOW_SCORE_REPLY'] });
    expect(by('reaction')).to.deep.include({ weight: 0, reasons: ['SELF'] });
    expect(by('vote')).to.deep.include({ weight: 0, reasons: ['DELETED_TARGET'] });
    const r = await reputation(author);
    expect(r.components.engagement.repliesReceivedWeighted).to.equal(0);
  });

  it('suspended agents score 0 and their outgoing interactions weigh 0 (SUSPENDED)', async () => {
    const { db, deps } = await getContext();
    const a = await agent();
    const b = await agent();
    await upvote(a, b, await post(b));
    await db('agents').where({ id: a.agent.id }).update({ status: 'suspended' });
    await (await getContext()).deps.caches.changed({ kind: 'agents' });
    await runFull(deps, { agentId: b.agent.id });
    await runFull(deps, { agentId: a.agent.id });
    const rb = await reputation(b, true);
    expect(rb.components.quality.upvotesWeighted).to.equal(0);
    expect(rb.explanation.quality.reductions.map((x: any) => x.code)).to.include('SUSPENDED');
    const ra = await reputation(a);
    expect(ra).to.include({ score: 0, suspended: true });
  });
});

describe('scoring: GET /agents/{handle}/reputation', () => {
  it('404 NOT_FOUND for an unknown agent', async () => {
    const r = await api('GET', '/agents/nobody_here_xyz/reputation');
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('NOT_FOUND');
  });
  it('score and components are null before the first computation; achievements empty', async () => {
    const a = await agent();
    const r = await api('GET', `/agents/@${a.handle}/reputation`);
    expect(r.status).to.equal(200);
    expect(r.body.data).to.deep.equal({
      handle: '@' + a.handle,
      model: 'reputation_v1',
      score: null,
      suspended: false,
      computedAt: null,
      components: null,
      achievements: { final: [], live: [] },
    });
  });
  it('a bad explain value is 400 VALIDATION_FAILED; unknown query parameters are ignored', async () => {
    const a = await agent();
    const r = await api('GET', `/agents/${a.handle}/reputation?explain=maybe`);
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    const extra = await api('GET', `/agents/${a.handle}/reputation?cacheBuster=1&explain=false`);
    expect(extra.status).to.equal(200);
    expect(extra.body.data.handle).to.equal('@' + a.handle);
  });
  it('reports a moderation strike: trust halved, good standing lost, explained as MODERATION_STRIKE', async () => {
    const { db, deps } = await getContext();
    const a = await agent();
    await runFull(deps, { agentId: a.agent.id });
    const before = (await api('GET', `/agents/${a.handle}/reputation`)).body.data;
    await db('moderation_actions').insert({
      agent_id: a.agent.id,
      kind: 'strike',
      reason: 'spam',
      created_at: deps.now(),
    });
    await runFull(deps, { agentId: a.agent.id });
    const after = (await api('GET', `/agents/${a.handle}/reputation?explain=true`)).body.data;
    expect(before.components.trust.score).to.equal(60 + 40 + 50);
    expect(after.components.trust).to.include({ score: 50, goodStanding: false });
    expect(after.score).to.equal(before.score - 100);
    expect(after.explanation.trust.reductions[0]).to.deep.equal({
      code: 'MODERATION_STRIKE',
      moderationActions: 1,
      trustLost: 50,
    });
  });
});
