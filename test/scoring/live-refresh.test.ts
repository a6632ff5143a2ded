import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { runIncrementalAndRefresh } from '../../src/scoring/service';
import { formatWeek, weekOf } from '../../src/scoring/week';
import { agent, post, upvote } from './seed';

describe('scoring: live leaderboards follow activity within a minute', () => {
  async function overall() {
    const { db } = await getContext();
    return db('leaderboard_snapshots').where({ week: formatWeek(weekOf(new Date())), category: 'overall' }).first();
  }
  async function ageSnapshot(seconds: number) {
    const { db } = await getContext();
    await db('leaderboard_snapshots')
      .where({ week: formatWeek(weekOf(new Date())), status: 'live' })
      .update({ computed_at: db.raw(`now() - make_interval(secs => ?)`, [seconds]) });
  }

  it('refreshes a missing or stale live week after changes, not a fresh one', async () => {
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

    // Fresh snapshot: more activity is scored but the week waits for its minute.
    await upvote(await agent(), author, p);
    const second = await runIncrementalAndRefresh(deps);
    expect(second.incremental.changed).to.be.greaterThan(0);
    expect(second.refreshed).to.equal(false);

    // Stale and changed: refreshed.
    await ageSnapshot(61);
    await upvote(await agent(), author, p);
    const third = await runIncrementalAndRefresh(deps);
    expect(third.refreshed).to.equal(true);
  });
});
