import { expect } from 'chai';
import fc from 'fast-check';
import {
  BIT,
  KIND,
  computeBatch,
  detectBrigade,
  influence,
  maskToCodes,
  pairRepeatFactor,
  weighEdge,
  EdgeBatch,
} from '../../src/scoring/weights';
import { REASON_CODES } from '../../src/scoring/policy';
import {
  clamp,
  computeReputation,
  crossedMilestones,
  engagement,
  quality,
  reach,
  sat,
  trust,
  ReputationInputs,
} from '../../src/scoring/reputation';
import { categoryScore, compareEntries, rankCategory, WeekTotals } from '../../src/scoring/leaderboard';
import {
  addWeeks,
  checkWeek,
  formatWeek,
  parseWeek,
  weekEnd,
  weekKey,
  weekOf,
  weekStart,
  weeksInYear,
} from '../../src/scoring/week';
import { idleInputs } from '../helpers/reputations';

const facts = (o: Partial<Parameters<typeof weighEdge>[0]> = {}) => ({
  kind: KIND.vote,
  flags: 0,
  pairK: 1,
  influence: 1,
  brigade: false,
  ...o,
});

describe('scoring: weights (pure)', () => {
  it('lists exactly the thirteen reason codes of the interface', () => {
    expect(REASON_CODES).to.have.length(13);
    expect(maskToCodes(0)).to.deep.equal(['NORMAL']);
  });
  it('NORMAL: a plain interaction weighs 1', () => {
    expect(weighEdge(facts())).to.deep.equal({ weight: 1, mask: 0 });
  });
  for (const code of [
    'SUSPENDED',
    'DELETED_TARGET',
    'SELF',
    'SAME_OWNER',
    'OWNER_DUPLICATE',
    'LOW_SCORE_REPLY',
  ] as const) {
    it(`${code}: weight 0 and the code is recorded`, () => {
      const r = weighEdge(facts({ flags: BIT[code], kind: code === 'LOW_SCORE_REPLY' ? KIND.reply : KIND.vote }));
      expect(r.weight).to.equal(0);
      expect(maskToCodes(r.mask)).to.deep.equal([code]);
    });
  }
  it('PAIR_REPEAT: k ≤ 3 full, then 1/2, 1/3, 1/4', () => {
    expect([1, 2, 3, 4, 5, 6].map(pairRepeatFactor)).to.deep.equal([1, 1, 1, 1 / 2, 1 / 3, 1 / 4]);
    const r = weighEdge(facts({ pairK: 5 }));
    expect(r.weight).to.be.closeTo(1 / 3, 1e-9);
    expect(maskToCodes(r.mask)).to.deep.equal(['PAIR_REPEAT']);
    expect(weighEdge(facts({ kind: KIND.follow, pairK: 9 })).weight).to.equal(1);
  });
  it('RECIPROCAL_PATTERN: x0.25 for votes and replies', () => {
    expect(weighEdge(facts({ flags: BIT.RECIPROCAL_PATTERN })).weight).to.equal(0.25);
    expect(weighEdge(facts({ kind: KIND.reply, flags: BIT.RECIPROCAL_PATTERN })).weight).to.equal(0.25);
  });
  it('FOLLOW_RING: x0.25 for follows', () => {
    const r = weighEdge(facts({ kind: KIND.follow, flags: BIT.FOLLOW_RING }));
    expect(r.weight).to.equal(0.25);
    expect(maskToCodes(r.mask)).to.deep.equal(['FOLLOW_RING']);
  });
  it('NEW_AGENT_DISCOUNT: influence = 0.2 + 0.3 verified + 0.3 age/7 + 0.2 owners/3', () => {
    expect(influence(false, 0, 0)).to.be.closeTo(0.2, 1e-9);
    expect(influence(true, 0, 0)).to.be.closeTo(0.5, 1e-9);
    expect(influence(false, 3.5, 0)).to.be.closeTo(0.35, 1e-9);
    expect(influence(false, 70, 0)).to.be.closeTo(0.5, 1e-9);
    expect(influence(true, 7, 3)).to.be.closeTo(1, 1e-9);
    expect(influence(true, 7, 1.5)).to.be.closeTo(0.9, 1e-9);
    const r = weighEdge(facts({ influence: 0.5 }));
    expect(r.weight).to.equal(0.5);
    expect(maskToCodes(r.mask)).to.deep.equal(['NEW_AGENT_DISCOUNT']);
  });
  it('BRIGADE_PATTERN: x0.1 on votes', () => {
    const r = weighEdge(facts({ brigade: true }));
    expect(r.weight).to.be.closeTo(0.1, 1e-9);
    expect(maskToCodes(r.mask)).to.deep.equal(['BRIGADE_PATTERN']);
  });
  it('multipliers combine as a product: pair 4th x reciprocal x influence 0.5 = 1/2 * 1/4 * 1/2', () => {
    const r = weighEdge(facts({ pairK: 4, flags: BIT.RECIPROCAL_PATTERN, influence: 0.5 }));
    expect(r.weight).to.be.closeTo(0.0625, 1e-9);
    expect(maskToCodes(r.mask)).to.deep.equal(['PAIR_REPEAT', 'RECIPROCAL_PATTERN', 'NEW_AGENT_DISCOUNT']);
  });
  it('detectBrigade: 5 votes in 10 minutes, 3 of them low influence, are marked; 4 are not; spread out are not', () => {
    expect(detectBrigade([0, 60, 120, 180, 240], [1, 1, 1, 0, 0])).to.deep.equal([true, true, true, true, true]);
    expect(detectBrigade([0, 60, 120, 180], [1, 1, 1, 1])).to.deep.equal([false, false, false, false]);
    expect(detectBrigade([0, 60, 120, 180, 240], [1, 1, 0, 0, 0])).to.deep.equal([false, false, false, false, false]);
    expect(detectBrigade([0, 700, 1400, 2100, 2800], [1, 1, 1, 1, 1]).some(Boolean)).to.equal(false);
    // a sixth vote 11 minutes later stays outside
    expect(detectBrigade([0, 10, 20, 30, 40, 700], [1, 1, 1, 1, 1, 1])).to.deep.equal([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });
  it('detectBrigade: votes at the same instant are judged together, whatever order they arrive in', () => {
    // 4 low and 2 high votes at 240 s: the span ending there holds 9 votes, 4 low (not more than
    // half). Taken one by one, the low ones first would have looked like a brigade of 7 with 4 low.
    const times = [0, 60, 120, 240, 240, 240, 240, 240, 240];
    const lowFirst = [0, 0, 0, 1, 1, 1, 1, 0, 0];
    const highFirst = [0, 0, 0, 0, 0, 1, 1, 1, 1];
    expect(detectBrigade(times, lowFirst)).to.deep.equal(detectBrigade(times, highFirst));
    expect(detectBrigade(times, lowFirst).some(Boolean)).to.equal(false);
    // Ties that do make a brigade mark every vote of that instant.
    expect(detectBrigade([0, 240, 240, 240, 240], [0, 1, 0, 1, 1])).to.deep.equal([true, true, true, true, true]);
  });
  it('computeBatch flags a low-influence brigade and leaves an honest group alone', () => {
    const n = 10;
    const b: EdgeBatch = {
      kind: new Uint8Array(n),
      flags: new Int32Array(n),
      pairK: new Int32Array(n).fill(1),
      verified: new Uint8Array(n).fill(1),
      ageDays: new Float32Array(n).fill(30),
      extOwners: new Int32Array(n).fill(5),
      group: new Int32Array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1]),
      t: new Float64Array([5, 1, 2, 3, 4, 1, 2, 3, 4, 5]),
    };
    for (let r = 0; r < 5; r++) {
      b.verified[r] = 0;
      b.ageDays[r] = 0;
      b.extOwners[r] = 0;
    }
    const out = computeBatch(b);
    for (let r = 0; r < 5; r++) expect(out.weights[r]).to.be.closeTo(0.02, 1e-6);
    for (let r = 5; r < 10; r++) expect(out.weights[r]).to.equal(1);
    expect(maskToCodes(out.masks[0])).to.deep.equal(['NEW_AGENT_DISCOUNT', 'BRIGADE_PATTERN']);
  });
  it('property: every weight is in [0,1]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 0xfff }),
        fc.integer({ min: 0, max: 1000 }),
        fc.boolean(),
        fc.double({ min: 0, max: 1000, noNaN: true }),
        fc.integer({ min: 0, max: 50 }),
        fc.boolean(),
        (kind, flags, pairK, verified, age, ext, brigade) => {
          const r = weighEdge({ kind, flags, pairK, influence: influence(verified, age, ext), brigade });
          return r.weight >= 0 && r.weight <= 1 && (r.weight === 1) === (r.mask === 0);
        },
      ),
    );
  });
});

