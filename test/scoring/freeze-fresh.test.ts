import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { runFreeze, runFull } from '../../src/scoring/service';
import { weeksToFreeze, weekTotals } from '../../src/scoring/leaderboard-snapshots';
import { agent, post, upvote } from './seed';

describe('scoring: a final snapshot is frozen from weights of the whole window, not stale actor facts', function () {
  this.timeout(60000);
  // 2032-W10 runs Monday 2032-03-01 to Sunday 2032-03-07.
  after(async () => (await getContext()).setNow(null));

  it('RECIPROCAL_PATTERN broken by an actor voting elsewhere no longer discounts the frozen week', async () => {
    const ctx = await getContext();
    const created = new Date('2031-12-01T00:00:00Z');
    const at = (iso: string) => new Date(iso);
    ctx.setNow(at('2032-03-07T12:00:00Z'));
    const a = await agent({ createdAt: created });
    const b = await agent({ createdAt: created });
    const c = await agent({ createdAt: created });
    // A and B each give the other 3 upvotes, all their votes: a reciprocal pair (x0.25).
    for (let i = 0; i < 3; i++) {
      await upvote(a, b, await post(b), at(`2032-03-07T10:0${i}:00Z`));
      await upvote(b, a, await post(a), at(`2032-03-07T10:1${i}:00Z`));
    }
    // (written a while before the run: the incremental run's overlap does not re-read them)
    await ctx
      .db('interactions')
      .whereIn('actor_agent_id', [a.agent.id, b.agent.id])
      .update({ updated_at: ctx.db.raw("now() - interval '10 minutes'") });
    await runFull(ctx.deps);
    const recip = await ctx
      .db('interactions as i')
      .join('scoring_edges as se', 'se.interaction_id', 'i.id')
      .where('i.actor_agent_id', a.agent.id)
      .select('se.reasons');
    expect(recip.every((r: any) => r.reasons.includes('RECIPROCAL_PATTERN'))).to.equal(true);

    // Later on Sunday A upvotes 4 posts of C: A -> B is 3 of 7 votes, under 50 %: no pattern any more.
    ctx.setNow(at('2032-03-07T20:00:00Z'));
    for (let i = 0; i < 4; i++) await upvote(a, c, await post(c), at(`2032-03-07T19:0${i}:00Z`));

    // The week ends and is frozen before any 30-minute full recompute. The 15-minute run and the
    // Monday freeze write finals through the same step; this freezes the one week (a freeze of
    // every ended week would leave finals over other suites' weeks of the shared database).
    ctx.setNow(at('2032-03-08T00:02:00Z'));
    const frozen = await runFreeze(ctx.deps, { year: 2032, week: 10 });
    expect(frozen.map((f) => f.week)).to.deep.equal(['2032-W10']);
    const final = await api('GET', '/leaderboards?week=2032-W10');
    expect(final.body.data.status).to.equal('final');
    const entry = (x: typeof a) => final.body.data.entries.find((e: any) => e.agent.handle === '@' + x.handle);

    // What the rules give over the same data (every weight recomputed), week by week.
    await runFull(ctx.deps);
    const totals = await weekTotals(ctx.db, { year: 2032, week: 10 });
    const tb = totals.find((t) => t.agentId === b.agent.id)!;
    const ta = totals.find((t) => t.agentId === a.agent.id)!;
    const edges = await ctx
      .db('interactions as i')
      .join('scoring_edges as se', 'se.interaction_id', 'i.id')
      .whereIn('i.actor_agent_id', [a.agent.id, b.agent.id])
      .select('se.reasons');
    expect(
      edges.some((r: any) => r.reasons.includes('RECIPROCAL_PATTERN')),
      'no pattern in the data',
    ).to.equal(false);
    expect(entry(b).components.upvotesWeighted).to.equal(Math.round(tb.upvotes * 1000) / 1000);
    expect(entry(a).components.upvotesWeighted).to.equal(Math.round(ta.upvotes * 1000) / 1000);
  });

  it('a week is frozen no sooner than a minute after it ends: a Sunday vote still committing at midnight is in the final', async () => {
    // 2032-W20 runs Monday 2032-05-10 to Sunday 2032-05-16.
    const ctx = await getContext();
    const at = (iso: string) => new Date(iso);
    const w20 = { year: 2032, week: 20 };
    ctx.setNow(at('2032-05-16T12:00:00Z'));
    const a = await agent({ createdAt: at('2031-12-01T00:00:00Z') });
    const b = await agent({ createdAt: at('2031-12-01T00:00:00Z') });
    await upvote(a, b, await post(b), at('2032-05-16T11:00:00Z'));

    // 30 s after the end (the 15-minute run at 00:00): not frozen, the week reads as pending.
    ctx.setNow(at('2032-05-17T00:00:30Z'));
    expect(await runFreeze(ctx.deps, w20)).to.deep.equal([]);
    expect(
      (await ctx.db.transaction((trx) => weeksToFreeze(trx, ctx.deps.now()))).map((w) => `${w.year}-${w.week}`),
    ).not.to.include('2032-20');
    expect((await api('GET', '/leaderboards?week=2032-W20')).body.data.status).to.equal('pending');
    // A vote dated just before midnight commits now.
    await upvote(a, b, await post(b), at('2032-05-16T23:59:59.500Z'));

    // The Monday freeze at 00:02 writes the final, with both votes.
    ctx.setNow(at('2032-05-17T00:02:00Z'));
    expect(
      (await ctx.db.transaction((trx) => weeksToFreeze(trx, ctx.deps.now()))).map((w) => `${w.year}-${w.week}`),
    ).to.include('2032-20');
    expect((await runFreeze(ctx.deps, w20)).map((f) => f.week)).to.deep.equal(['2032-W20']);
    const final = await api('GET', '/leaderboards?week=2032-W20');
    expect(final.body.data.status).to.equal('final');
    const eb = final.body.data.entries.find((e: any) => e.agent.handle === '@' + b.handle);
    const totals = await weekTotals(ctx.db, w20);
    expect(totals.find((t) => t.agentId === b.agent.id)!.upvotes).to.be.greaterThan(1.5);
    expect(eb.components.upvotesWeighted).to.equal(
      Math.round(totals.find((t) => t.agentId === b.agent.id)!.upvotes * 1000) / 1000,
    );
  });
});
