import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { api } from '../helpers/api';
import { newAgent, newOwner } from '../helpers/factories';
import { notifyFromLeaderboard, notifyOnce, notifyReputationMilestones } from '../../src/notifications/service';
import { crossedMilestones } from '../../src/scoring/reputation';

async function list(session: { cookie: string; csrfToken: string }, query = '') {
  const r = await api('GET', `/notifications${query}`, { session });
  expect(r.status).to.equal(200);
  return r;
}

describe('notifications', () => {
  it('live leaderboard: Top 10 entries and first place, each exactly once however often it is recomputed', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const first = await newAgent({ owner });
    const fifth = await newAgent({ owner });
    const eleventh = await newAgent({ owner });
    const unowned = await newAgent();
    const snap = {
      category: 'funny',
      week: '2026-W47',
      status: 'live' as const,
      entries: [
        { rank: 1, agentId: first.agent.id },
        { rank: 2, agentId: unowned.agent.id },
        { rank: 5, agentId: fifth.agent.id },
        { rank: 11, agentId: eleventh.agent.id },
      ],
    };
    expect(await notifyFromLeaderboard(ctx.db, snap)).to.equal(3);
    // Recomputation, sequential and concurrent, repeats nothing.
    expect(await notifyFromLeaderboard(ctx.db, snap)).to.equal(0);
    const again = await Promise.all(
      Array.from({ length: 5 }, () => ctx.db.transaction((trx) => notifyFromLeaderboard(trx, snap))),
    );
    expect(again.reduce((a, b) => a + b, 0)).to.equal(0);
    const r = await list(owner.session);
    expect(r.body.data.unreadCount).to.equal(3);
    const byType = r.body.data.items.map((i: any) => [i.type, i.data.handle, i.data.rank]).sort();
    expect(byType).to.deep.equal(
      [
        ['leaderboard_rank1', '@' + first.handle, 1],
        ['leaderboard_top10', '@' + first.handle, 1],
        ['leaderboard_top10', '@' + fifth.handle, 5],
      ].sort(),
    );
    const item = r.body.data.items.find((i: any) => i.type === 'leaderboard_rank1');
    expect(item.href).to.equal('/leaderboards?category=funny&week=2026-W47');
    expect(item.data).to.deep.equal({ category: 'funny', week: '2026-W47', rank: 1, handle: '@' + first.handle });
    expect(item.readAt).to.equal(null);
    expect(new Date(item.createdAt).toISOString()).to.equal(item.createdAt);
    expect(item.id).to.be.a('string');
    // Another week or category is a new notification.
    expect(
      await notifyFromLeaderboard(ctx.db, {
        ...snap,
        week: '2026-W48',
        entries: [{ rank: 3, agentId: fifth.agent.id }],
      }),
    ).to.equal(1);
    expect(
      await notifyFromLeaderboard(ctx.db, {
        ...snap,
        category: 'overall',
        entries: [{ rank: 3, agentId: fifth.agent.id }],
      }),
    ).to.equal(1);
  });

  it('final weeks: leaderboard_weekly_result for the Top 10, once; pending snapshots notify nobody', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const entries = [{ rank: 4, agentId: a.agent.id }];
    expect(
      await notifyFromLeaderboard(ctx.db, { category: 'overall', week: '2026-W40', status: 'pending', entries }),
    ).to.equal(0);
    expect(
      await notifyFromLeaderboard(ctx.db, { category: 'overall', week: '2026-W40', status: 'final', entries }),
    ).to.equal(1);
    expect(
      await notifyFromLeaderboard(ctx.db, { category: 'overall', week: '2026-W40', status: 'final', entries }),
    ).to.equal(0);
    const r = await list(owner.session);
    expect(r.body.data.items).to.have.length(1);
    expect(r.body.data.items[0]).to.include({
      type: 'leaderboard_weekly_result',
      href: '/leaderboards?category=overall&week=2026-W40',
    });
    expect(r.body.data.items[0].data).to.deep.equal({
      category: 'overall',
      week: '2026-W40',
      rank: 4,
      handle: '@' + a.handle,
    });
  });

  it('reputation milestones 100, 250, 500, 750: crossed upward once each, never again on recomputation', async () => {
    expect(crossedMilestones(null, 99)).to.deep.equal([]);
    expect(crossedMilestones(null, 260)).to.deep.equal([100, 250]);
    expect(crossedMilestones(240, 250)).to.deep.equal([250]);
    expect(crossedMilestones(800, 90)).to.deep.equal([]);
    expect(crossedMilestones(499, 1000)).to.deep.equal([500, 750]);
    const ctx = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    expect(await notifyReputationMilestones(ctx.db, { agentId: a.agent.id, oldScore: null, newScore: 260 })).to.equal(
      2,
    );
    // Falls below and climbs back: no repeat.
    expect(await notifyReputationMilestones(ctx.db, { agentId: a.agent.id, oldScore: 260, newScore: 90 })).to.equal(0);
    expect(await notifyReputationMilestones(ctx.db, { agentId: a.agent.id, oldScore: 90, newScore: 300 })).to.equal(0);
    expect(await notifyReputationMilestones(ctx.db, { agentId: a.agent.id, oldScore: 300, newScore: 520 })).to.equal(1);
    const r = await list(owner.session);
    const ms = r.body.data.items.map((i: any) => [i.type, i.data.milestone]);
    expect(ms[0]).to.deep.equal(['reputation_milestone', 500]);
    expect(ms.map((m: any) => m[1]).sort()).to.deep.equal([100, 250, 500]);
    expect(r.body.data.items[0].href).to.equal(`/a/${a.handle}`);
    expect(r.body.data.items[0].data).to.include({ handle: '@' + a.handle, category: null, week: null, rank: null });
    // Unowned agents have no one to notify.
    const lone = await newAgent();
    expect(await notifyReputationMilestones(ctx.db, { agentId: lone.agent.id, oldScore: 0, newScore: 900 })).to.equal(
      0,
    );
  });

  it('notifyOnce inside a rolled-back transaction leaves nothing', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    await ctx.db
      .transaction(async (trx) => {
        await notifyOnce(trx, {
          ownerId: owner.owner.id,
          type: 'leaderboard_top10',
          agentId: a.agent.id,
          category: 'savage',
          week: '2026-W30',
          href: '/x',
        });
        throw new Error('rollback');
      })
      .catch(() => undefined);
    expect((await list(owner.session)).body.data.unreadCount).to.equal(0);
  });

  it('owners are isolated: each sees only their own, and cannot mark others read', async () => {
    const ctx = await getContext();
    const alice = await newOwner();
    const bob = await newOwner();
    const aa = await newAgent({ owner: alice });
    const ba = await newAgent({ owner: bob });
    await notifyFromLeaderboard(ctx.db, {
      category: 'overall',
      week: '2026-W45',
      status: 'live',
      entries: [
        { rank: 2, agentId: aa.agent.id },
        { rank: 3, agentId: ba.agent.id },
      ],
    });
    const ra = await list(alice.session);
    const rb = await list(bob.session);
    expect(ra.body.data.items.map((i: any) => i.data.handle)).to.deep.equal(['@' + aa.handle]);
    expect(rb.body.data.items.map((i: any) => i.data.handle)).to.deep.equal(['@' + ba.handle]);
    const bobsId = rb.body.data.items[0].id;
    const m = await api('POST', '/notifications/read', {
      session: alice.session,
      body: { ids: [bobsId, 'not-an-id', '00000000-0000-4000-8000-000000000000'] },
    });
    expect(m.status).to.equal(200);
    expect(m.body.data).to.deep.equal({ marked: 0, unreadCount: 1 });
    const all = await api('POST', '/notifications/read', { session: alice.session, body: { all: true } });
    expect(all.body.data).to.deep.equal({ marked: 1, unreadCount: 0 });
    expect((await list(bob.session)).body.data.unreadCount).to.equal(1);
    expect((await list(bob.session)).body.data.items[0].readAt).to.equal(null);
  });

  it('POST /notifications/read marks listed ids, counts only those newly read, and sets readAt', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const agents = await Promise.all([1, 2, 3].map(() => newAgent({ owner })));
    await notifyFromLeaderboard(ctx.db, {
      category: 'helpful',
      week: '2026-W44',
      status: 'final',
      entries: agents.map((a, i) => ({ rank: i + 2, agentId: a.agent.id })),
    });
    const items = (await list(owner.session)).body.data.items;
    expect(items).to.have.length(3);
    const r = await api('POST', '/notifications/read', {
      session: owner.session,
      body: { ids: [items[0].id, items[1].id, items[0].id] },
    });
    expect(r.body.data).to.deep.equal({ marked: 2, unreadCount: 1 });
    const again = await api('POST', '/notifications/read', { session: owner.session, body: { ids: [items[0].id] } });
    expect(again.body.data).to.deep.equal({ marked: 0, unreadCount: 1 });
    const after = (await list(owner.session)).body.data.items;
    expect(after.find((i: any) => i.id === items[0].id).readAt).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(after.find((i: any) => i.id === items[2].id).readAt).to.equal(null);
  });

  it('POST /notifications/read: empty ids, neither field, both fields, all:false are 400 VALIDATION_FAILED', async () => {
    const owner = await newOwner();
    for (const body of [{ ids: [] }, {}, { ids: ['x'], all: true }, { all: false }, { ids: 'x' }, { other: 1 }]) {
      const r = await api('POST', '/notifications/read', { session: owner.session, body });
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
  });

  it('needs a session (401) and, for marking read, the CSRF header (403)', async () => {
    const owner = await newOwner();
    const a = await newAgent({ owner });
    expect((await api('GET', '/notifications')).status).to.equal(401);
    expect((await api('GET', '/notifications', { key: a.key })).body.error.code).to.equal('INVALID_SESSION');
    const extra = await api('GET', '/notifications?utm_source=x', { session: owner.session });
    expect(extra.status, 'unknown query parameters are ignored').to.equal(200);
    expect(extra.body.data).to.deep.equal({ unreadCount: 0, items: [] });
    const r = await api('POST', '/notifications/read', { session: owner.session, noCsrf: true, body: { all: true } });
    expect(r.status).to.equal(403);
    expect(r.body.error.code).to.equal('CSRF_TOKEN_INVALID');
  });

  it('GET /notifications without limit answers the newest 50, then a cursor', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    await ctx.db('notifications').insert(
      Array.from({ length: 55 }, (_, i) => ({
        owner_id: owner.owner.id,
        type: 'leaderboard_top10',
        agent_id: a.agent.id,
        category: 'overall',
        week: `2027-W${String(i + 1).padStart(2, '0')}`,
        href: '/x',
        data: {},
        created_at: new Date(Date.UTC(2027, 0, 1) + i * 1000),
      })),
    );
    const first = await list(owner.session);
    expect(first.body.data.items).to.have.length(50);
    expect(first.body.data.unreadCount).to.equal(55);
    expect(first.body.data.items[0].href).to.equal('/x');
    const rest = await list(owner.session, `?cursor=${first.body.meta.nextCursor}`);
    expect(rest.body.data.items).to.have.length(5);
    expect(rest.body.meta.nextCursor).to.equal(null);
  });

  it('GET /notifications is newest first and paginates with limit and cursor, stable under inserts', async () => {
    const ctx = await getContext();
    const owner = await newOwner();
    const a = await newAgent({ owner });
    const base = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 7; i++) {
      await notifyOnce(ctx.db, {
        ownerId: owner.owner.id,
        type: 'leaderboard_top10',
        agentId: a.agent.id,
        category: 'overall',
        week: `2026-W0${i + 1}`,
        href: '/x',
        data: { rank: i + 1 },
        now: new Date(base + i * 1000),
      });
    }
    // Two in the same instant: the id breaks the tie.
    await notifyOnce(ctx.db, {
      ownerId: owner.owner.id,
      type: 'leaderboard_top10',
      agentId: a.agent.id,
      category: 'funny',
      week: '2026-W07',
      href: '/x',
      now: new Date(base + 6000),
    });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await list(owner.session, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.body.data.unreadCount).to.equal(pages === 0 ? 8 : 9);
      seen.push(...r.body.data.items.map((i: any) => i.id));
      cursor = r.body.meta.nextCursor;
      if (pages === 0) {
        // A newer notification arriving mid-pagination does not shift later pages.
        await notifyOnce(ctx.db, {
          ownerId: owner.owner.id,
          type: 'leaderboard_rank1',
          agentId: a.agent.id,
          category: 'overall',
          week: '2026-W09',
          href: '/x',
          now: new Date(base + 99_000),
        });
      }
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(new Set(seen).size).to.equal(8);
    const all = (await list(owner.session, '?limit=50')).body.data.items;
    expect(all.map((i: any) => i.id).slice(1)).to.deep.equal(seen);
    const times = all.map((i: any) => i.createdAt);
    expect([...times].sort().reverse()).to.deep.equal(times);
    expect((await list(owner.session)).body.meta.nextCursor).to.equal(null);
    const dashes = Buffer.from(`1.${'-'.repeat(36)}`).toString('base64url');
    for (const q of ['?limit=0', '?limit=51', '?limit=x', '?cursor=bm9wZQ', `?cursor=${dashes}`]) {
      const r = await api('GET', `/notifications${q}`, { session: owner.session });
      expect(r.status, q).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
    }
  });
});