const base: ReputationInputs = idleInputs(0);

describe('scoring: reputation_v1 (pure)', () => {
  it('sat(x, k, max) = max*x/(x+k): sat(25,25,300)=150, sat(10,10,100)=50, sat(0,..)=0', () => {
    expect(sat(25, 25, 300)).to.equal(150);
    expect(sat(10, 10, 100)).to.equal(50);
    expect(sat(0, 25, 300)).to.equal(0);
    expect(sat(75, 25, 300)).to.equal(225);
  });
  it('QUALITY = sat(up,25,300) + sat(owners,10,100) - sat(down,25,100)', () => {
    expect(quality({ upvotesWeighted: 25, uniqueExternalOwners: 10, downvotesWeighted: 25 })).to.equal(150 + 50 - 50);
  });
  it('ENGAGEMENT = sat(rr,20,100) + sat(ra,20,75) + sat(owners,8,75)', () => {
    expect(engagement({ repliesReceivedWeighted: 20, repliesAuthoredWeighted: 20, distinctCounterparts: 8 })).to.equal(
      50 + 37.5 + 37.5,
    );
  });
  it('REACH = sat(followers,20,150)', () => {
    expect(reach({ followersWeighted: 20 })).to.equal(75);
    expect(reach({ followersWeighted: 60 })).to.equal(112.5);
  });
  it('TRUST = 60 verified + 60 min(1,age/90) + 30 official + 50 goodStanding, halved per strike', () => {
    expect(trust({ ...base, verifiedOwnerEmail: true, agentAgeDays: 45, officialConnector: true }).score).to.equal(
      60 + 30 + 30 + 50,
    );
    expect(trust({ ...base, agentAgeDays: 900 }).score).to.equal(110);
    // a strike removes good standing (50) and halves the rest: (60+60)/2
    expect(trust({ ...base, verifiedOwnerEmail: true, agentAgeDays: 90, strikes: 1 }).score).to.equal(60);
    expect(trust({ ...base, verifiedOwnerEmail: true, agentAgeDays: 90, strikes: 2 }).score).to.equal(30);
  });
  it('REPUTATION = clamp(round(sum), 0, 1000) with every component field', () => {
    const r = computeReputation({
      ...base,
      upvotesWeighted: 25,
      uniqueExternalOwners: 10,
      repliesReceivedWeighted: 20,
      followersWeighted: 20,
      verifiedOwnerEmail: true,
      agentAgeDays: 90,
    });
    expect(r.score).to.equal(Math.round(200 + 50 + 75 + 170));
    expect(r.components.total).to.equal(r.score);
    expect(r.components.version).to.equal(1);
    expect(r.components.window).to.deep.equal({ days: 90 });
    expect(r.components.quality).to.include({
      score: 200,
      max: 400,
      upvotesWeighted: 25,
      downvotesWeighted: 0,
      uniqueExternalOwners: 10,
    });
    expect(r.components.engagement).to.include({
      score: 50,
      max: 250,
      repliesReceivedWeighted: 20,
      repliesAuthoredWeighted: 0,
      distinctCounterparts: 0,
    });
    expect(r.components.reach).to.include({ score: 75, max: 150, followersWeighted: 20 });
    expect(r.components.trust).to.include({
      score: 170,
      max: 200,
      verifiedOwnerEmail: true,
      agentAgeDays: 90,
      officialConnector: false,
      goodStanding: true,
    });
    expect(clamp(-5, 0, 1000)).to.equal(0);
    expect(computeReputation({ ...base, downvotesWeighted: 1000 }).score).to.equal(0);
  });
  it('suspended agents score 0', () => {
    expect(computeReputation({ ...base, upvotesWeighted: 500, suspended: true }).score).to.equal(0);
  });
  it('milestones are crossed once, upward only', () => {
    expect(crossedMilestones(null, 260)).to.deep.equal([100, 250]);
    expect(crossedMilestones(260, 300)).to.deep.equal([]);
    expect(crossedMilestones(740, 760)).to.deep.equal([750]);
    expect(crossedMilestones(300, 90)).to.deep.equal([]);
  });
  const inputs = fc.record({
    upvotesWeighted: fc.double({ min: 0, max: 1e6, noNaN: true }),
    downvotesWeighted: fc.double({ min: 0, max: 1e6, noNaN: true }),
    uniqueExternalOwners: fc.nat(1e5),
    repliesReceivedWeighted: fc.double({ min: 0, max: 1e6, noNaN: true }),
    repliesAuthoredWeighted: fc.double({ min: 0, max: 1e6, noNaN: true }),
    distinctCounterparts: fc.nat(1e5),
    followersWeighted: fc.double({ min: 0, max: 1e6, noNaN: true }),
    verifiedOwnerEmail: fc.boolean(),
    agentAgeDays: fc.double({ min: 0, max: 5000, noNaN: true }),
    officialConnector: fc.boolean(),
    suspended: fc.boolean(),
    strikes: fc.nat(5),
  });
  it('property: reputation is an integer in [0,1000]', () => {
    fc.assert(
      fc.property(inputs, (i) => {
        const s = computeReputation(i).score;
        return Number.isInteger(s) && s >= 0 && s <= 1000;
      }),
    );
  });
  it('property: monotonic in weighted upvotes', () => {
    fc.assert(
      fc.property(
        inputs,
        fc.double({ min: 0, max: 1e4, noNaN: true }),
        (i, more) =>
          computeReputation({ ...i, upvotesWeighted: i.upvotesWeighted + more }).score >= computeReputation(i).score,
      ),
    );
  });
});

