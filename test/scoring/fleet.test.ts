import { expect } from 'chai';
import { Knex } from 'knex';
import { Logger, run, Runner } from 'graphile-worker';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { generateNetwork } from '../../bench/gen/network';
import { runFull, runIncremental } from '../../src/scoring/service';
import { lockScoring } from '../../src/scoring/transaction';
import { writeWeekSnapshots } from '../../src/scoring/leaderboard-snapshots';
import { weekOf } from '../../src/scoring/week';
import { getWatermark, getWindowClock } from '../../src/scoring/watermark';
import { runFleetInProcess, runPartition, runProgress, RunProgress, runTotal, startRun } from '../../src/scoring/fleet';
import { SCHEDULE } from '../../src/scoring/policy';
import { buildFleetTaskList } from '../../jobs';
import { allCommands } from '../../src/cli/commands';
import { parseArgs } from '../../src/cli/registry';
import type { Deps } from '../../src/deps';

/**
 * A full recompute spread over partitions (in one process, and as graphile-worker jobs taken by
 * two runners) publishes exactly what the one-transaction full recompute writes, on a generated
 * network with every abuse pattern. Runs in its own database (the generator's handles are fixed).
 */
import * as indexNamesMigration from '../../sql/127_build_index_names';
describe('scoring: full recompute spread over the worker fleet', function () {
  this.timeout(180_000);
  let pdb: PrivateDb;
  let db: Knex;
  let url: string;
  const now = new Date();
  let deps: Deps;
  let reference: State;
  const runners: Runner[] = [];

  type State = Record<string, unknown[]>;

  /** Everything a full recompute writes, plus the live week's snapshots written from it. */
  async function state(): Promise<State> {
    await db.transaction(async (trx) => {
      await lockScoring(trx);
      await writeWeekSnapshots(trx, weekOf(now), 'live', now);
    });
    const q = async (sql: string) => (await db.raw(sql)).rows;
    return {
      edges: await q(`select interaction_id, weight, reasons, computed_at from scoring_edges order by 1`),
      edgesV2: await q(`select interaction_id, weight, reasons, computed_at from scoring_edges_v2 order by 1`),
      clusters: await q(`select agent_id, cluster, share, computed_at from scoring_clusters order by 1`),
      // reputation_v2's support graph, which incremental runs go on from (sums to 1e-9: their order may differ)
      support: await q(`select a, t, round(weight::numeric, 9) w from scoring_support order by 1, 2`),
      candidates: await q(`select agent_id, round(received::numeric, 9) r from scoring_cluster_candidates order by 1`),
      mutual: await q(`select agent_id, n from scoring_support_mutual order by 1`),
      reputations: await q(`select agent_id, score, components, computed_at from reputation_scores order by 1`),
      reputationsV2: await q(`select agent_id, score, components, computed_at from reputation_scores_v2 order by 1`),
      milestones: await q(
        `select owner_id, agent_id, scope_key, data, created_at from notifications where type = 'reputation_milestone' order by 2, 3`,
      ),
      brigadeFlags: await q(
        `select post_id, comment_id, target_agent_id, direction, votes, first_vote_at, last_vote_at, flagged_at
         from brigade_flags order by 1, 2, 4`,
      ),
      snapshots: await q(`select week, category, entries from leaderboard_snapshots order by 1, 2`),
      snapshotsV2: await q(`select week, category, entries from leaderboard_snapshots_v2 order by 1, 2`),
    };
  }

  /** Back to unscored: what any run writes is removed. */
  async function reset(): Promise<void> {
    await db.raw(`truncate scoring_edges, scoring_edges_v2, scoring_clusters, scoring_support, scoring_cluster_candidates,
      scoring_support_mutual, reputation_scores, reputation_scores_v2,
      brigade_flags, scoring_agent_facts, leaderboard_snapshots, leaderboard_snapshots_v2, scoring_watermarks`);
    await db.raw(`delete from notifications`);
    // A run a failed test left unfinished, and its jobs.
    await db.raw(`update scoring_runs set phase = 'abandoned', finished_at = now() where finished_at is null`);
    await db.raw(`delete from graphile_worker._private_jobs`);
  }

  /** The indexes of the scoring tables a publication swaps, by table. */
  async function indexNames(): Promise<Record<string, string[]>> {
    const r = await db.raw(
      `select tablename t, array_agg(indexname::text order by indexname) names from pg_indexes
       where schemaname = current_schema() and tablename in (?, ?, ?, ?, ?, ?) group by 1`,
      [
        'scoring_edges',
        'scoring_build_edges',
        'scoring_support',
        'scoring_build_support',
        'reputation_scores',
        'scoring_build_reputation',
      ],
    );
    return Object.fromEntries(r.rows.map((x: { t: string; names: string[] }) => [x.t, x.names]));
  }

  /** Each table's indexes under its own name, the built edges' included (every phase done). */
  const OWN_INDEXES = {
    scoring_edges: ['scoring_edges_computed_idx', 'scoring_edges_pkey'],
    scoring_build_edges: ['scoring_build_edges_computed_idx', 'scoring_build_edges_pkey'],
    scoring_support: ['scoring_support_pkey'],
    scoring_build_support: ['scoring_build_support_pkey'],
    reputation_scores: ['reputation_scores_clock_due_idx', 'reputation_scores_pkey'],
    scoring_build_reputation: ['scoring_build_reputation_clock_due_idx', 'scoring_build_reputation_pkey'],
  };

  function expectSame(got: State): void {
    for (const k of Object.keys(reference)) expect(got[k], k).to.deep.equal(reference[k]);
  }

  async function waitFinished(id: number, timeoutMs = 120_000): Promise<RunProgress> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const p = await runProgress(db, id);
      if (p.finished) return p;
      if (Date.now() > until) throw new Error(`run ${id} unfinished: ${JSON.stringify(p)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function startRunners(n: number): Promise<{ runs: number[] }> {
    const counts = { runs: Array.from({ length: n }, () => 0) };
    for (let i = 0; i < n; i++) {
      const r = await run({
        connectionString: url,
        concurrency: 1,
        pollInterval: 200,
        noHandleSignals: true,
        taskList: buildFleetTaskList(deps),
        logger: new Logger(() => () => undefined),
      });
      r.events.on('job:success', () => counts.runs[i]++);
      runners.push(r);
    }
    return counts;
  }

  async function stopRunners(): Promise<void> {
    while (runners.length > 0) await runners.pop()!.stop();
  }

  before(async () => {
    pdb = await createPrivateDb('svc_test_fleet', 6);
    ({ db, url } = pdb);
    await generateNetwork(db, { interactions: 30_000 }, now);
    deps = scoringDeps(db, () => now, 2);
    await runFull(deps);
    reference = await state();
  });

  afterEach(stopRunners);

  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  it('the reference exercises every rule, both models, milestones and brigade flags', () => {
    expect(reference.edges.length).to.be.greaterThan(25_000);
    expect(reference.edgesV2.length).to.be.greaterThan(0);
    expect(reference.clusters.length).to.be.greaterThan(0);
    expect(reference.reputationsV2.length).to.be.greaterThan(0);
    expect(reference.support.length).to.be.greaterThan(10_000);
    expect(reference.candidates.length).to.be.greaterThan(0);
    expect(reference.milestones.length).to.be.greaterThan(0);
    expect(reference.brigadeFlags.length).to.be.greaterThan(0);
    const codes = new Set(reference.edges.flatMap((e) => (e as { reasons: string[] }).reasons));
    for (const c of ['SAME_OWNER', 'FOLLOW_RING', 'BRIGADE_PATTERN', 'RECIPROCAL_PATTERN', 'NEW_AGENT_DISCOUNT'])
      expect(codes, c).to.include(c);
  });

  it('in one process, partitions two at a time: the same weights, reputations, milestones and snapshots, with progress', async () => {
    await reset();
    const seen: RunProgress[] = [];
    const p = await runFleetInProcess(deps, { concurrency: 2, onPartition: (x) => seen.push(x) });
    expect(p).to.include({ finished: true, phase: 'done', done: runTotal(), total: runTotal() });
    expectSame(await state());
    // Progress after each partition: partitions done / total, a rate and an ETA.
    expect(seen).to.have.length(runTotal());
    // (Two partitions ending together may read the same count.)
    expect(seen.every((x) => x.done >= 1 && x.done <= runTotal())).to.equal(true);
    expect(Math.max(...seen.map((x) => x.done))).to.equal(runTotal());
    expect(seen.every((x) => x.rate > 0 && x.etaSeconds !== null && x.total === runTotal())).to.equal(true);
    expect(seen.at(-1)!.etaSeconds).to.equal(0);
    // Published, nothing left half-built; the incremental watermark is the run's start.
    const built = await db.raw(
      `select (select count(*) from scoring_build_edges)::int e, (select count(*) from scoring_build_reputation)::int r`,
    );
    expect(built.rows[0]).to.deep.equal({ e: 0, r: 0 });
    const run = await db('scoring_runs').where({ id: p.id }).first();
    expect((await getWatermark(db))!.getTime()).to.equal(new Date(run.mark).getTime());
    expect((await getWindowClock(db))!.getTime()).to.equal(now.getTime());
    // The window's repeated pairs the runs kept are forgotten; the next incremental run counts them again.
    const pairs = () => db.raw('select * from scoring_pair_counts order by 1, 2, 3').then((r) => r.rows);
    const pairsMark = () => db('scoring_watermarks').where({ name: 'scoring_pairs' }).first();
    expect(await pairs()).to.deep.equal([]);
    expect(await pairsMark()).to.equal(undefined);
    await runIncremental(deps);
    expect(new Date((await pairsMark()).watermark).getTime()).to.equal(now.getTime());
    const counted = await db.raw(
      `select actor_agent_id, target_agent_id, kind, count(*)::int n from interactions
       where kind in ('vote', 'reply') and active and occurred_at > ?::timestamptz - interval '90 days' and occurred_at <= ?
       group by 1, 2, 3 having count(*) >= 2 order by 1, 2, 3`,
      [now, now],
    );
    expect(counted.rows.length).to.be.greaterThan(0);
    expect(await pairs()).to.deep.equal(counted.rows);
  });

  it('the clusters job finishing after every reputations partition: the same results (members scored again)', async () => {
    await reset();
    const { id } = await startRun(deps, { fleet: false });
    const parts = (n: number) => Array.from({ length: n }, (_, part) => part);
    for (const [phase, n] of [
      ['facts', SCHEDULE.partitions],
      ['weights', SCHEDULE.partitions],
      ['reputations', SCHEDULE.reputationPartitions],
    ] as const)
      for (const part of parts(n)) expect(await runPartition(deps, { run: id, phase, part })).to.equal('done');
    // Scored without the clusters so far: no agent has a v2 score of its own yet.
    expect((await db.raw('select count(*)::int n from scoring_build_reputation_v2')).rows[0].n).to.equal(0);
    // The weights partitions wrote the built edges and support pairs without indexes; the clusters job builds them.
    const unindexed = await indexNames();
    expect([unindexed.scoring_build_edges, unindexed.scoring_build_support]).to.deep.equal([undefined, undefined]);
    expect(await runPartition(deps, { run: id, phase: 'clusters', part: 0 })).to.equal('done');
    const indexed = await indexNames();
    expect(indexed.scoring_build_edges).to.deep.equal(OWN_INDEXES.scoring_build_edges);
    expect(indexed.scoring_build_support).to.deep.equal(OWN_INDEXES.scoring_build_support);
    expect(await runPartition(deps, { run: id, phase: 'publish', part: 0 })).to.equal('done');
    expectSame(await state());
    // The swap renamed every index with its table: the next run finds the names it drops and builds.
    expect(await indexNames()).to.deep.equal(OWN_INDEXES);
    const again = await runFleetInProcess(deps);
    expect(again).to.include({ finished: true, phase: 'done' });
    expect(await indexNames()).to.deep.equal(OWN_INDEXES);
  });

  it("sql/127 gives indexes left crossed by an earlier publication their own tables' names", async () => {
    // As an odd number of runs before this release left them: the non-key indexes swapped with their tables.
    await db.raw(`alter index scoring_edges_computed_idx rename to x_computed;
      alter index scoring_build_edges_computed_idx rename to scoring_edges_computed_idx;
      alter index x_computed rename to scoring_build_edges_computed_idx;
      alter index reputation_scores_clock_due_idx rename to x_due;
      alter index scoring_build_reputation_clock_due_idx rename to reputation_scores_clock_due_idx;
      alter index x_due rename to scoring_build_reputation_clock_due_idx`);
    const crossed = await db.raw(
      `select tablename::text from pg_indexes where indexname = 'scoring_edges_computed_idx'`,
    );
    expect(crossed.rows).to.deep.equal([{ tablename: 'scoring_build_edges' }]);
    await indexNamesMigration.up(db);
    expect(await indexNames()).to.deep.equal(OWN_INDEXES);
    await indexNamesMigration.up(db);
    expect(await indexNames()).to.deep.equal(OWN_INDEXES);
  });

  it('as graphile-worker jobs taken by two runners: the same results, each runner running partitions', async () => {
    await reset();
    const counts = await startRunners(2);
    const { id, started } = await startRun(deps, { fleet: true });
    expect(started).to.equal(true);
    const p = await waitFinished(id);
    expect(p.phase).to.equal('done');
    expectSame(await state());
    expect(counts.runs.reduce((a, b) => a + b, 0)).to.equal(runTotal());
    expect(
      counts.runs.every((n) => n > 0),
      `jobs per runner ${counts.runs}`,
    ).to.equal(true);
    const left = await db.raw(`select count(*)::int n from graphile_worker.jobs`);
    expect(left.rows[0].n).to.equal(0);
  });

  it('a failed partition job is retried and the run completes once', async () => {
    await reset();
    // The first attempt of weights partition 3 fails (and its work rolls back with it); a
    // sequence counts the attempts, since a rolled-back transaction does not undo nextval.
    await db.raw(`create sequence fleet_fault;
      create function fleet_fault() returns trigger language plpgsql as $$
      begin
        if new.phase = 'weights' and new.part = 3 and nextval('fleet_fault') = 1 then
          raise exception 'injected partition failure';
        end if;
        return new;
      end $$;
      create trigger fleet_fault before insert on scoring_run_partitions for each row execute function fleet_fault()`);
    try {
      await startRunners(2);
      const { id } = await startRun(deps, { fleet: true });
      const p = await waitFinished(id);
      expect(p).to.include({ phase: 'done', done: runTotal() });
      expect((await db.raw(`select last_value::int n from fleet_fault`)).rows[0].n).to.equal(2);
      // One row per partition, every phase moved on once.
      const parts = await db.raw(
        `select phase, count(*)::int n from scoring_run_partitions where run_id = ? group by 1 order by 1`,
        [id],
      );
      expect(Object.fromEntries(parts.rows.map((r: { phase: string; n: number }) => [r.phase, r.n]))).to.deep.equal({
        clusters: 1,
        facts: SCHEDULE.partitions,
        publish: 1,
        reputations: SCHEDULE.reputationPartitions,
        weights: SCHEDULE.partitions,
      });
      expectSame(await state());
    } finally {
      await db.raw(
        `drop trigger fleet_fault on scoring_run_partitions; drop function fleet_fault(); drop sequence fleet_fault`,
      );
    }
  });

  it('a partition done twice (a retried job after its commit) or of a run that moved on is skipped', async () => {
    await reset();
    const { id } = await startRun(deps, { fleet: false });
    for (let part = 0; part < SCHEDULE.partitions; part++)
      expect(await runPartition(deps, { run: id, phase: 'facts', part })).to.equal('done');
    expect(await runPartition(deps, { run: id, phase: 'weights', part: 1 })).to.equal('done');
    expect(await runPartition(deps, { run: id, phase: 'weights', part: 1 })).to.equal('skipped');
    // A phase the run has left, or not reached yet; a run that does not exist.
    expect(await runPartition(deps, { run: id, phase: 'facts', part: 0 })).to.equal('skipped');
    expect(await runPartition(deps, { run: id, phase: 'reputations', part: 0 })).to.equal('skipped');
    expect(await runPartition(deps, { run: 999_999, phase: 'weights', part: 0 })).to.equal('skipped');
    expect((await runProgress(db, id)).done).to.equal(SCHEDULE.partitions + 1);
    // One run at a time: starting again finds it; in process, it is refused.
    expect(await startRun(deps, { fleet: true })).to.deep.equal({ id, started: false, abandoned: [] });
    let err: unknown;
    try {
      await runFleetInProcess(deps);
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(new RegExp(`scoring run ${id} is still unfinished`));
    // A run without progress for too long is abandoned by the next start; its jobs are then skipped.
    await db('scoring_runs')
      .where({ id })
      .update({ progressed_at: db.raw(`clock_timestamp() - interval '${SCHEDULE.fleetStaleMinutes + 1} minutes'`) });
    const next = await startRun(deps, { fleet: false });
    expect(next.started).to.equal(true);
    expect((await db('scoring_runs').where({ id }).first()).phase).to.equal('abandoned');
    expect(await runPartition(deps, { run: id, phase: 'weights', part: 0 })).to.equal('skipped');
    await db('scoring_runs').where({ id: next.id }).update({ phase: 'abandoned', finished_at: db.fn.now() });
  });

  it('a run the database restarted during is abandoned by the jobs reading its (unlogged) built rows', async () => {
    await reset();
    const { id } = await startRun(deps, { fleet: false });
    for (const phase of ['facts', 'weights'] as const)
      for (let part = 0; part < SCHEDULE.partitions; part++)
        expect(await runPartition(deps, { run: id, phase, part })).to.equal('done');
    // The server started after the run: its rows may have been emptied by the restart.
    await db('scoring_runs')
      .where({ id })
      .update({ started_at: db.raw(`pg_postmaster_start_time() - interval '1 second'`) });
    expect(await runPartition(deps, { run: id, phase: 'reputations', part: 0 })).to.equal('skipped');
    const row = await db('scoring_runs').where({ id }).first();
    expect(row.phase).to.equal('abandoned');
    expect(row.finished_at).to.not.equal(null);
    // Nothing was published, and the next run starts at once.
    expect((await db.raw('select count(*)::int n from reputation_scores')).rows[0].n).to.equal(0);
    const next = await startRun(deps, { fleet: false });
    expect(next.started).to.equal(true);
    await db('scoring_runs').where({ id: next.id }).update({ phase: 'abandoned', finished_at: db.fn.now() });
  });

  it('the scoring_partition task refuses a payload that names no partition', async () => {
    const task = buildFleetTaskList(deps).scoring_partition;
    for (const bad of [{}, { run: 1, phase: 'facts', part: SCHEDULE.partitions }, { run: 1, phase: 'nope', part: 0 }]) {
      let err: unknown;
      try {
        await task(bad as never, {} as never);
      } catch (e) {
        err = e;
      }
      expect(String(err), JSON.stringify(bad)).to.match(/scoring_partition: payload needs run/);
    }
  });

  it('recompute-reputation --fleet starts the run and prints its progress until it is published', async () => {
    await reset();
    await startRunners(2);
    const cmd = allCommands().find((c) => c.name === 'recompute-reputation')!;
    const out: string[] = [];
    const orig = console.log;
    console.log = (...a: unknown[]) => void out.push(a.join(' '));
    try {
      await cmd.run(parseArgs(['--fleet']), deps);
    } finally {
      console.log = orig;
    }
    expect(out[0]).to.match(/^started fleet run \d+$/);
    const lines = out.filter((l) => /partitions/.test(l));
    expect(lines.length).to.be.greaterThan(0);
    for (const l of lines) expect(l).to.match(/^run \d+: \w+, \d+\/\d+ partitions, \d+\.\d\d\/s, ETA (-|\d+ s)$/);
    expect(out.at(-1)).to.match(/^fleet run \d+ published in \d+\.\d s$/);
    expectSame(await state());
    let err: unknown;
    try {
      await cmd.run(parseArgs(['--fleet', '--now']), deps);
    } catch (e) {
      err = e;
    }
    expect(String(err)).to.match(/--fleet recomputes every agent/);
  });
});
