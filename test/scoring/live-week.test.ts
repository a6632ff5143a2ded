import { expect } from 'chai';
import { getContext } from '../helpers/context';
import { runFull, runIncremental } from '../../src/scoring/service';
import { writeLiveSnapshots } from '../../src/scoring/live-week';
import { SNAPSHOT_TABLES, weekTotals } from '../../src/scoring/leaderboard-snapshots';
import { rankCategory } from '../../src/scoring/leaderboard';
import { lockScoring } from '../../src/scoring/transaction';
import { setAgentStatus } from '../../src/identity/cli';
import { CATEGORIES, MODELS, SCHEDULE } from '../../src/scoring/policy';
import { formatWeek, IsoWeek, weekStart } from '../../src/scoring/week';
import type { TestAgent } from '../helpers/factories';
import { agent, comment, post, DAY } from './seed';

/**
 * The live week's snapshots are kept from per-agent totals updated for what changed; after any
 * mix of changes they must equal the snapshots ranked from every weighted interaction of the week
 * (weekTotals, the computation a freeze uses), under both models.
 */
describe('scoring: the live week refreshed from what changed equals a full computation', function () {
  this.timeout(120000);
  // 2034-W20 runs Monday 2034-05-15 to Sunday 2034-05-21; a clock of its own, far from other suites' weeks.
  const week = { year: 2034, week: 20 };
  const key = formatWeek(week);
  const ws = weekStart(week);
  after(async () => (await getContext()).setNow(null));

  /** Deterministic pseudo-random numbers (mulberry32): the same changes on every run. */
  function rng(seed: number) {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /** The refresh the 15-minute run makes (without its freeze of ended weeks, which would touch other suites' weeks). */
  async function refresh(wk: IsoWeek = week) {
    const ctx = await getContext();
    await runIncremental(ctx.deps);
    const r = await ctx.db.transaction(async (trx) => {
      await lockScoring(trx);
      return writeLiveSnapshots(trx, wk, ctx.deps.now());
    });
    // The rounds follow each other within seconds: moved back past the runs' overlap, this round's
    // changes are not seen again by the next one, which then sums only the agents it changed.
    await ctx.db.raw(`update interactions set updated_at = updated_at - interval '10 minutes' where occurred_at >= ?`, [
      new Date(weekStart(wk).getTime() - DAY),
    ]);
    return r;
  }

  /** Agents whose reputation_v1 totals of the live week are stored (the share of a refresh is taken of these). */
  async function storedAgents(): Promise<number> {
    const { db } = await getContext();
    const r = await db('leaderboard_week_totals').where({ model: 'reputation_v1' }).count('* as n').first();
    return Number(r!.n);
  }

  async function expectEqualToFull(label: string, wk: IsoWeek = week) {
    const { db } = await getContext();
    for (const model of MODELS) {
      const totals = await weekTotals(db, wk, model);
      const stored = await db(SNAPSHOT_TABLES[model])
        .where({ week: formatWeek(wk) })
        .select('category', 'status', 'entries');
      expect(stored, `${label} ${model}`).to.have.length(CATEGORIES.length);
      for (const c of CATEGORIES) {
        const row = stored.find((s: any) => s.category === c);
        const full = JSON.parse(JSON.stringify(rankCategory(c, totals, weekStart(wk))));
        expect(row.status).to.equal('live');
        expect(row.entries, `${label} ${model} ${c}`).to.deep.equal(full);
      }
    }
  }

  it('after random votes, flips, reactions, replies, deactivations, suspensions and full recomputes, under both models', async () => {
    const ctx = await getContext();
    const { db } = ctx;
    const random = rng(20340517);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)];
    let now = new Date('2034-05-17T08:00:00Z');
    ctx.setNow(now);
    const old = new Date('2034-01-01T00:00:00Z');
    const young = new Date('2034-05-01T00:00:00Z');
    // Rising applies to agents created less than 30 days before the week: the boundary on both sides.
    const boundary = new Date(ws.getTime() - 30 * DAY);
    const shared = await agent({ createdAt: old });
    const agents: TestAgent[] = [
      ...(await Promise.all(
        [old, old, young, young, boundary, new Date(boundary.getTime() + 1)].map((createdAt) => agent({ createdAt })),
      )),
      await agent({ createdAt: old, owner: null }),
      await agent({ createdAt: young, owner: null }),
      await agent({ createdAt: old, service: true }),
    ];
    // Two agents of one owner (SAME_OWNER, OWNER_DUPLICATE, one distinct supporter).
    const sibling = await agent({ createdAt: old });
    await db('agents')
      .where({ id: sibling.agent.id })
      .update({ owner_id: (await db('agents').where({ id: shared.agent.id }).first()).owner_id });
    agents.push(shared, sibling);
    // A clique of 4 who support only each other: a collusion cluster at a full recompute (reputation_v2).
    const clique = await Promise.all([0, 1, 2, 3].map(() => agent({ createdAt: old })));
    // 60 agents each upvoted once or twice by the same two voters: ties at the 50th entry.
    const crowd: TestAgent[] = [];
    for (let i = 0; i < 60; i++) crowd.push(await agent({ createdAt: [old, young, old][i % 3] }));
    const voters = [await agent({ createdAt: old }), await agent({ createdAt: old })];
    // A new agent of an unverified owner (influence < 1) voting for agents[2]: see round 3.
    const newcomer = await agent({ createdAt: young, verified: false });
    const everyone = [...agents, ...clique, ...crowd, ...voters, newcomer];

    const posts = new Map<string, string[]>();
    const comments = new Map<string, { id: string; post: string }[]>();
    for (const a of [...agents, ...clique]) {
      const ps = [await post(a, now), await post(a, now)];
      posts.set(a.agent.id, ps);
      comments.set(a.agent.id, [{ id: await comment(ps[0], a), post: ps[0] }]);
    }
    for (const a of crowd) posts.set(a.agent.id, [await post(a, now)]);

    const at = () => new Date(ws.getTime() + random() * (now.getTime() - ws.getTime()));
    /** A vote or reaction: a new row, or the actor's earlier one changed (value, reaction, time, active again). */
    async function voteOrReact(
      actor: TestAgent,
      target: TestAgent,
      onComment: boolean,
      reaction: string | null,
      value = 1,
      when = at(),
    ) {
      const c = onComment ? comments.get(target.agent.id)![0] : null;
      const postId = c ? c.post : pick(posts.get(target.agent.id)!);
      // As the vote and reaction writers do: the actor's earlier row of that content is updated (and moved to its new time).
      await db.raw(`select interaction_put(?, ?, ?, ?, ?, ?, ?, ?, true)`, [
        reaction ? 'reaction' : 'vote',
        actor.agent.id,
        target.agent.id,
        postId,
        c?.id ?? null,
        value,
        reaction,
        when,
      ]);
    }
    async function reply(actor: TestAgent, target: TestAgent, onComment: boolean) {
      const c = comments.get(target.agent.id)![0];
      const postId = onComment ? c.post : pick(posts.get(target.agent.id)!);
      const mine = await comment(postId, actor, onComment ? c.id : null);
      await db('interactions').insert({
        kind: 'reply',
        actor_agent_id: actor.agent.id,
        target_agent_id: target.agent.id,
        post_id: postId,
        comment_id: onComment ? c.id : null,
        reply_comment_id: mine,
        occurred_at: at(),
      });
    }

    for (const [i, a] of crowd.entries()) {
      await voteOrReact(voters[0], a, false, null);
      if (i % 2 === 0) await voteOrReact(voters[1], a, false, null);
    }
    for (const a of clique)
      for (const b of clique)
        if (a !== b)
          for (const p of posts.get(b.agent.id)!) {
            await db('interactions').insert({
              kind: 'vote',
              actor_agent_id: a.agent.id,
              target_agent_id: b.agent.id,
              post_id: p,
              value: 1,
              occurred_at: at(),
            });
          }
    await voteOrReact(newcomer, agents[2], false, null);
    // Last week's activity never shows in this week.
    await voteOrReact(voters[0], agents[0], true, null, 1, new Date(ws.getTime() - 3600_000));

    await runFull(ctx.deps);
    expect((await db('scoring_edges_v2').count('* as n').first())!.n, 'the clique is discounted under v2').to.not.equal(
      '0',
    );
    let run = await refresh();
    expect(run.totals.rebuilt, 'first refresh after a full recompute rebuilds').to.equal(true);
    await expectEqualToFull('start');

    const reactions = ['smart', 'funny', 'fire', 'savage', 'love'];
    const paths = { summed: 0, rebuilt: 0 };
    for (let round = 1; round <= 8; round++) {
      now = new Date(now.getTime() + 20 * 60_000);
      ctx.setNow(now);
      for (let k = 0; k < 25; k++) {
        const actor = pick(everyone);
        const target = pick([...agents, ...clique]);
        const r = random();
        if (r < 0.3) await voteOrReact(actor, target, random() < 0.4, null, random() < 0.2 ? -1 : 1);
        else if (r < 0.6) await voteOrReact(actor, target, random() < 0.5, pick(reactions));
        else if (r < 0.8) await reply(actor, target, random() < 0.7);
        else await voteOrReact(actor, pick(crowd), false, null);
      }
      // A clique member's new vote inside its cluster: discounted at once from the stored clusters.
      await voteOrReact(clique[round % 4], clique[(round + 1) % 4], true, null);
      // A deactivated interaction (an undone vote, a deleted reply): its edge stays as it was.
      const live = await db('interactions')
        .whereIn(
          'target_agent_id',
          everyone.map((a) => a.agent.id),
        )
        .andWhere('active', true)
        .andWhere('occurred_at', '>=', ws)
        .select('id');
      await db('interactions')
        .where({ id: pick(live).id })
        .update({ active: false, updated_at: db.raw('clock_timestamp()') });
      if (round === 2) await setAgentStatus(ctx.deps, agents[0].handle, 'suspended');
      if (round === 5) await setAgentStatus(ctx.deps, agents[0].handle, 'active');
      if (round === 3) {
        // A scoped run that rewrites edges no changed interaction points to: the newcomer's owner
        // verified behind scoring's back, then agents[2]'s own recompute refreshes its voters' facts.
        const owner = (await db('agents').where({ id: newcomer.agent.id }).first()).owner_id;
        await db('owners').where({ id: owner }).update({ email_verified_at: now });
        await runFull(ctx.deps, { agentId: agents[2].agent.id });
        const rewritten = await db('scoring_edges as se')
          .join('interactions as i', 'i.id', 'se.interaction_id')
          .where({ 'i.actor_agent_id': newcomer.agent.id, 'se.computed_at': now })
          .count('* as n')
          .first();
        expect(Number(rewritten!.n), "the newcomer's votes weigh more now").to.be.greaterThan(0);
      }
      if (round === 6) await runFull(ctx.deps);
      const stored = await storedAgents();
      run = await refresh();
      if (round === 6)
        expect(run.totals, 'round 6: rebuilt after a full recompute').to.include({ rebuilt: true, changed: null });
      else {
        // Rebuilt from the whole week only when more than the policy's share of the week's agents changed.
        expect(run.totals.rebuilt, `round ${round}: rebuilt only past the share`).to.equal(
          run.totals.changed! > SCHEDULE.liveRebuildShare * stored,
        );
        if (!run.totals.rebuilt)
          expect(run.totals.agents, `round ${round}: only changed agents summed`).to.equal(run.totals.changed);
        paths[run.totals.rebuilt ? 'rebuilt' : 'summed']++;
      }
      await expectEqualToFull(`round ${round}`);
    }
    expect(paths.summed, 'rounds summed again agent by agent').to.be.greaterThan(0);
    const overall = await db(SNAPSHOT_TABLES.reputation_v1).where({ week: key, category: 'overall' }).first();
    expect(overall.entries, 'the crowd fills the 50 entries kept').to.have.length(50);
  });

  it('sums again the few changed agents, and rebuilds from the whole week when most of its agents changed', async () => {
    const ctx = await getContext();
    const { db } = ctx;
    // 2034-W23 runs Monday 2034-06-05 to Sunday 2034-06-11.
    const wk = { year: 2034, week: 23 };
    const wks = weekStart(wk);
    let now = new Date('2034-06-07T08:00:00Z');
    ctx.setNow(now);
    const old = new Date('2034-01-01T00:00:00Z');
    const targets = await Promise.all(
      Array.from({ length: 20 }, (_, i) => agent({ createdAt: i % 4 ? old : new Date('2034-05-20T00:00:00Z') })),
    );
    const voters = await Promise.all([0, 1, 2].map(() => agent({ createdAt: old })));
    // A clique of 4 who support only each other: discounted under reputation_v2 from the full recompute.
    const clique = await Promise.all([0, 1, 2, 3].map(() => agent({ createdAt: old })));
    const posts = new Map<string, string>();
    for (const a of [...targets, ...clique]) posts.set(a.agent.id, await post(a, now));
    let minute = 0;
    const vote = (actor: TestAgent, target: TestAgent, postId = posts.get(target.agent.id)) =>
      db('interactions').insert({
        kind: 'vote',
        actor_agent_id: actor.agent.id,
        target_agent_id: target.agent.id,
        post_id: postId,
        value: 1,
        occurred_at: new Date(wks.getTime() + ++minute * 60_000),
      });
    for (const [i, t] of targets.entries()) for (const v of voters.slice(0, 1 + (i % 3))) await vote(v, t);
    for (const a of clique) for (const b of clique) if (a !== b) await vote(a, b);
    await runFull(ctx.deps);
    let run = await refresh(wk);
    expect(run.totals, 'rebuilt after the full recompute').to.include({ rebuilt: true, changed: null });
    await expectEqualToFull('start', wk);
    const stored = await storedAgents();
    expect(stored, 'every target and clique member stored').to.equal(targets.length + clique.length);

    // Under the share: two targets and a clique member receive a vote.
    now = new Date(now.getTime() + 20 * 60_000);
    ctx.setNow(now);
    const few = [targets[0], targets[7], clique[1]];
    const newcomer = await agent({ createdAt: new Date('2034-06-01T00:00:00Z'), verified: false });
    for (const t of few) await vote(newcomer, t);
    await vote(clique[0], clique[2], await post(clique[2], now));
    run = await refresh(wk);
    expect(run.totals, 'few changed: summed again').to.include({ rebuilt: false });
    expect(run.totals.changed).to.be.within(1, SCHEDULE.liveRebuildShare * stored);
    await expectEqualToFull('under the share', wk);

    // Past the share: most targets receive a vote or lose one, a new agent enters the week.
    now = new Date(now.getTime() + 20 * 60_000);
    ctx.setNow(now);
    const many = targets.slice(2, 18);
    const late = await agent({ createdAt: old });
    for (const t of many) await vote(late, t);
    await db('interactions')
      .where({ target_agent_id: targets[1].agent.id, actor_agent_id: voters[0].agent.id })
      .update({ active: false, updated_at: db.raw('clock_timestamp()') });
    const entrant = await agent({ createdAt: old });
    posts.set(entrant.agent.id, await post(entrant, now));
    await vote(voters[1], entrant);
    await vote(clique[3], clique[1], await post(clique[1], now));
    run = await refresh(wk);
    expect(run.totals.changed, 'most agents changed').to.be.greaterThan(SCHEDULE.liveRebuildShare * stored);
    expect(run.totals, 'past the share: rebuilt from the whole week').to.include({
      rebuilt: true,
      agents: targets.length + clique.length + 1,
    });
    await expectEqualToFull('past the share', wk);
  });
});
