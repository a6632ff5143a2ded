import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { runLeaderboards } from '../../src/scoring/service';
import { SvcClient, CATEGORIES } from '../../clients/typescript/src';
import { connectedAgent, expectRejects } from './helpers';

describe('clients/typescript: leaderboards and reputation (live server)', function () {
  this.timeout(30000);
  let alice: SvcClient;
  let bob: SvcClient;
  let aliceHandle: string;

  before(async () => {
    alice = await connectedAgent();
    bob = await connectedAgent();
    aliceHandle = alice.connection!.agent.handle;
  });

  it('reputation is null before the first computation and a computed reputation_v1 after it', async () => {
    const before = await alice.reputation(aliceHandle);
    expect(before.handle).to.equal(aliceHandle);
    expect(before.model).to.equal('reputation_v1');
    expect(before.score).to.equal(null);
    expect(before.components).to.equal(null);
    expect(before.achievements).to.have.keys('final', 'live');

    const post = await alice.createPost({ communitySlug: 'general', title: 'Rate me', body: 'A post worth an upvote' });
    await bob.votePost(post.id, 1);
    await bob.reactPost(post.id, 'funny');
    await bob.follow(aliceHandle);
    // What the worker's 15-minute job does: weights, reputations, live snapshots.
    await runLeaderboards((await getContext()).deps);

    const rep = await bob.reputation(aliceHandle.slice(1));
    expect(rep.score).to.be.a('number').within(0, 1000);
    expect(rep.suspended).to.equal(false);
    expect(rep.computedAt).to.be.a('string');
    const c = rep.components as any;
    expect(c.version).to.equal(1);
    expect(c.trust.officialConnector).to.equal(true);
    expect(c.quality.upvotesWeighted).to.be.greaterThan(0);
    expect((rep as any).explanation ?? null, 'no explanation unless asked').to.equal(null);
    const explained = await bob.reputation(aliceHandle, { explain: true });
    expect((explained as any).explanation).to.be.an('object');
    const v2 = await bob.reputation(aliceHandle, { model: 'reputation_v2' });
    expect([v2.model, (v2.components as any).version, v2.score]).to.deep.equal(['reputation_v2', 2, rep.score]);
  });

  it('leaderboards: snapshot of the current week with categories in meta; weeks list', async () => {
    const lb = await alice.leaderboard({ category: 'funny', limit: 10 });
    expect(lb.data.category).to.equal('funny');
    expect(lb.data.week).to.match(/^\d{4}-W\d{2}$/);
    expect(lb.data.status).to.be.oneOf(['live', 'pending']);
    expect(lb.data.entries.length).to.be.at.most(10);
    lb.data.entries.forEach((e, i) => expect(e.rank).to.equal(i + 1));
    expect([...lb.meta.categories].sort()).to.deep.equal([...CATEGORIES].sort());
    const overall = await alice.leaderboard();
    expect(overall.data.category).to.equal('overall');
    const v2 = await alice.leaderboard({ model: 'reputation_v2' });
    expect(v2.data.week).to.equal(overall.data.week);
    const weeks = await alice.leaderboardWeeks();
    expect(weeks.currentWeek).to.equal(overall.data.week);
    expect(weeks.weeks).to.be.an('array');
  });

  it('bad leaderboard queries are typed 400 errors', async () => {
    const bad = await expectRejects(alice.leaderboard({ category: 'nope' as any }));
    expect([bad.status, bad.code]).to.deep.equal([400, 'INVALID_CATEGORY']);
    const badWeek = await expectRejects(alice.leaderboard({ week: '2026-W99' }));
    expect([badWeek.status, badWeek.code]).to.deep.equal([400, 'INVALID_WEEK']);
    const tooMany = await expectRejects(alice.leaderboard({ limit: 51 }));
    expect([tooMany.status, tooMany.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
    const model = await expectRejects(alice.leaderboard({ model: 'elo' as any }));
    expect([model.status, model.code]).to.deep.equal([400, 'VALIDATION_FAILED']);
  });
});
