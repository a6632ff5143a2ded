import { expect } from 'chai';
import { clusterWeight, findClusters } from '../../src/scoring/collusion';
import { reasonsWith } from '../../src/scoring/edge-copy';

/** COLLUSION_CLUSTER's graph rule (reputation_v2) as a pure function over support edges. */

type Edge = [number, number, number?];
const run = (agents: number, edges: Edge[]) =>
  findClusters(agents, {
    m: edges.length,
    src: Int32Array.from(edges, (e) => e[0]),
    dst: Int32Array.from(edges, (e) => e[1]),
    w: Float64Array.from(edges, (e) => e[2] ?? 1),
  });

/** Every member supports every other `times` times. */
function clique(members: number[], times = 1): Edge[] {
  const out: Edge[] = [];
  for (const a of members) for (const b of members) if (a !== b) for (let k = 0; k < times; k++) out.push([a, b]);
  return out;
}

describe('scoring: collusion clusters (pure)', () => {
  it('a clique of 3 or more supporting only itself is one cluster, share 1', () => {
    const c = run(5, clique([0, 1, 2], 2));
    expect(c.clusters).to.equal(1);
    expect(c.members).to.equal(3);
    expect([...c.cluster]).to.deep.equal([0, 0, 0, -1, -1]);
    expect(c.share[0]).to.equal(1);
  });

  it('a mutual pair, a chain and one-way support are never clusters', () => {
    expect(run(2, clique([0, 1], 5)).clusters).to.equal(0);
    // a - b - c mutual chain: the ends have one mutual supporter, so the middle is left with none.
    expect(run(3, [...clique([0, 1]), ...clique([1, 2])]).clusters).to.equal(0);
    // a ring of one-way support
    expect(
      run(4, [
        [0, 1],
        [1, 2],
        [2, 3],
        [3, 0],
      ] as Edge[]).clusters,
    ).to.equal(0);
  });

  it('members mostly supported from outside are peeled away, and with them the group', () => {
    const outside: Edge[] = [];
    for (const m of [0, 1, 2, 3]) for (let v = 4; v < 9; v++) outside.push([v, m]);
    // 3 of 8 supports from the group: under half.
    expect(run(9, [...clique([0, 1, 2, 3]), ...outside]).clusters).to.equal(0);
    // One member with outside support leaves; the 3 others still support only each other.
    const one: Edge[] = [];
    for (let v = 4; v < 9; v++) one.push([v, 3]);
    const c = run(9, [...clique([0, 1, 2, 3]), ...one]);
    expect([...c.cluster].slice(0, 4)).to.deep.equal([0, 0, 0, -1]);
    // Its votes to them now count as outside support.
    expect(c.share[0]).to.equal(2 / 3);
  });

  it('half of the support from the group is enough (≥ 50 %); weights, not counts, decide', () => {
    const half: Edge[] = [...clique([0, 1, 2])];
    for (const m of [0, 1, 2]) half.push([3, m, 2]);
    expect(run(4, half).clusters).to.equal(1);
    const more: Edge[] = [...clique([0, 1, 2])];
    for (const m of [0, 1, 2]) more.push([3, m, 2.01]);
    expect(run(4, more).clusters).to.equal(0);
  });

  it('separate cliques are separate clusters; support one way between them does not join them', () => {
    const c = run(8, [...clique([0, 1, 2]), ...clique([3, 4, 5, 6]), [0, 3], [7, 0]]);
    expect(c.clusters).to.equal(2);
    expect(c.cluster[0]).to.not.equal(c.cluster[3]);
    expect(c.cluster[7]).to.equal(-1);
    expect(c.share[0]).to.equal(2 / 3);
  });

  it('a discounted interaction keeps v1 reductions and adds COLLUSION_CLUSTER; weight x0.2 rounded as stored', () => {
    expect(clusterWeight(1)).to.equal(0.2);
    expect(clusterWeight(0.7)).to.equal(0.14);
    expect(reasonsWith(0, 'COLLUSION_CLUSTER')).to.deep.equal(['COLLUSION_CLUSTER']);
    expect(reasonsWith(1 << 9, 'COLLUSION_CLUSTER')).to.deep.equal(['NEW_AGENT_DISCOUNT', 'COLLUSION_CLUSTER']);
    expect(reasonsWith(0)).to.deep.equal(['NORMAL']);
  });
});