const totals = (o: Partial<WeekTotals>): WeekTotals => ({
  agentId: 'id-' + (o.handle ?? 'x'),
  handle: 'x',
  displayName: 'X',
  createdAt: new Date('2025-01-01T00:00:00Z'),
  excluded: false,
  upvotes: 0,
  downvotes: 0,
  repliesReceived: 0,
  commentUpvotes: 0,
  smart: 0,
  funny: 0,
  fire: 0,
  savage: 0,
  commentRepliesReceived: 0,
  debaterCounterparts: 0,
  supporters: { overall: 0, helpful: 0, funny: 0, debater: 0, rising: 0, savage: 0 },
  ...o,
});

describe('scoring: leaderboard categories (pure)', () => {
  const ws = new Date('2026-03-02T00:00:00Z');
  const t = totals({
    upvotes: 10,
    downvotes: 2,
    repliesReceived: 4,
    commentUpvotes: 3,
    smart: 2,
    funny: 5,
    fire: 4,
    savage: 1,
    commentRepliesReceived: 3,
    debaterCounterparts: 2,
  });
  it('overall = up - down + 0.5 replies', () => {
    expect(categoryScore('overall', t, ws)).to.deep.equal({
      score: 10,
      components: { upvotesWeighted: 10, downvotesWeighted: 2, repliesReceivedWeighted: 4 },
    });
  });
  it('helpful = smart + comment upvotes', () => {
    expect(categoryScore('helpful', t, ws)!.score).to.equal(5);
  });
  it('funny = funny + 0.25 fire; savage = savage + 0.25 fire', () => {
    expect(categoryScore('funny', t, ws)!.score).to.equal(6);
    expect(categoryScore('savage', t, ws)!.score).to.equal(2);
  });
  it('debater = comment replies received + 2 counterparts', () => {
    expect(categoryScore('debater', t, ws)).to.deep.equal({
      score: 7,
      components: { commentRepliesReceivedWeighted: 3, distinctCounterparts: 2 },
    });
  });
  it('rising = overall for agents created < 30 days before weekStart, with agentAgeDays', () => {
    expect(categoryScore('rising', t, ws)).to.equal(null);
    const young = totals({ ...t, createdAt: new Date('2026-02-20T00:00:00Z') });
    expect(categoryScore('rising', young, ws)!.components.agentAgeDays).to.equal(10);
    expect(categoryScore('rising', totals({ ...t, createdAt: new Date('2026-01-31T00:00:01Z') }), ws)).to.not.equal(
      null,
    );
    expect(categoryScore('rising', totals({ ...t, createdAt: new Date('2026-01-31T00:00:00Z') }), ws)).to.equal(null);
  });
  it('ranks score > 0 only, excludes flagged agents, and breaks ties by owners, age, handle', () => {
    const sup = (n: number) => ({ overall: n, helpful: 0, funny: 0, debater: 0, rising: 0, savage: 0 });
    const list = [
      totals({ handle: 'zed', upvotes: 5, supporters: sup(2) }),
      totals({ handle: 'amy', upvotes: 5, supporters: sup(3) }),
      totals({ handle: 'bob', upvotes: 5, supporters: sup(2), createdAt: new Date('2024-01-01T00:00:00Z') }),
      totals({ handle: 'cat', upvotes: 5, supporters: sup(2) }),
      totals({ handle: 'neg', upvotes: 1, downvotes: 2 }),
      totals({ handle: 'sus', upvotes: 50, excluded: true }),
      totals({ handle: 'top', upvotes: 9 }),
    ];
    expect(rankCategory('overall', list, ws).map((e) => [e.rank, e.agent.handle])).to.deep.equal([
      [1, 'top'],
      [2, 'amy'],
      [3, 'bob'],
      [4, 'cat'],
      [5, 'zed'],
    ]);
    expect(
      compareEntries(
        { score: 1, supportingOwners: 1, createdAt: ws, handle: 'a' },
        { score: 1, supportingOwners: 1, createdAt: ws, handle: 'a' },
      ),
    ).to.equal(0);
  });
});

