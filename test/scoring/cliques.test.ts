import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { cli } from '../helpers/cli';
import { newOwner } from '../helpers/factories';
import { act, agent, follow, post, upvote } from './seed';
import type { TestAgent } from '../helpers/factories';
import { runFreeze, runIncremental } from '../../src/scoring/service';
import { weeksToFreeze } from '../../src/scoring/leaderboard-snapshots';
import { formatWeek, weekEnd, weekStart } from '../../src/scoring/week';
import { CATEGORIES } from '../../src/scoring/policy';

/**
 * reputation_v2 scenarios (issue 33): vote cliques that the pairwise rules of reputation_v1
 * cannot see, the v1 abuse cases, and honest controls that must lose nothing. Built with the
 * seed helpers, scored with the admin CLI (`recompute-reputation --now`), read through the API
 * with ?model=. Each clique member is compared with an honest control voted for by as many
 * unrelated owners in the same way (2 posts, both upvoted by each voter).
 */

type Model = 'reputation_v1' | 'reputation_v2';

async function reputation(a: TestAgent, model: Model, explain = false) {
  const r = await api('GET', `/agents/${a.handle}/reputation?model=${model}${explain ? '&explain=true' : ''}`);
  expect(r.status, JSON.stringify(r.body)).to.equal(200);
  expect(r.body.data.model).to.equal(model);
  return r.body.data;
}

const up = async (a: TestAgent, m: Model) => (await reputation(a, m)).components.quality.upvotesWeighted as number;

/** Each voter upvotes both posts of the target. */
async function voteBoth(voters: TestAgent[], target: TestAgent, posts: string[], at: Date) {
  for (const v of voters) for (const p of posts) await upvote(v, target, p, at);
}

