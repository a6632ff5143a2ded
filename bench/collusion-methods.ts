/**
 * How reputation_v2's graph rule was chosen: candidate methods on the scenario shapes of
 * test/scoring/cliques.test.ts, built here as in-memory support graphs (every vote weighs 1 under
 * v1, as for established agents of verified owners), plus the pure rule's time on a 1M-edge graph.
 *
 *   npx tsx bench/collusion-methods.ts
 *
 * Methods (each turns v1 weights into v2 weights):
 * - peel+share (the one shipped, src/scoring/collusion.ts): clusters by peeling the mutual-support
 *   graph (≥ 2 mutual supporters left) with a self-support test (≥ 50 % of received support from
 *   them); support inside a cluster × 0.2.
 * - 2-core only: the same peeling without the self-support test.
 * - SybilRank (rule seeds): trust propagated from seeds over the undirected support graph for
 *   ceil(log2 n) steps, degree-normalised; an actor's votes × min(1, its trust / the median trust).
 *   Seeds as the issue suggests: agents with ≥ 3 distinct supporters (aged, verified: all here).
 * - SybilRank (hand seeds): the same with seeds hand-picked among the background population.
 * Printed: each clique member's support / its honest control's (target ≤ 0.35 for the 8-clique,
 * ≤ 0.5 for the others), and each honest agent's support under the method / under v1 (≥ 0.95).
 */
import { COLLUSION } from '../src/scoring/policy';
import { findClusters } from '../src/scoring/collusion';

interface World {
  n: number;
  src: number[];
  dst: number[];
  add(a: number, b: number, times?: number): void;
  agent(): number;
}

function world(): World {
  const w: World = {
    n: 0,
    src: [],
    dst: [],
    add(a, b, times = 1) {
      for (let k = 0; k < times; k++) {
        w.src.push(a);
        w.dst.push(b);
      }
    },
    agent: () => w.n++,
  };
  return w;
}

/** The scenarios of test/scoring/cliques.test.ts. */
function build() {
  const w = world();
  const bg = Array.from({ length: 40 }, () => w.agent());
  bg.forEach((a, i) => [1, 2, 3, 4].forEach((d) => w.add(a, bg[(i + d) % bg.length])));
  const pairs: Record<string, { member: number; control: number }> = {};
  const clique = (name: string, size: number, dilute: boolean) => {
    const m = Array.from({ length: size }, () => w.agent());
    for (const a of m) for (const b of m) if (a !== b) w.add(a, b, 2);
    if (dilute) {
      let k = 0;
      for (const a of m) for (let j = 0; j < size - 1; j++) w.add(a, bg[(k++ * 7) % bg.length], 2);
    }
    const control = w.agent();
    for (const v of bg.slice(0, size - 1)) w.add(v, control, 2);
    pairs[name] = { member: m[0], control };
  };
  clique('clique of 8', 8, false);
  clique('clique of 4', 4, false);
  clique('clique of 16', 16, false);
  clique('diluted clique of 8', 8, true);
  const honest: Record<string, number> = { 'voted by 15 owners': pairs['clique of 16'].control };
  const niche = Array.from({ length: 8 }, () => w.agent());
  niche.forEach((a, i) => {
    for (const d of [1, 2, 6, 7]) w.add(niche[(i + d) % 8], a);
    for (let j = 0; j < 10; j++) w.add(bg[(i * 5 + j) % bg.length], a);
  });
  honest['niche community member'] = niche[0];
  const p1 = w.agent();
  const p2 = w.agent();
  w.add(p1, p2, 12);
  w.add(p2, p1, 12);
  for (let i = 0; i < 24; i++) {
    w.add(bg[i % bg.length], p1, 2);
    w.add(bg[(i + 20) % bg.length], p2);
  }
  honest['prolific pair'] = p1;
  return { w, bg, pairs, honest };
}

type Method = (n: number, src: Int32Array, dst: Int32Array, w: Float64Array, bg: number[]) => Float64Array;

