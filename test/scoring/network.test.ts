import { expect } from 'chai';
import { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { copyOut } from '../../src/scoring/copy';
import { recomputeWeights } from '../../src/scoring/engine';
import { lockScoring } from '../../src/scoring/transaction';
import { recomputeReputations } from '../../src/scoring/reputation-run';
import { runFull } from '../../src/scoring/service';
import { generateNetwork } from '../../bench/gen/network';
import { weekTotals, weekTotalsV2 } from '../../src/scoring/leaderboard-snapshots';
import { addWeeks, weekOf } from '../../src/scoring/week';
import type { Deps } from '../../src/deps';

/**
 * The full recompute's bulk shortcuts against the per-agent SQL paths, on a generated network
 * with every abuse pattern (follow rings, sock-puppet farms, brigades, reciprocal pairs): the
 * reputation sums taken from the streamed weights equal the SQL sums, and rescoring every agent
 * through the scoped path changes no weight. Runs in its own database (the generator's handles
 * are fixed).
 */
describe('scoring: full recompute vs scoped paths on a generated network', function () {
  this.timeout(120_000);
  let pdb: PrivateDb;
  let db: Knex;
  const now = new Date();
  let deps: Deps;

  before(async () => {
    pdb = await createPrivateDb('svc_test_net', 4);
    db = pdb.db;
    await generateNetwork(db, { interactions: 30_000 }, now);
    deps = scoringDeps(db, () => now, 2);
    await runFull(deps);
  });

  after(async () => {
    await pdb?.drop();
  });

  const reputations = async (table = 'reputation_scores') => {
    const rows = await db(table).select('agent_id', 'score', 'components').orderBy('agent_id');
    return new Map(rows.map((r) => [r.agent_id, { score: r.score, components: r.components }]));
  };

  it('every reputation (both models) summed in SQL equals the one summed from the full run’s weights', async () => {
    const full = await reputations();
    const fullV2 = await reputations('reputation_scores_v2');
    const ids = [...full.keys()];
    expect(ids.length).to.be.greaterThan(1000);
    // Abuse shows up in the inputs: some agents have discounted upvotes and conversations.
    expect([...full.values()].some((r) => r.components.engagement.distinctCounterparts > 0)).to.equal(true);
    await db.transaction(async (trx) => {
      await lockScoring(trx);
      await recomputeReputations(trx, now, ids);
    });
    const sql = await reputations();
    expect(sql.size).to.equal(full.size);
    for (const [id, r] of full) expect(sql.get(id), id).to.deep.equal(r);
    // reputation_v2 too (its discounted rows count as no distinct owner, in SQL as in the full run),
    // stored for the agents whose v2 differs from v1 only, the same ones on both paths.
    const sqlV2 = await reputations('reputation_scores_v2');
    expect(fullV2.size).to.be.within(1, full.size - 1);
    expect([...sqlV2.keys()]).to.deep.equal([...fullV2.keys()]);
    for (const [id, r] of fullV2) expect(sqlV2.get(id), id).to.deep.equal(r);
    for (const [id, r] of fullV2)
      expect(r.components, id).to.not.deep.equal({ ...full.get(id)!.components, version: 2 });
    // The generated cliques are clusters: some v2 scores are below v1's, none above.
    expect([...fullV2].some(([id, r]) => r.score < full.get(id)!.score)).to.equal(true);
    expect([...fullV2].every(([id, r]) => r.score <= full.get(id)!.score)).to.equal(true);
  });

  it('rescoring every agent through the scoped path changes no weight of the full run', async () => {
    const before = await db('scoring_edges').count<{ n: number }[]>({ n: '*' });
    const reasons = await db('scoring_edges').select(db.raw('unnest(reasons) code')).distinct();
    // The network exercises the group rules, not only the per-row ones.
    expect(reasons.map((r) => r.code)).to.include.members([
      'SAME_OWNER',
      'FOLLOW_RING',
      'BRIGADE_PATTERN',
      'RECIPROCAL_PATTERN',
      'NEW_AGENT_DISCOUNT',
    ]);
    const ids = (await db('agents').select('id')).map((r) => r.id);
    // reputation_v2: the scoped path applies the stored clusters with the full run's arithmetic.
    const v2 = () => db('scoring_edges_v2').select('interaction_id', 'weight', 'reasons').orderBy('interaction_id');
    const v2Before = await v2();
    expect(v2Before.length).to.be.greaterThan(0);
    const run = await db.transaction(async (trx) => {
      await lockScoring(trx);
      return recomputeWeights(trx, now, ids, { freshActors: true });
    });
    expect(run.interactions).to.equal(Number(before[0].n));
    expect(run.rewritten).to.equal(0);
    expect(run.collusion.edges).to.equal(v2Before.length);
    expect(await v2()).to.deep.equal(v2Before);
  });

  it('reputation_v2 week totals re-summed for discounted targets only equal a full v2 sum', async () => {
    const byAgent = (ts: { agentId: string }[]) => [...ts].sort((a, b) => (a.agentId < b.agentId ? -1 : 1));
    let differing = 0;
    for (const w of [weekOf(now), addWeeks(weekOf(now), -1)]) {
      const v1 = await weekTotals(db, w);
      const v2 = byAgent(await weekTotals(db, w, 'reputation_v2'));
      expect(byAgent(await weekTotalsV2(db, w, v1))).to.deep.equal(v2);
      const a = byAgent(v1);
      expect(v2.map((t) => t.agentId)).to.deep.equal(a.map((t) => t.agentId));
      differing += v2.filter((t, i) => JSON.stringify(t) !== JSON.stringify(a[i])).length;
    }
    // The generated cliques voted 4 days ago: some totals differ under v2.
    expect(differing).to.be.greaterThan(0);
  });

  it('copyOut parses a stream of many chunks, rows split across chunk boundaries', async () => {
    const got = await db.transaction((trx) =>
      copyOut(
        trx,
        `select g::int8 * 3000000000, (g % 30000)::int2, g::int4, g::float8 / 7, g % 3 = 0 from generate_series(1, 150000) g`,
        {
          a: 'int8',
          b: 'int2',
          c: 'int4',
          d: 'float8',
          e: 'bool',
        },
      ),
    );
    expect(got.n).to.equal(150_000);
    for (const i of [0, 1, 8191, 65535, 99_999, 149_999]) {
      const g = i + 1;
      expect([got.cols.a[i], got.cols.b[i], got.cols.c[i], got.cols.d[i], got.cols.e[i]]).to.deep.equal([
        g * 3_000_000_000,
        g % 30000,
        g,
        g / 7,
        g % 3 === 0 ? 1 : 0,
      ]);
    }
    let sum = 0;
    for (let i = 0; i < got.n; i++) sum += got.cols.c[i];
    expect(sum).to.equal((150_000 * 150_001) / 2);
  });
});