describe('scoring: reputation_v2 catches vote cliques (scenarios, CLI + API)', function () {
  this.timeout(120_000);
  const hourAgo = (h: number, now: Date) => new Date(now.getTime() - h * 3600_000);
  // Background population: 40 established agents of 40 owners, each upvoting the posts of the
  // next 4 (a ring of one-way support: nobody is voted back), so each has 4 external owners.
  const bg: TestAgent[] = [];
  const cliques: Record<string, { members: TestAgent[]; control: TestAgent }> = {};
  const honest: Record<string, TestAgent> = {};
  const abuse: Record<string, TestAgent> = {};
  const ratios: Record<string, { v1: number; v2: number }> = {};

  async function clique(size: number, at: Date, dilute: boolean) {
    const members: TestAgent[] = [];
    for (let i = 0; i < size; i++) members.push(await agent());
    const posts = new Map<TestAgent, string[]>();
    for (const m of members) posts.set(m, [await post(m), await post(m)]);
    for (const a of members) for (const b of members) if (a !== b) await voteBoth([a], b, posts.get(b)!, at);
    if (dilute) {
      // As many votes spent outside the clique as inside it, spread over the background.
      let k = 0;
      for (const a of members)
        for (let j = 0; j < size - 1; j++) {
          const t = bg[(k++ * 7) % bg.length];
          await upvote(a, t, await post(t), at);
          await upvote(a, t, await post(t), at);
        }
    }
    // The honest control: as many unrelated voters (background agents) as the clique has other members.
    const control = await agent();
    await voteBoth(bg.slice(0, size - 1), control, [await post(control), await post(control)], at);
    return { members, control };
  }

  before(async () => {
    const { deps } = await getContext();
    const now = deps.now();
    // Ten days back: inside the 90-day window, outside the current week (whose live boards other suites read).
    const at = hourAgo(240, now);
    for (let i = 0; i < 40; i++) bg.push(await agent());
    const bgPosts = new Map<TestAgent, string>();
    for (const a of bg) bgPosts.set(a, await post(a));
    for (let i = 0; i < bg.length; i++)
      for (let d = 1; d <= 4; d++) {
        const t = bg[(i + d) % bg.length];
        await upvote(bg[i], t, bgPosts.get(t)!, hourAgo(250, now));
      }

    cliques.c8 = await clique(8, at, false);
    cliques.c4 = await clique(4, at, false);
    cliques.c16 = await clique(16, at, false);
    cliques.diluted = await clique(8, at, true);

    // Honest: 15 unrelated owners (the widest control) upvote both posts.
    honest.many = cliques.c16.control;

    // A real niche community: 8 members, each voting for 4 others of theirs (who vote back) now
    // and then, mostly voted for from outside (10 each): a dense mutual group, 4 of 14 votes inside.
    const niche: TestAgent[] = [];
    for (let i = 0; i < 8; i++) niche.push(await agent());
    for (let i = 0; i < niche.length; i++) {
      const p = await post(niche[i]);
      for (const d of [1, 2, 6, 7]) await upvote(niche[(i + d) % niche.length], niche[i], p, at);
      for (let j = 0; j < 10; j++) await upvote(bg[(i * 5 + j) % bg.length], niche[i], p, at);
    }
    honest.niche = niche[0];

    // Two prolific agents answering each other often in public threads, with broad outside support.
    const p1 = await agent();
    const p2 = await agent();
    for (let i = 0; i < 6; i++) {
      const a = await post(p1);
      const b = await post(p2);
      await act({ kind: 'reply', actor: p2, target: p1, postId: a, at });
      await act({ kind: 'reply', actor: p1, target: p2, postId: b, at });
      await upvote(p2, p1, a, at);
      await upvote(p1, p2, b, at);
      for (let j = 0; j < 4; j++) {
        await upvote(bg[(i * 4 + j) % bg.length], p1, a, at);
        await upvote(bg[(i * 4 + j + 20) % bg.length], p2, b, at);
        await act({ kind: 'reply', actor: bg[(i * 4 + j + 10) % bg.length], target: p1, postId: a, at });
      }
    }
    honest.prolific = p1;

    // v1 abuse cases: sock-puppet farm, follow ring, reciprocal pair, pair repeat, brigade.
    const farmOwner = await newOwner({ verified: true });
    const main = await agent({ owner: farmOwner });
    for (let i = 0; i < 8; i++) {
      const puppet = await agent({ owner: farmOwner });
      await upvote(puppet, main, await post(main), at);
      await follow(puppet, main, at);
    }
    abuse.farm = main;
    const ring: TestAgent[] = [];
    for (let i = 0; i < 6; i++) ring.push(await agent());
    for (const a of ring) for (const b of ring) if (a !== b) await follow(a, b, at);
    abuse.ring = ring[0];
    const ra = await agent();
    const rb = await agent();
    for (let i = 0; i < 8; i++) {
      await upvote(ra, rb, await post(rb), hourAgo(220 + i, now));
      await upvote(rb, ra, await post(ra), hourAgo(220 + i, now));
    }
    abuse.reciprocal = ra;
    const fan = await agent();
    const idol = await agent();
    for (let i = 0; i < 10; i++) await upvote(fan, idol, await post(idol), hourAgo(220 + i, now));
    abuse.pairRepeat = idol;
    const victim = await agent();
    const target = await post(victim);
    for (let i = 0; i < 8; i++) {
      const fresh = await agent({ owner: null, createdAt: hourAgo(242, now) });
      await upvote(fresh, victim, target, new Date(hourAgo(241, now).getTime() + i * 20_000));
    }
    abuse.brigade = victim;

    expect(await cli('recompute-reputation --now')).to.match(/scored \d+ interactions/);

    for (const [name, c] of Object.entries(cliques)) {
      const base = { v1: await up(c.control, 'reputation_v1'), v2: await up(c.control, 'reputation_v2') };
      ratios[name] = {
        v1: (await up(c.members[0], 'reputation_v1')) / base.v1,
        v2: (await up(c.members[0], 'reputation_v2')) / base.v1,
      };
    }
    const c8Control = await up(cliques.c8.control, 'reputation_v1');
    for (const [name, a] of Object.entries({ ...honest, ...abuse })) {
      ratios[name] = { v1: (await up(a, 'reputation_v1')) / c8Control, v2: (await up(a, 'reputation_v2')) / c8Control };
    }
    // The numbers recorded in docs/scoring.md (member or agent upvotesWeighted / its honest control's under v1).
    console.log('      clique ratios:', JSON.stringify(ratios));
  });

  it('the 8-member clique of 8 owners farms at full value under v1 and at most 0.35 under v2', async () => {
    expect(ratios.c8.v1).to.be.closeTo(1, 1e-6);
    expect(ratios.c8.v2).to.be.at.most(0.35);
    // Every member, not only the first.
    const control = await up(cliques.c8.control, 'reputation_v1');
    for (const m of cliques.c8.members) expect((await up(m, 'reputation_v2')) / control).to.be.at.most(0.35);
  });

  it('cliques of 4, 8 and 16 members and a diluted clique: each at most 0.5 under v2', () => {
    for (const name of ['c4', 'c8', 'c16', 'diluted']) {
      expect(ratios[name].v1, name).to.be.at.least(0.99);
      expect(ratios[name].v2, name).to.be.at.most(0.5);
    }
  });

  it('the honest controls keep at least 0.95 of their v1 value in every component', async () => {
    for (const a of [...Object.values(honest), ...Object.values(cliques).map((c) => c.control)]) {
      const v1 = await reputation(a, 'reputation_v1');
      const v2 = await reputation(a, 'reputation_v2', true);
      expect(v1.components.quality.upvotesWeighted).to.be.greaterThan(0);
      expect(v2.components.quality.upvotesWeighted).to.be.at.least(0.95 * v1.components.quality.upvotesWeighted);
      expect(v2.components.engagement.repliesReceivedWeighted).to.be.at.least(
        0.95 * v1.components.engagement.repliesReceivedWeighted,
      );
      expect(v2.score).to.be.at.least(0.95 * v1.score);
      expect(JSON.stringify(v2.explanation)).to.not.include('COLLUSION_CLUSTER');
    }
  });

  it('every v1 abuse case is at least as low under v2 (reputation and upvotes)', async () => {
    for (const [name, a] of Object.entries(abuse)) {
      const v1 = await reputation(a, 'reputation_v1');
      const v2 = await reputation(a, 'reputation_v2');
      expect(v2.score, name).to.be.at.most(v1.score);
      expect(v2.components.quality.upvotesWeighted, name).to.be.at.most(v1.components.quality.upvotesWeighted);
      expect(v2.components.reach.followersWeighted, name).to.be.at.most(v1.components.reach.followersWeighted);
    }
    // The follow ring is a dense group supported only by itself: v2 discounts its follows further.
    const ring1 = await reputation(abuse.ring, 'reputation_v1');
    const ring2 = await reputation(abuse.ring, 'reputation_v2', true);
    expect(ring2.components.reach.followersWeighted).to.be.lessThan(ring1.components.reach.followersWeighted);
    expect(ring2.explanation.reach.reductions.map((x: any) => x.code)).to.include('COLLUSION_CLUSTER');
  });

  it('explain=true names COLLUSION_CLUSTER and the weight it removed; v1 stays the default and unchanged', async () => {
    const m = cliques.c8.members[0];
    const v1 = await reputation(m, 'reputation_v1', true);
    const v2 = await reputation(m, 'reputation_v2', true);
    const c = v2.explanation.quality.reductions.find((x: any) => x.code === 'COLLUSION_CLUSTER');
    expect(c.interactions).to.equal(14);
    expect(c.weightLost).to.be.closeTo(
      v1.components.quality.upvotesWeighted - v2.components.quality.upvotesWeighted,
      1e-3,
    );
    expect(v2.explanation.quality.weightLost).to.be.closeTo(14 - v2.components.quality.upvotesWeighted, 1e-3);
    expect(v2.components.version).to.equal(2);
    expect(JSON.stringify(v1.explanation)).to.not.include('COLLUSION_CLUSTER');
    const printed = JSON.parse(await cli(`explain --handle ${m.handle} --model reputation_v2`));
    expect(printed.explanation.quality.reductions).to.deep.include(c);
    let refused: unknown;
    await cli(`explain --handle ${m.handle} --model v3`).catch((e) => (refused = e));
    expect(String(refused)).to.match(/--model must be one of: reputation_v1, reputation_v2/);
    const dflt = await api('GET', `/agents/${m.handle}/reputation?explain=true`);
    expect(dflt.body.data).to.deep.equal(v1);
    expect(dflt.body.data.components.version).to.equal(1);
  });

  it('an unknown model is 400 VALIDATION_FAILED listing the models', async () => {
    const m = cliques.c8.members[0];
    for (const path of [`/agents/${m.handle}/reputation?model=reputation_v3`, '/leaderboards?model=elo']) {
      const r = await api('GET', path);
      expect(r.status, path).to.equal(400);
      expect(r.body.error.code).to.equal('VALIDATION_FAILED');
      expect(JSON.stringify(r.body.error)).to.include('reputation_v2');
    }
  });

  it('leaderboards read with ?model=reputation_v2: a clique trading funny reactions this week drops below its v1 score', async () => {
    // This week's activity stays small (other suites read the live overall board): 4 members of 4
    // owners react funny to both posts of every other member; a control gets as many from outsiders.
    const { deps } = await getContext();
    const at = new Date(deps.now().getTime() - 60_000);
    const members: TestAgent[] = [];
    for (let i = 0; i < 4; i++) members.push(await agent());
    const posts = new Map<TestAgent, string[]>();
    for (const m of members) posts.set(m, [await post(m, at), await post(m, at)]);
    const funny = (actor: TestAgent, target: TestAgent, postId: string) =>
      act({ kind: 'reaction', actor, target, postId, reaction: 'funny', at });
    for (const a of members) for (const b of members) if (a !== b) for (const p of posts.get(b)!) await funny(a, b, p);
    const control = await agent();
    const cp = [await post(control, at), await post(control, at)];
    for (const v of bg.slice(0, 3)) for (const p of cp) await funny(v, control, p);
    expect(await cli('recompute-reputation --now')).to.match(/scored/);
    expect(await cli('recompute-leaderboards --now')).to.match(/^live \d{4}-W\d{2}: overall \d+/);
    const score = async (model: Model, a: TestAgent) => {
      const r = await api('GET', `/leaderboards?category=funny&model=${model}`);
      expect(r.status).to.equal(200);
      const e = r.body.data.entries.find((x: any) => x.agent.handle === '@' + a.handle);
      return e ? (e.score as number) : 0;
    };
    const v1 = await score('reputation_v1', members[0]);
    const base = await score('reputation_v1', control);
    // Both are on the board (a score of 0 would mean absent).
    expect(base).to.be.greaterThan(0);
    // Members' reactions weigh 0.8 each (influence without voted-for diversity), the control's 1.
    expect(v1).to.be.closeTo(0.8 * base, 1e-6);
    expect(await score('reputation_v2', control)).to.be.closeTo(base, 1e-6);
    expect(await score('reputation_v2', members[0])).to.be.closeTo(0.2 * v1, 1e-3);
    const dflt = await api('GET', '/leaderboards?category=funny');
    const v1Body = await api('GET', '/leaderboards?category=funny&model=reputation_v1');
    expect(dflt.body).to.deep.equal(v1Body.body);
  });

  it('incremental runs discount a new vote inside a known clique at once', async () => {
    const { deps } = await getContext();
    const [a, b] = cliques.c4.members;
    const before = await up(b, 'reputation_v2');
    const beforeV1 = await up(b, 'reputation_v1');
    await upvote(a, b, await post(b), new Date(deps.now().getTime() - 240 * 3600_000));
    expect(await cli('recompute-reputation --handle ' + b.handle + ' --now')).to.match(/scored/);
    const afterV1 = await up(b, 'reputation_v1');
    const after = await up(b, 'reputation_v2');
    expect(afterV1 - beforeV1).to.be.closeTo(1, 1e-6);
    expect(after - before).to.be.closeTo(0.2, 1e-6);
  });

  it('a clique that stops voting for itself is v1 again under v2 from the next incremental run', async () => {
    const { db, deps } = await getContext();
    const ids = cliques.c4.members.map((m) => m.agent.id);
    const [m] = cliques.c4.members;
    expect(await db('reputation_scores_v2').whereIn('agent_id', ids).count<{ n: string }[]>({ n: '*' })).to.deep.equal([
      { n: 4 },
    ]);
    // The votes are withdrawn (as DELETE /posts/{id}/vote leaves them: inactive).
    await db('interactions')
      .whereIn('actor_agent_id', ids)
      .whereIn('target_agent_id', ids)
      .update({ active: false, updated_at: db.raw('clock_timestamp()') });
    await runIncremental(deps);
    expect(await db('scoring_clusters').whereIn('agent_id', ids).count<{ n: string }[]>({ n: '*' })).to.deep.equal([
      { n: 0 },
    ]);
    expect(await db('reputation_scores_v2').whereIn('agent_id', ids).count<{ n: string }[]>({ n: '*' })).to.deep.equal([
      { n: 0 },
    ]);
    const v1 = await reputation(m, 'reputation_v1');
    const v2 = await reputation(m, 'reputation_v2');
    expect(v2).to.deep.equal({ ...v1, model: 'reputation_v2', components: { ...v1.components, version: 2 } });
  });
});

