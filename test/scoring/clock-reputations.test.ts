import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { runFull, runIncremental } from '../../src/scoring/service';
import { clockScoresSql, jsRound, recomputeClockReputations } from '../../src/scoring/clock-reputations';
import { clockAgents } from '../../src/scoring/closure';
import {
  baseScore,
  clockDueMs,
  computeReputation,
  crossedMilestones,
  ReputationComponents,
  ReputationInputs,
  totalScore,
  trust,
  trustComponents,
} from '../../src/scoring/reputation';
import { DAY_MS, MODELS, REPUTATION, WEIGHTS } from '../../src/scoring/policy';
import { idleInputs } from '../helpers/reputations';

/**
 * The clock-only update in SQL (src/scoring/clock-reputations.ts) against the pure formula
 * (computeReputation): random agents and clocks, with the edges where SQL and JS arithmetic could
 * part (Math.round's ties, TRUST's 90-day cap and whole-day ages to the millisecond, microseconds
 * of created_at, strikes at the window's edges, clamping, suspension), and the stored rows, v2
 * rows and milestone notifications compared byte for byte.
 */

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
  };
}
type Rng = ReturnType<typeof prng>;

/** The double next to x, up (dir 1) or down (dir -1), for positive x. */
function ulp(x: number, dir: 1 | -1): number {
  const b = new BigInt64Array(new Float64Array([x]).buffer);
  b[0] += BigInt(dir);
  return new Float64Array(b.buffer)[0];
}

/** Agent ages (ms) around the edges: whole days, the 90-day cap, Math.round ties of TRUST·100, just created. */
function age(rng: Rng): number {
  const day = rng.int(121);
  switch (rng.int(6)) {
    case 0:
      return rng.int(120 * DAY_MS);
    case 1:
      return day * DAY_MS + rng.pick([-1, 0, 1]);
    case 2:
      return REPUTATION.trust.ageFullDays * DAY_MS + rng.pick([-1, 0, 1, -DAY_MS]);
    case 3:
      // 60·d/90 days ends in .005 when d = 3(2n+1)/400: TRUST·100 lands on a tie (or next to it).
      return 648_000 * (2 * rng.int(4000) + 1) + rng.pick([-1, 0, 1]);
    case 4:
      return rng.int(2 * 60_000) - 60_000;
    default:
      return rng.int(400 * DAY_MS);
  }
}

/** Bases (QUALITY + ENGAGEMENT + REACH) around the total's rounding ties and its clamps, given TRUST t. */
const windowStartMs = (d: Date) => d.getTime() - WEIGHTS.windowDays * DAY_MS;

function base(rng: Rng, t: number): number {
  const k = rng.int(1000);
  switch (rng.int(6)) {
    case 0:
      return k + 0.5;
    case 1:
      return ulp(k + 0.5, rng.pick([1, -1] as const));
    case 2:
      return k + 0.5 - t;
    case 3:
      return rng.next() * 1300 - 100;
    case 4:
      return rng.pick([0, -100, 1000, 1200, k]);
    default:
      return rng.next() * 800;
  }
}

