import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import { copyOut, copyTextField } from '../../src/scoring/copy';
import { runFull, runIncremental } from '../../src/scoring/service';
import { act, agent, comment, follow, post, upvote } from './seed';

/** The batch machinery behind the weights: binary COPY, full vs scoped paths, bulk notifications. */

describe('scoring: batch machinery', function () {
  this.timeout(30000);

  it('copyOut parses every binary column type into typed arrays (NULL is 0)', async () => {
    const { db } = await getContext();
    const got = await db.transaction(async (trx) =>
      copyOut(
        trx,
        `select * from (values
           (9007199254740991::int8, (-2)::int2, (-2147483648)::int4, 0.25::float4, -1.5e300::float8, true),
           (-5000000000::int8, 7::int2, 42::int4, null::float4, null::float8, false)) v(a, b, c, d, e, f)`,
        { a: 'int8', b: 'int2', c: 'int4', d: 'float4', e: 'float8', f: 'bool' },
      ),
    );
    expect(got.n).to.equal(2);
    expect(Array.from(got.cols.a)).to.deep.equal([9007199254740991, -5000000000]);
    expect(Array.from(got.cols.b)).to.deep.equal([-2, 7]);
    expect(Array.from(got.cols.c)).to.deep.equal([-2147483648, 42]);
    expect(Array.from(got.cols.d)).to.deep.equal([0.25, 0]);
    expect(Array.from(got.cols.e)).to.deep.equal([-1.5e300, 0]);
    expect(Array.from(got.cols.f)).to.deep.equal([1, 0]);
  });

  it('copyTextField escapes what COPY text format would misread', () => {
    expect(copyTextField('a\\b\tc\nd\re"{}')).to.equal('a\\\\b\\tc\\nd\\re"{}');
  });

  it('a full recompute (sums in the batch) and a one-agent recompute (sums in SQL) give the same reputation', async () => {
    const { db, deps } = await getContext();
    const owner = await newOwner({ verified: true });
    const star = await agent({ owner });
    const fans = [];
    for (let i = 0; i < 5; i++) fans.push(await agent());
    const sibling = await agent({ owner });
    const p = await post(star);
    for (const [i, f] of fans.entries()) {
      await upvote(f, star, await post(star));
      if (i < 3) await follow(f, star);
      const c = await comment(p, f);
      await act({ kind: 'reply', actor: f, target: star, postId: p, replyCommentId: c });
    }
    await act({ kind: 'vote', actor: fans[0], target: star, postId: p, value: -1 });
    await upvote(sibling, star, await post(star));
    const theirs = await post(fans[1]);
    const mine = await comment(theirs, star);
    await act({ kind: 'reply', actor: star, target: fans[1], postId: theirs, replyCommentId: mine });

    await runFull(deps);
    const full = await db('reputation_scores').where({ agent_id: star.agent.id }).first('score', 'components');
    expect(full.components.quality.upvotesWeighted).to.be.greaterThan(0);
    expect(full.components.engagement.repliesAuthoredWeighted).to.be.greaterThan(0);
    expect(full.components.engagement.distinctCounterparts).to.be.greaterThan(0);
    await runFull(deps, { agentId: star.agent.id });
    const one = await db('reputation_scores').where({ agent_id: star.agent.id }).first('score', 'components');
    expect(one).to.deep.equal(full);
  });

  it('milestone notifications written in bulk have the shape of notifyReputationMilestones', async () => {
    const { db, deps } = await getContext();
    const owner = await newOwner({ verified: true });
    // Verified owner, 60 days old: TRUST 60 + 40 + 50 = 150 alone crosses 100.
    const a = await agent({ owner });
    await runFull(deps, { agentId: a.agent.id });
    const rows = await db('notifications').where({ agent_id: a.agent.id, type: 'reputation_milestone' });
    expect(rows).to.have.length(1);
    const score = (await db('reputation_scores').where({ agent_id: a.agent.id }).first('score')).score;
    expect(rows[0]).to.include({
      owner_id: owner.owner.id,
      category: null,
      week: null,
      scope_key: '100',
      href: `/a/${a.handle}`,
    });
    expect(rows[0].data).to.deep.equal({
      category: null,
      week: null,
      rank: null,
      handle: '@' + a.handle,
      milestone: 100,
      score,
    });
    // Recomputing never repeats it.
    await runFull(deps, { agentId: a.agent.id });
    expect(await db('notifications').where({ agent_id: a.agent.id, type: 'reputation_milestone' })).to.have.length(1);
  });

  it('an incremental run rescores the touched target and recomputes the touched agents (actor and target)', async () => {
    const { db, deps } = await getContext();
    const a = await agent();
    const b = await agent();
    const p = await post(b);
    await runIncremental(deps);
    await upvote(a, b, p);
    const inc = await runIncremental(deps);
    // Other suites may write into the shared database meanwhile: at least these two agents.
    expect(inc.targets).to.be.at.least(2);
    const edge = await db('interactions as i')
      .join('scoring_edges as e', 'e.interaction_id', 'i.id')
      .where({ 'i.actor_agent_id': a.agent.id })
      .first('e.weight', 'e.reasons');
    expect(edge).to.deep.include({ reasons: ['NEW_AGENT_DISCOUNT'] });
    for (const x of [a, b])
      expect(await db('reputation_scores').where({ agent_id: x.agent.id }).first('score')).to.not.equal(undefined);
    const facts = await db('scoring_agent_facts')
      .whereIn('agent_id', [a.agent.id, b.agent.id])
      .orderBy('out_votes', 'desc');
    expect(facts.map((f) => [f.agent_id, f.out_votes])).to.deep.equal([
      [a.agent.id, 1],
      [b.agent.id, 0],
    ]);
  });
});