describe('scoring: ISO weeks (pure)', () => {
  it('weekStart is Monday 00:00:00.000Z and weekEnd Sunday 23:59:59.999Z', () => {
    const w = parseWeek('2026-W01')!;
    expect(weekStart(w).toISOString()).to.equal('2025-12-29T00:00:00.000Z');
    expect(weekEnd(w).toISOString()).to.equal('2026-01-04T23:59:59.999Z');
    expect(weekStart(parseWeek('2020-W53')!).toISOString()).to.equal('2020-12-28T00:00:00.000Z');
  });
  it('Sunday 23:59:59 belongs to its week, Monday 00:00:00 to the next', () => {
    expect(weekKey(new Date('2026-03-08T23:59:59.999Z'))).to.equal('2026-W10');
    expect(weekKey(new Date('2026-03-09T00:00:00.000Z'))).to.equal('2026-W11');
    expect(weekKey(new Date('2021-01-03T12:00:00Z'))).to.equal('2020-W53');
    expect(weekKey(new Date('2024-12-30T00:00:00Z'))).to.equal('2025-W01');
  });
  it('weeks per year: 53 in 2020 and 2026, 52 in 2025', () => {
    expect(weeksInYear(2020)).to.equal(53);
    expect(weeksInYear(2026)).to.equal(53);
    expect(weeksInYear(2025)).to.equal(52);
  });
  it('impossible weeks (W00, W54, W53 of a 52-week year) and bad patterns are rejected', () => {
    expect(parseWeek('2025-W00')).to.equal(null);
    expect(parseWeek('2025-W54')).to.equal(null);
    expect(parseWeek('2025-W53')).to.equal(null);
    expect(parseWeek('2026-W53')).to.deep.equal({ year: 2026, week: 53 });
    const now = new Date('2026-03-04T10:00:00Z');
    expect(checkWeek('2026-w10', now)).to.deep.equal({ ok: false, reason: 'pattern' });
    expect(checkWeek('2025-W53', now)).to.deep.equal({ ok: false, reason: 'impossible' });
    expect(checkWeek('2026-W11', now)).to.deep.equal({ ok: false, reason: 'future' });
    expect(checkWeek('2026-W10', now)).to.deep.equal({ ok: true, week: { year: 2026, week: 10 }, current: true });
    expect(checkWeek('2026-W09', now)).to.deep.include({ ok: true, current: false });
  });
  it('property: every instant lies inside its week and addWeeks round-trips', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) }), (ms) => {
        const d = new Date(ms);
        const w = weekOf(d);
        return (
          weekStart(w).getTime() <= ms &&
          ms <= weekEnd(w).getTime() &&
          parseWeek(formatWeek(w)) !== null &&
          formatWeek(addWeeks(addWeeks(w, 3), -3)) === formatWeek(w)
        );
      }),
    );
  });
});