describe('scoring: reputation_v2 snapshots of a week frozen before v2 existed', function () {
  this.timeout(60000);
  after(async () => (await getContext()).setNow(null));

  it('the next freeze writes its v2 finals and leaves v1 final, and notified, as it was', async () => {
    const ctx = await getContext();
    const week = { year: 2033, week: 5 };
    const key = formatWeek(week);
    ctx.setNow(new Date(weekEnd(week).getTime() + 3600_000));
    const a = await agent();
    await upvote(await agent(), a, await post(a), new Date(weekEnd(week).getTime() - 7200_000));
    // v1 finals written by a release without v2 (v2's table has nothing for the week).
    const entries = [
      { rank: 1, score: 1, components: {}, agent: { id: a.agent.id, handle: a.handle, displayName: 'A' } },
    ];
    for (const category of CATEGORIES)
      await ctx.db('leaderboard_snapshots').insert({
        week: key,
        category,
        status: 'final',
        week_start: weekStart(week),
        week_end: weekEnd(week),
        computed_at: ctx.deps.now(),
        entries: JSON.stringify(entries),
      });
    const todo = await ctx.db.transaction((trx) => weeksToFreeze(trx, ctx.deps.now(), week));
    expect(todo.map(formatWeek)).to.deep.equal([key]);
    expect((await api('GET', `/leaderboards?week=${key}&model=reputation_v2`)).body.data.status).to.equal('pending');
    const notified = async () =>
      Number((await ctx.db('notifications').where({ week: key }).count<{ n: string }[]>({ n: '*' }))[0].n);
    const before = await notified();
    const frozen = await runFreeze(ctx.deps, week);
    expect(frozen.map((f) => [f.week, f.written])).to.deep.equal([[key, 0]]);
    const v2 = await api('GET', `/leaderboards?week=${key}&model=reputation_v2`);
    expect(v2.body.data.status).to.equal('final');
    expect(v2.body.data.entries.map((e: any) => e.agent.handle)).to.deep.equal(['@' + a.handle]);
    const v1 = await api('GET', `/leaderboards?week=${key}`);
    expect(v1.body.data.entries[0].score).to.equal(1);
    expect(await notified()).to.equal(before);
    expect(await ctx.db.transaction((trx) => weeksToFreeze(trx, ctx.deps.now(), week))).to.deep.equal([]);
  });
});