describe('scoring: clock-only reputation updates in SQL equal computeReputation', function () {
  this.timeout(120_000);
  let pdb: PrivateDb;
  let db: Knex;

  before(async () => {
    pdb = await createPrivateDb('svc_test_clock', 2);
    db = pdb.db;
  });
  after(async () => pdb?.drop());

  it('jsRound is Math.round (ties toward +∞), unlike round(float8)', async () => {
    const xs = [
      0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.49999999999999994, 3.4999999999999996, 1023.5, 1e-300,
      4503599627370495.5, 4503599627370497, 123.456, -7.25, 0,
    ];
    const r = await db.raw(
      `select ${jsRound('x')}::float8 r from unnest(?::float8[]) with ordinality u(x, i) order by i`,
      [xs],
    );
    expect(r.rows.map((x: { r: number }) => x.r + 0)).to.deep.equal(xs.map((x) => Math.round(x) + 0));
  });

  it('TRUST, its components and both totals: 20,000 random inputs give the formula’s values and JSON', async () => {
    const rng = prng(29);
    const nowMs = Date.parse('2041-05-06T07:08:09.123Z');
    const cols = {
      ver: [] as boolean[],
      off: [] as boolean[],
      susp: [] as boolean[],
      strikes: [] as number[],
      created: [] as number[],
      base: [] as number[],
      base2: [] as (number | null)[],
      trust: [] as string[],
    };
    const totals: [number, number | null][] = [];
    for (let n = 0; n < 20_000; n++) {
      const i = {
        verifiedOwnerEmail: rng.chance(0.6),
        officialConnector: rng.chance(0.3),
        suspended: rng.chance(0.1),
        strikes: rng.chance(0.6) ? 0 : rng.pick([1, 2, 3, 5, 40, 1100]),
        agentAgeDays: 0,
      };
      const created = nowMs - age(rng);
      i.agentAgeDays = (nowMs - created) / DAY_MS;
      const t = trust(i).score;
      const b = base(rng, t);
      const b2 = rng.chance(0.1) ? null : rng.chance(0.4) ? b : base(rng, t);
      cols.ver.push(i.verifiedOwnerEmail);
      cols.off.push(i.officialConnector);
      cols.susp.push(i.suspended);
      cols.strikes.push(i.strikes);
      cols.created.push(created);
      cols.base.push(b);
      cols.base2.push(b2);
      cols.trust.push(JSON.stringify(trustComponents(i, t)));
      totals.push([totalScore(b, t, i.suspended), b2 === null ? null : totalScore(b2, t, i.suspended)]);
    }
    const src = `(select * from unnest(:ver::bool[], :off::bool[], :susp::bool[], :strikes::int[], :created::float8[],
      :base::float8[], :base2::float8[], :trust::text[]) with ordinality u(ver, off, susp, strikes, created_ms, base, base_v2, expected, n))`;
    const r = await db.raw(
      `select n, score1, score2, trust::text = expected::jsonb::text same, trust::text got, expected::jsonb::text want
       from (${clockScoresSql(src)}) s order by n`,
      { ...cols, nowMs },
    );
    expect(r.rows).to.have.length(20_000);
    const wrong = r.rows.filter((x: { same: boolean }) => !x.same).slice(0, 3);
    expect(wrong, 'trust components').to.deep.equal([]);
    const got = r.rows.map((x: { score1: number; score2: number | null }) => [x.score1, x.score2]);
    expect(got).to.deep.equal(totals);
  });

  it('the due time (clockDueMs, and in SQL) is never after the first change the clock alone makes to a stored total, and close to it', async () => {
    const rng = prng(114);
    const nowMs = Date.parse('2041-05-06T07:08:09.123Z');
    const cols = { ver: [] as boolean[], off: [] as boolean[], susp: [] as boolean[], strikes: [] as number[] };
    const more = { created: [] as number[], base: [] as number[], base2: [] as (number | null)[] };
    const cases: { js: number; change: number; young: boolean; at: string }[] = [];
    for (let n = 0; n < 5_000; n++) {
      const facts = {
        verifiedOwnerEmail: rng.chance(0.6),
        officialConnector: rng.chance(0.3),
        suspended: rng.chance(0.1),
        strikes: rng.chance(0.7) ? 0 : rng.pick([1, 2, 3, 5, 40, 1100]),
      };
      const created = nowMs - age(rng);
      const i = { ...facts, agentAgeDays: (nowMs - created) / DAY_MS };
      const t = trust(i).score;
      const b = base(rng, t);
      const b2 = rng.chance(0.1) ? null : rng.chance(0.4) ? b : base(rng, t);
      // What a run stores at clock m that the clock moves: both totals (strikes held: they move
      // apart). TRUST's score and the whole-day age are composed by readers.
      const view = (m: number) => {
        const x = { ...facts, agentAgeDays: (m - created) / DAY_MS };
        const tm = trust(x).score;
        const tot = (y: number | null) => (y === null ? null : totalScore(y, tm, x.suspended));
        return JSON.stringify([tot(b), tot(b2)]);
      };
      // The first millisecond it differs from now's (totals only grow with age: a binary search),
      // Infinity where it does not within 100 days (past the 90-day cap it never does).
      const seen = view(nowMs);
      let [lo, hi] = [nowMs, nowMs + 100 * DAY_MS];
      if (view(hi) === seen) hi = Infinity;
      else
        while (hi - lo > 1) {
          const mid = Math.floor((lo + hi) / 2);
          if (view(mid) === seen) lo = mid;
          else hi = mid;
        }
      const at = JSON.stringify({ ...i, t, b, b2 });
      // Shown values that move (not clamped nor suspended) of unstruck agents under 89 days.
      const moving = (y: number | null) => y === null || (y + t > 0 && y + t < 999);
      const young =
        i.agentAgeDays > 0 && i.agentAgeDays < 89 && !facts.strikes && !facts.suspended && moving(b) && moving(b2);
      cases.push({ js: clockDueMs(i, t, [b, b2], nowMs), change: hi, young, at });
      cols.ver.push(facts.verifiedOwnerEmail);
      cols.off.push(facts.officialConnector);
      cols.susp.push(facts.suspended);
      cols.strikes.push(facts.strikes);
      more.created.push(created);
      more.base.push(b);
      more.base2.push(b2);
    }
    const src = `(select * from unnest(:ver::bool[], :off::bool[], :susp::bool[], :strikes::int[], :created::float8[],
      :base::float8[], :base2::float8[]) with ordinality u(ver, off, susp, strikes, created_ms, base, base_v2, n))`;
    const r = await db.raw(`select n, due from (${clockScoresSql(src)}) s order by n`, { ...cols, ...more, nowMs });
    // node-pg reads timestamptz 'infinity' as the number Infinity.
    const sqlDue = (k: number): number => {
      const d: Date | number = r.rows[k].due;
      return typeof d === 'number' ? d : d.getTime();
    };
    const late = cases.filter((c, k) => c.js > c.change || sqlDue(k) > c.change);
    expect(late.slice(0, 3), 'due after the change').to.deep.equal([]);
    for (const [k, c] of cases.entries()) {
      expect(c.js).to.be.at.least(nowMs - 1001);
      if (c.js === Infinity) expect(sqlDue(k), 'SQL due time never').to.equal(Infinity);
      else expect(Math.abs(sqlDue(k) - c.js), 'SQL and JS due times').to.be.at.most(1);
    }
    // Agents of 90 days or more are never due by the clock (their totals no longer move).
    expect(cases.filter((c) => c.js === Infinity).length).to.be.greaterThan(100);
    // Unstruck agents under 89 days whose totals move are due within 2 s of their change: runs read them no sooner.
    const young = cases.filter((c) => c.young);
    expect(young.filter((c) => c.change - c.js <= 2000).length / young.length).to.be.greaterThan(0.99);
  });

  it('stored scores, components, v2 rows and milestones equal a computation at the new clock, written only where they change', async () => {
    const rng = prng(7);
    const now = new Date('2041-05-06T07:08:09.123Z');
    const t0 = new Date(now.getTime() - 30 * 60_000);
    const ws = (at: Date) => at.getTime() - WEIGHTS.windowDays * DAY_MS;
    const verified = (
      await db('owners').insert({ email: 'v@x.test', password_hash: 'x', email_verified_at: t0 }).returning('id')
    )[0].id;
    const plain = (await db('owners').insert({ email: 'p@x.test', password_hash: 'x' }).returning('id'))[0].id;

    interface A {
      id: string;
      inputs: ReputationInputs;
      inputs2: ReputationInputs;
      /** strike times (ms) of upheld actions */
      strikes: number[];
      stored: 'full' | 'no base' | 'no base_v2' | 'none';
      created: Date;
      owned: boolean;
    }
    const agents: A[] = [];
    for (let n = 0; n < 400; n++) {
      const owner = rng.pick([verified, plain, null]);
      // Ages reach the cap, whole days, microseconds (node-pg reads whole milliseconds).
      const createdMs = now.getTime() - age(rng);
      const micros = rng.chance(0.5) ? String(rng.int(1000)).padStart(3, '0') : '000';
      const createdIso = new Date(createdMs).toISOString().replace('Z', `${micros}Z`);
      const [row] = await db('agents')
        .insert({
          handle: `clock_${n}`,
          display_name: 'a',
          owner_id: owner,
          official_connector: rng.chance(0.3),
          status: rng.chance(0.1) ? 'suspended' : 'active',
          created_at: createdIso,
        })
        .returning(['id', 'created_at', 'official_connector', 'status']);
      // Upheld strikes inside, at and outside the window's edges at both clocks; and unheld ones.
      const strikes: number[] = [];
      for (let s = rng.chance(0.6) ? 0 : 1 + rng.int(3); s > 0; s--) {
        const at = rng.pick([
          now.getTime() - rng.int(WEIGHTS.windowDays * DAY_MS),
          ws(now),
          ws(now) + 1,
          ws(t0) + rng.int(30 * 60_000),
          now.getTime(),
          now.getTime() - rng.int(20 * 60_000),
          now.getTime() + 60_000,
        ]);
        const upheld = rng.chance(0.85);
        await db('moderation_actions').insert({
          agent_id: row.id,
          kind: 'strike',
          reason: 'r',
          upheld,
          created_at: new Date(at),
        });
        if (upheld) strikes.push(at);
      }
      // Bases near the milestones and the rounding ties: upvotes alone give 300·u/(u + 25).
      const target = rng.pick([...REPUTATION.milestones, 0, 40, 180]) - rng.next() * 120 + rng.pick([0, 0.5]);
      const up = Math.max(0, Math.min(299, target));
      const inputs: ReputationInputs = {
        upvotesWeighted: (25 * up) / (300 - up),
        downvotesWeighted: rng.chance(0.2) ? rng.next() * 10 : 0,
        uniqueExternalOwners: rng.int(4),
        repliesReceivedWeighted: rng.chance(0.3) ? rng.next() * 5 : 0,
        repliesAuthoredWeighted: 0,
        distinctCounterparts: rng.int(3),
        followersWeighted: rng.chance(0.3) ? rng.next() * 8 : 0,
        verifiedOwnerEmail: owner === verified,
        agentAgeDays: 0,
        officialConnector: row.official_connector,
        suspended: row.status === 'suspended',
        strikes: 0,
      };
      // v2: the same sums, nearly the same (a COLLUSION_CLUSTER discount of a tiny weight), or discounted.
      const inputs2 = rng.pick([
        { ...inputs },
        { ...inputs, upvotesWeighted: inputs.upvotesWeighted * (1 - 1e-12) },
        {
          ...inputs,
          upvotesWeighted: inputs.upvotesWeighted * 0.8,
          uniqueExternalOwners: Math.max(0, inputs.uniqueExternalOwners - 1),
        },
      ]);
      const stored = rng.chance(0.9) ? 'full' : rng.pick(['no base', 'no base_v2', 'none'] as const);
      agents.push({ id: row.id, inputs, inputs2, strikes, stored, created: row.created_at, owned: owner !== null });
    }
    // Young agents whose v2 total is v1's but for a base 2e-6 apart, straddling a rounding tie at
    // one clock and not the other: the clock removes their v2 row ('gone'), or adds one ('new').
    for (let n = 0; n < 40; n++) {
      const gone = n % 2 === 0;
      const [row] = await db('agents')
        .insert({
          handle: `clock_v2_${n}`,
          display_name: 'a',
          created_at: new Date(now.getTime() - (1 + rng.next() * 80) * DAY_MS),
        })
        .returning(['id', 'created_at']);
      const facts = { verifiedOwnerEmail: false, officialConnector: false, suspended: false, strikes: 0 };
      const t = (clock: Date) =>
        trust({ ...facts, agentAgeDays: (clock.getTime() - row.created_at.getTime()) / DAY_MS }).score;
      const tie = Math.floor(t(now)) + 10.5 + rng.int(200);
      const b = tie - (gone ? t(t0) : t(now)) - 1e-6;
      const upvotes = (base: number) => (25 * base) / (300 - base);
      const inputs: ReputationInputs = { ...idleInputs(0), ...facts, upvotesWeighted: upvotes(b) };
      const inputs2 = { ...inputs, upvotesWeighted: upvotes(b + 2e-6) };
      agents.push({ id: row.id, inputs, inputs2, strikes: [], stored: 'full', created: row.created_at, owned: false });
    }
    /** The facts at `at`, as computeReputation reads them (the clock-dependent ones). */
    const at = (a: A, x: ReputationInputs, clock: Date): ReputationInputs => ({
      ...x,
      agentAgeDays: (clock.getTime() - a.created.getTime()) / DAY_MS,
      strikes: a.strikes.filter((s) => s > ws(clock) && s <= clock.getTime()).length,
    });
    const components = (x: ReputationInputs, version: number) => {
      const c = computeReputation(x);
      return { score: c.score, components: { ...c.components, version } as ReputationComponents };
    };
    const sameButVersion = (a: ReputationComponents, b: ReputationComponents) =>
      JSON.stringify({ ...a, version: 0 }) === JSON.stringify({ ...b, version: 0 });

    // What a full run at t0 stored (base: baseScore's float8, as reputation-run writes it).
    const before = new Map<string, number>();
    const had2 = new Set<string>();
    for (const a of agents) {
      if (a.stored === 'none') continue;
      const c1 = components(at(a, a.inputs, t0), 1);
      const c2 = components(at(a, a.inputs2, t0), 2);
      before.set(a.id, c1.score);
      await db('reputation_scores').insert({
        agent_id: a.id,
        score: c1.score,
        components: JSON.stringify(c1.components),
        computed_at: t0,
        base: a.stored === 'no base' ? null : baseScore(a.inputs),
        base_v2: a.stored === 'no base_v2' ? null : baseScore(a.inputs2),
      });
      if (!sameButVersion(c1.components, c2.components)) had2.add(a.id);
      if (had2.has(a.id))
        await db('reputation_scores_v2').insert({
          agent_id: a.id,
          score: c2.score,
          components: JSON.stringify(c2.components),
          computed_at: t0,
        });
    }

    const ids = agents.map((a) => a.id);
    const res = await db.transaction((trx) => recomputeClockReputations(trx, now, ids));
    const ok = agents.filter((a) => a.stored === 'full');
    expect(res.agents).to.equal(ok.length);
    expect([...res.rest].sort()).to.deep.equal(
      agents
        .filter((a) => a.stored !== 'full')
        .map((a) => a.id)
        .sort(),
    );

    /** Stored rows as text (jsonb's own printing), by agent. */
    const rows = async (table: string) => {
      const r = await db.raw(`select agent_id, score, components::text c, computed_at from ${table}`);
      return new Map<string, { score: number; c: string; computed_at: Date }>(
        r.rows.map((x: { agent_id: string }) => [x.agent_id, x]),
      );
    };
    const asJsonb = async (xs: string[]): Promise<string[]> =>
      (
        await db.raw('select e::jsonb::text t from unnest(?::text[]) with ordinality u(e, i) order by i', [xs])
      ).rows.map((x: { t: string }) => x.t);
    const v1 = await rows('reputation_scores');
    const v2 = await rows('reputation_scores_v2');
    const want1 = ok.map((a) => components(at(a, a.inputs, now), 1));
    const want2 = ok.map((a) => components(at(a, a.inputs2, now), 2));
    const text1 = await asJsonb(want1.map((w) => JSON.stringify(w.components)));
    const text2 = await asJsonb(want2.map((w) => JSON.stringify(w.components)));
    let written = 0;
    const v2moves = { kept: 0, gone: 0, new: 0, none: 0 };
    const notes: string[] = [];
    for (const [k, a] of ok.entries()) {
      const got = v1.get(a.id)!;
      expect({ score: got.score, c: got.c }, `v1 of agent ${k}`).to.deep.equal({ score: want1[k].score, c: text1[k] });
      const old = computeReputation(at(a, a.inputs, t0));
      const changed = JSON.stringify(old.components) !== JSON.stringify(want1[k].components);
      expect(got.computed_at.getTime(), `v1 computed_at of agent ${k}`).to.equal((changed ? now : t0).getTime());
      if (changed) written++;
      const differs = !sameButVersion(want1[k].components, want2[k].components);
      const got2 = v2.get(a.id);
      v2moves[had2.has(a.id) ? (differs ? 'kept' : 'gone') : differs ? 'new' : 'none']++;
      expect(got2 ? { score: got2.score, c: got2.c } : null, `v2 of agent ${k}`).to.deep.equal(
        differs ? { score: want2[k].score, c: text2[k] } : null,
      );
      if (a.owned)
        for (const m of crossedMilestones(before.get(a.id)!, want1[k].score))
          notes.push(`${a.id} ${m} ${want1[k].score}`);
    }
    expect(written, 'rows the clock moved').to.be.greaterThan(50);
    // v2 rows kept (and rewritten), removed (v2 equal to v1 again) and added (totals apart).
    expect(
      Object.values(v2moves).every((n) => n > 0),
      JSON.stringify(v2moves),
    ).to.equal(true);
    // Rows outside the update are untouched.
    for (const a of agents.filter((x) => x.stored !== 'full' && x.stored !== 'none'))
      expect(v1.get(a.id)!.computed_at.getTime()).to.equal(t0.getTime());
    const n = await db.raw(
      `select agent_id || ' ' || scope_key || ' ' || (data->>'score') k from notifications where type = 'reputation_milestone'`,
    );
    expect(n.rows.map((x: { k: string }) => x.k).sort()).to.deep.equal(notes.sort());
    expect(res.milestones).to.equal(notes.length);
    expect(notes.length, 'milestones reached').to.be.greaterThan(0);

    // Again at the same clock: nothing left to write (no row version changes).
    const versions = async () =>
      (
        await db.raw(`select agent_id || ' ' || xmin::text v from reputation_scores union all
        select agent_id || ' v2 ' || xmin::text from reputation_scores_v2 order by 1`)
      ).rows;
    const kept = await versions();
    const again = await db.transaction((trx) => recomputeClockReputations(trx, now, ids, MODELS));
    expect(again).to.deep.include({ agents: ok.length, milestones: 0 });
    expect(await versions()).to.deep.equal(kept);
  });

  it('clockAgents finds those due by the clock, back in time the young, and strikes at the edges', async () => {
    const rng = prng(11);
    const us = (d: Date) => BigInt(d.getTime()) * 1000n;
    const DAY_US = BigInt(DAY_MS) * 1000n;
    const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
    for (const [n, minutes] of [
      [0, 30],
      [1, 0],
      [2, 1 / 60],
      [3, 3 * 24 * 60],
      [4, -30],
    ] as const) {
      const hiClock = new Date(Date.parse('2042-02-03T04:05:06.789Z') + n * 7 * DAY_MS);
      const loClock = new Date(hiClock.getTime() - minutes * 60_000);
      const [lo, hi] = loClock < hiClock ? [loClock, hiClock] : [hiClock, loClock];
      const expected: string[] = [];
      const ids: string[] = [];
      for (let k = 0; k < 300; k++) {
        // Creation times a whole number of days (± a second and microseconds) before either clock, or anywhere.
        const base = rng.pick([lo, hi]).getTime() - rng.int(500) * DAY_MS;
        const offsetUs = BigInt(
          rng.pick([0, 1, -1, 999, -999, 1000, -1000, 1001, -1001, 500_000]) * 1000 + rng.pick([0, 1, -1, 7]),
        );
        const createdUs = rng.chance(0.2)
          ? us(lo) - BigInt(rng.int(400 * DAY_MS)) * 1000n
          : BigInt(base) * 1000n + offsetUs;
        const ms = floorDiv(createdUs, 1000n);
        const iso = new Date(Number(ms))
          .toISOString()
          .replace('Z', `${String(createdUs - ms * 1000n).padStart(3, '0')}Z`);
        const [row] = await db('agents')
          .insert({ handle: `ca_${n}_${k}`, display_name: 'a', created_at: iso })
          .returning('id');
        ids.push(row.id);
        // A stored reputation due around the later clock (or never stored).
        const due = rng.pick([
          hi.getTime() - 1,
          hi.getTime(),
          hi.getTime() + 1,
          lo.getTime() - DAY_MS,
          hi.getTime() + DAY_MS,
          -Infinity,
          null,
        ]);
        if (due !== null)
          await db('reputation_scores').insert({
            agent_id: row.id,
            score: 0,
            components: '{}',
            computed_at: lo,
            clock_due_at: due === -Infinity ? '-infinity' : new Date(due),
          });
        const strike = rng.chance(0.05)
          ? rng.pick([
              windowStartMs(lo),
              windowStartMs(hi),
              lo.getTime(),
              hi.getTime(),
              lo.getTime() + 1,
              windowStartMs(hi) + 1,
            ])
          : null;
        if (strike !== null)
          await db('moderation_actions').insert({
            agent_id: row.id,
            kind: 'strike',
            reason: 'r',
            created_at: new Date(strike),
          });
        const back = loClock > hiClock;
        const young = createdUs > us(lo) - BigInt(REPUTATION.trust.ageFullDays) * DAY_US - 1_000_000n;
        const struck =
          strike !== null &&
          ((strike > windowStartMs(lo) && strike <= windowStartMs(hi)) ||
            (strike > lo.getTime() && strike <= hi.getTime()));
        // Forward, what is due by the clock; backward, by creation time.
        if ((back ? young : due !== null && due <= hi.getTime()) || struck) expected.push(row.id);
      }
      const got = await db.transaction((trx) => clockAgents(trx, loClock, hiClock));
      const mine = new Set(ids);
      expect(got.filter((id) => mine.has(id)).sort(), `clocks ${n}`).to.deep.equal(expected.sort());
    }
  });

  it('an agent created long before the clock and never scored is scored by the next incremental run', async () => {
    const clock = { now: new Date('2043-01-01T00:00:00Z') };
    const deps = scoringDeps(db, () => clock.now, 1);
    try {
      await runFull(deps);
      clock.now = new Date(clock.now.getTime() + 30 * 60_000);
      const [row] = await db('agents')
        .insert({
          handle: 'clock_old_new',
          display_name: 'a',
          created_at: new Date(clock.now.getTime() - 400.5 * DAY_MS),
        })
        .returning('id');
      const r = await runIncremental(deps);
      expect(r.full).to.equal(false);
      const stored = await db('reputation_scores').where({ agent_id: row.id }).first('score', 'components');
      const want = computeReputation(idleInputs(400.5));
      expect(stored).to.deep.equal({ score: want.score, components: want.components });
    } finally {
      await deps.scoringPool.destroy();
    }
  });
});