const peel =
  (withShare: boolean): Method =>
  (n, src, dst, w) => {
    const rule = { ...COLLUSION, minSelfSupportShare: withShare ? COLLUSION.minSelfSupportShare : 0 };
    const c = findClusters(n, { m: src.length, src, dst, w }, rule);
    return w.map((x, i) =>
      c.cluster[src[i]] >= 0 && c.cluster[src[i]] === c.cluster[dst[i]] ? x * COLLUSION.factor : x,
    );
  };

const sybilRank =
  (handSeeds: boolean): Method =>
  (n, src, dst, w, bg) => {
    const nb: Set<number>[] = Array.from({ length: n }, () => new Set());
    const supporters: Set<number>[] = Array.from({ length: n }, () => new Set());
    for (let i = 0; i < src.length; i++) {
      nb[src[i]].add(dst[i]);
      nb[dst[i]].add(src[i]);
      supporters[dst[i]].add(src[i]);
    }
    const seeds = handSeeds ? bg.slice(0, 10) : [...Array(n).keys()].filter((a) => supporters[a].size >= 3);
    let t = new Float64Array(n);
    for (const s of seeds) t[s] = n / seeds.length;
    for (let step = 0; step < Math.ceil(Math.log2(n)); step++) {
      const next = new Float64Array(n);
      for (let a = 0; a < n; a++) for (const b of nb[a]) next[b] += t[a] / nb[a].size;
      t = next;
    }
    const norm = t.map((x, a) => (nb[a].size ? x / nb[a].size : 0));
    const sorted = [...norm].filter((x) => x > 0).sort((a, b) => a - b);
    const ref = sorted[Math.floor(sorted.length / 2)];
    return w.map((x, i) => x * Math.min(1, norm[src[i]] / ref));
  };

function main() {
  const { w, bg, pairs, honest } = build();
  const src = Int32Array.from(w.src);
  const dst = Int32Array.from(w.dst);
  const v1 = new Float64Array(src.length).fill(1);
  const received = (weights: Float64Array) => {
    const r = new Float64Array(w.n);
    for (let i = 0; i < src.length; i++) r[dst[i]] += weights[i];
    return r;
  };
  const base = received(v1);
  const methods: [string, Method][] = [
    ['v1 (no graph rule)', () => v1],
    ['peel+share (shipped)', peel(true)],
    ['2-core only', peel(false)],
    ['SybilRank, rule seeds', sybilRank(false)],
    ['SybilRank, hand seeds', sybilRank(true)],
  ];
  const cols = [...Object.keys(pairs), ...Object.keys(honest)];
  console.log(`| method | ${cols.join(' | ')} |`);
  console.log(`|---|${cols.map(() => '---:').join('|')}|`);
  for (const [name, m] of methods) {
    const r = received(m(w.n, src, dst, v1, bg));
    const cells = [
      ...Object.values(pairs).map((p) => r[p.member] / base[p.control]),
      ...Object.values(honest).map((a) => r[a] / base[a]),
    ];
    console.log(`| ${name} | ${cells.map((x) => x.toFixed(2)).join(' | ')} |`);
  }
  console.log('(clique columns: member / honest control under v1; honest columns: method / v1)');

  // The shipped rule's time on a 1M-edge support graph of 103,000 agents (the 1M benchmark's size).
  const agents = 103_000;
  const m = 1_000_000;
  let x = 42;
  const rnd = () => (x = (x * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const bs = new Int32Array(m);
  const bd = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    bs[i] = Math.floor(rnd() ** 2 * agents);
    bd[i] = (bs[i] + 1 + Math.floor(rnd() ** 2 * (agents - 1))) % agents;
  }
  const bw = new Float64Array(m).fill(0.8);
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = process.hrtime.bigint();
    findClusters(agents, { m, src: bs, dst: bd, w: bw });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(`findClusters on 1,000,000 support edges, ${agents} agents: median ${times[2].toFixed(0)} ms of 5 runs`);
}

main();
