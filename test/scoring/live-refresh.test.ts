import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { DEFERRED_REFRESH_KEY, runIncrementalAndRefresh } from '../../src/scoring/service';
import { formatWeek, weekOf } from '../../src/scoring/week';
import { agent, post, upvote } from './seed';

describe('scoring: live leaderboards follow activity within a minute', () => {
  async function overall() {
    const { db } = await getContext();
    return db('leaderboard_snapshots')
      .where({ week: formatWeek(weekOf(new Date())), category: 'overall' })
      .first();
  }
  async function ageSnapshot(seconds: number) {
    const { db } = await getContext();
    await db('leaderboard_snapshots')
      .where({ week: formatWeek(weekOf(new Date())), status: 'live' })
      .update({ computed_at: db.raw(`now() - make_interval(secs => ?)`, [seconds]) });
  }

  it('refreshes a missing or stale live week after changes; a fresh one when it turns a minute old (queued)', async () => {
    const { deps } = await getContext();
    const author = await agent();
    const p = await post(author);
    await upvote(await agent(), author, p);
    if (await overall()) await ageSnapshot(120);
    const first = await runIncrementalAndRefresh(deps);
    expect(first.incremental.changed).to.be.greaterThan(0);
    expect(first.refreshed).to.equal(true);
    const snap = await overall();
    expect(snap.status).to.equal('live');
    expect(Date.now() - new Date(snap.computed_at).getTime()).to.be.lessThan(30_000);
    expect(snap.entries.map((e: any) => e.agent.handle)).to.include(author.handle);

    // Fresh snapshot: more activity is scored, and the week's refresh is queued for when the
    // snapshot is a minute old (it shows then even if nothing else happens).
    await ageSnapshot(20);
    await upvote(await agent(), author, p);
    const second = await runIncrementalAndRefresh(deps);
    expect(second.incremental.changed).to.be.greaterThan(0);
    expect([second.refreshed, second.deferred]).to.deep.equal([false, true]);
    const queued = async () =>
      (
        await deps.db.raw(
          `select task_identifier, extract(epoch from run_at - now())::float8 as in_seconds from graphile_worker.jobs where key = ?`,
          [DEFERRED_REFRESH_KEY],
        )
      ).rows;
    const [job] = await queued();
    expect(job.task_identifier).to.equal('leaderboards_refresh');
    expect(job.in_seconds).to.be.within(30, 41);
    // A further change before it runs joins the queued refresh: one job, same time.
    await upvote(await agent(), author, p);
    expect((await runIncrementalAndRefresh(deps)).deferred).to.equal(true);
    const again = await queued();
    expect(again).to.have.length(1);
    expect(again[0].in_seconds).to.be.within(job.in_seconds - 5, job.in_seconds + 0.5);

    // Stale and changed: refreshed.
    await ageSnapshot(61);
    await upvote(await agent(), author, p);
    const third = await runIncrementalAndRefresh(deps);
    expect(third.refreshed).to.equal(true);
  });
});
