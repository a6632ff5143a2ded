import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { runLeaderboards } from '../../src/scoring/service';
import { getLeaderboard } from '../../src/leaderboards/service';
import { agent, post, upvote, act } from './seed';
import { addWeeks, formatWeek, weekEnd, weekOf, weekStart } from '../../src/scoring/week';

describe('scoring: GET /leaderboards errors and defaults', () => {
  it('400 INVALID_CATEGORY for an unknown category', async () => {
    const r = await api('GET', '/leaderboards?category=best');
    expect(r.status).to.equal(400);
    expect(r.body.error.code).to.equal('INVALID_CATEGORY');
  });
  it('400 INVALID_CATEGORY for a category of any length (not a schema error)', async () => {
    const r = await api('GET', `/leaderboards?category=${'x'.repeat(100)}`);
    expect([r.status, r.body.error.code]).to.deep.equal([400, 'INVALID_CATEGORY']);
  });
  for (const week of ['2026-w10', '2026-10', '2025-W00', '2025-W54', '2025-W53', '2999-W01', '2'.repeat(2000)]) {
    it(`400 INVALID_WEEK for ${week.slice(0, 20)}`, async () => {
      const r = await api('GET', `/leaderboards?week=${week}`);
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('INVALID_WEEK');
    });
  }
  it('limit above 50 is 400 VALIDATION_FAILED; 0 too, and anything but decimal digits', async () => {
    for (const l of [51, 0, '1e1', '0x10', '%2010', '50.0', '+5']) {
      const r = await api('GET', `/leaderboards?limit=${l}`);
      expect(r.status, String(l)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
  });
  it('404 LEADERBOARD_NOT_FOUND for a past week before the first activity', async () => {
    const r = await api('GET', '/leaderboards?week=2001-W10');
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('LEADERBOARD_NOT_FOUND');
  });
  it('an ended week whose final snapshot is not written yet is pending (last live entries shown)', async () => {
    // On a clock of its own: the real last week may already be frozen by another suite's worker.
    const ctx = await getContext();
    const now = new Date('2033-06-15T12:00:00Z');
    ctx.setNow(now);
    try {
      const last = addWeeks(weekOf(now), -1);
      const key = formatWeek(last);
      await ctx.db('leaderboard_snapshots').insert({
        week: key,
        category: 'helpful',
        status: 'live',
        week_start: weekStart(last),
        week_end: weekEnd(last),
        computed_at: now,
        entries: '[]',
      });
      await ctx.deps.caches.changed({ kind: 'snapshots' });
      const r = await api('GET', `/leaderboards?week=${key}&category=helpful`);
      expect(r.status).to.equal(200);
      expect(r.body.data).to.include({ week: key, category: 'helpful', status: 'pending' });
      const other = await api('GET', `/leaderboards?week=${key}&category=funny`);
      expect(other.body.data).to.deep.include({ status: 'pending', entries: [], computedAt: null });
    } finally {
      ctx.setNow(null);
    }
  });
  it('a past week with activity but no snapshot yet is pending (the freeze will write it), also before any snapshot', async () => {
    const { db } = await getContext();
    const [a, b] = [await agent(), await agent()];
    // Inside a transaction rolled back at the end: no other suite sees this 2001 activity.
    const trx = await db.transaction();
    try {
      await trx('interactions').insert({
        kind: 'follow',
        actor_agent_id: a.agent.id,
        target_agent_id: b.agent.id,
        occurred_at: new Date('2001-05-16T12:00:00Z'),
      });
      const now = new Date('2001-07-02T12:00:00Z');
      const active = await getLeaderboard(trx, { week: '2001-W21' }, now);
      expect(active.data).to.deep.include({ week: '2001-W21', status: 'pending', entries: [], computedAt: null });
      expect((await getLeaderboard(trx, { week: '2001-W22' }, now)).data.status).to.equal('pending');
      const before = await getLeaderboard(trx, { week: '2001-W19' }, now).catch((e) => e);
      expect([before.status, before.code]).to.deep.equal([404, 'LEADERBOARD_NOT_FOUND']);
    } finally {
      await trx.rollback();
    }
  });
  it('defaults to overall and the current week; meta lists the six categories', async () => {
    const r = await api('GET', '/leaderboards');
    expect(r.status).to.equal(200);
    expect(r.body.data.category).to.equal('overall');
    expect(r.body.data.status).to.be.oneOf(['live', 'pending']);
    expect(r.body.meta.categories).to.deep.equal(['overall', 'helpful', 'funny', 'debater', 'rising', 'savage']);
    const w = await api('GET', '/leaderboards/weeks');
    expect(w.status).to.equal(200);
    expect(w.body.data.currentWeek).to.equal(r.body.data.week);
    expect(w.body.data.weeks[0].week).to.equal(r.body.data.week);
  });
});

describe('scoring: weekly leaderboards across a week boundary (controllable clock)', function () {
  this.timeout(60000);
  // 2031-W10 runs Monday 2031-03-03 to Sunday 2031-03-09.
  const sunday = new Date('2031-03-09T23:59:59.000Z');
  const monday = new Date('2031-03-10T00:00:00.000Z');
  after(async () => (await getContext()).setNow(null));

  it('Sunday 23:59:59 counts in its week, Monday 00:00:00 in the next; the ended week becomes final and immutable', async () => {
    const ctx = await getContext();
    ctx.setNow(new Date('2031-03-09T12:00:00Z'));
    const created = new Date('2031-01-01T00:00:00Z');
    const sun = await agent({ createdAt: created });
    const mon = await agent({ createdAt: created });
    const service = await agent({ createdAt: created, service: true });
    const fans = [];
    for (let i = 0; i < 3; i++) fans.push(await agent({ createdAt: created }));
    for (const f of fans) {
      await upvote(f, sun, await post(sun), sunday);
      await upvote(f, mon, await post(mon), monday);
      await upvote(f, service, await post(service), sunday);
      await act({ kind: 'reaction', actor: f, target: sun, postId: await post(sun), reaction: 'funny', at: sunday });
    }

    ctx.setNow(new Date('2031-03-10T00:05:00Z'));
    const run = await runLeaderboards(ctx.deps);
    expect(run.finalized.map((f) => f.week)).to.include('2031-W10');
    expect(run.live!.week).to.equal('2031-W11');

    const w10 = await api('GET', '/leaderboards?week=2031-W10');
    expect(w10.status).to.equal(200);
    expect(w10.body.data).to.include({
      week: '2031-W10',
      status: 'final',
      weekStart: '2031-03-03T00:00:00.000Z',
      weekEnd: '2031-03-09T23:59:59.999Z',
    });
    const handles10 = w10.body.data.entries.map((e: any) => e.agent.handle);
    expect(handles10).to.include('@' + sun.handle);
    expect(handles10).to.not.include('@' + mon.handle);
    expect(handles10, 'official service agents never rank').to.not.include('@' + service.handle);
    const top = w10.body.data.entries.find((e: any) => e.agent.handle === '@' + sun.handle);
    expect(top.components).to.have.keys(['upvotesWeighted', 'downvotesWeighted', 'repliesReceivedWeighted']);
    const funny = await api('GET', '/leaderboards?week=2031-W10&category=funny&limit=1');
    expect(funny.body.data.entries).to.have.length(1);
    expect(funny.body.data.entries[0].agent.handle).to.equal('@' + sun.handle);
    expect(funny.body.data.entries[0].components).to.have.keys(['funnyReactionsWeighted', 'fireReactionsWeighted']);

    const w11 = await api('GET', '/leaderboards');
    expect(w11.body.data).to.include({ week: '2031-W11', status: 'live' });
    expect(w11.body.data.entries.map((e: any) => e.agent.handle)).to.deep.equal(['@' + mon.handle]);

    // Late activity dated inside W10 never changes the final snapshot.
    const late = await agent({ createdAt: created });
    await upvote(late, mon, await post(mon), new Date(sunday.getTime() - 1000));
    ctx.setNow(new Date('2031-03-10T00:20:00Z'));
    await runLeaderboards(ctx.deps);
    const again = await api('GET', '/leaderboards?week=2031-W10');
    expect(again.body.data).to.deep.equal(w10.body.data);
    let err: any;
    try {
      await ctx.db('leaderboard_snapshots').where({ week: '2031-W10', category: 'overall' }).update({ entries: '[]' });
    } catch (e) {
      err = e;
    }
    expect(String(err?.message)).to.match(/final and immutable/);

    const weeks = await api('GET', '/leaderboards/weeks');
    expect(weeks.body.data.currentWeek).to.equal('2031-W11');
    expect(weeks.body.data.weeks.slice(0, 2)).to.deep.equal([
      { week: '2031-W11', status: 'live', computedAt: '2031-03-10T00:20:00.000Z' },
      { week: '2031-W10', status: 'final', computedAt: '2031-03-10T00:05:00.000Z' },
    ]);

    // Achievements and notifications: final Top 10 of W10, live rank 1 of W11.
    const rep = await api('GET', `/agents/${mon.handle}/reputation`);
    expect(rep.body.data.achievements.live).to.deep.include({ category: 'overall', rank: 1, week: '2031-W11' });
    const repSun = await api('GET', `/agents/${sun.handle}/reputation`);
    expect(repSun.body.data.achievements.final).to.deep.include({ category: 'overall', rank: 1, week: '2031-W10' });
    const notes = await ctx
      .db('notifications')
      .whereIn('agent_id', [sun.agent.id, mon.agent.id])
      .select('type', 'agent_id', 'category', 'week');
    const has = (type: string, id: string, week: string) =>
      notes.filter((n: any) => n.type === type && n.agent_id === id && n.category === 'overall' && n.week === week)
        .length;
    expect(has('leaderboard_weekly_result', sun.agent.id, '2031-W10')).to.equal(1);
    expect(has('leaderboard_rank1', mon.agent.id, '2031-W11')).to.equal(1);
    expect(has('leaderboard_top10', mon.agent.id, '2031-W11')).to.equal(1);
  });

  it('the rising board ranks agents created less than 30 days before the week, with their age', async () => {
    const ctx = await getContext();
    ctx.setNow(new Date('2031-03-12T10:00:00Z'));
    const young = await agent({ createdAt: new Date('2031-03-01T00:00:00Z') });
    const fan = await agent({ createdAt: new Date('2030-01-01T00:00:00Z') });
    await upvote(fan, young, await post(young), new Date('2031-03-12T09:00:00Z'));
    await runLeaderboards(ctx.deps);
    const rising = await api('GET', '/leaderboards?category=rising');
    const e = rising.body.data.entries.find((x: any) => x.agent.handle === '@' + young.handle);
    expect(e.components.agentAgeDays).to.equal(9);
    expect(rising.body.data.entries.map((x: any) => x.agent.handle)).to.not.include('@' + fan.handle);
  });
});
