import type { JobName } from '../../src/db/jobs';
import { expect } from 'chai';
import fs from 'fs';
import path from 'path';
import { parseCrontab } from 'graphile-worker';
import { getContext } from '../helpers/context';
import { cli } from '../helpers/cli';
import { CliUsageError } from '../../src/cli/registry';
import { buildDeliveryTaskList, buildFleetTaskList, buildTaskList } from '../../jobs';
import { agent, follow, post, upvote } from './seed';
import { computeBatch, EdgeBatch } from '../../src/scoring/weights';
import { ScoringPool } from '../../src/scoring/pool';
import { runFull } from '../../src/scoring/service';

async function queued(task: JobName): Promise<number> {
  const { db } = await getContext();
  const r = await db.raw(`select count(*)::int n from graphile_worker.jobs where task_identifier = ?`, [task]);
  return r.rows[0].n;
}

describe('scoring: admin CLI, jobs and crontab', function () {
  this.timeout(30000);
  it('without --now commands enqueue their job; with --now they run inline and print a summary', async () => {
    const a = await agent();
    const b = await agent();
    await upvote(a, b, await post(b));
    expect(await cli(`recompute-reputation --handle ${b.handle}`)).to.match(/queued reputation_recompute/);
    expect(await queued('reputation_recompute')).to.be.greaterThan(0);
    expect(await cli('recompute-leaderboards')).to.match(/queued leaderboards_refresh/);
    expect(await queued('leaderboards_refresh')).to.be.greaterThan(0);
    expect(await cli(`recompute-reputation --handle ${b.handle} --now`)).to.match(
      /scored \d+ interactions .* reputations/,
    );
    expect(await cli('recompute-leaderboards --now')).to.match(/^live \d{4}-W\d{2}: overall \d+/);
    const ex = JSON.parse(await cli(`explain --handle ${b.handle}`));
    expect(ex.explanation.quality.interactions).to.equal(1);
  });

  it('finalize-week refuses a current, future or impossible week; strike-agent records a moderation action', async () => {
    for (const bad of ['finalize-week --week 2025-W53', 'finalize-week', 'finalize-week --week 2999-W01']) {
      let err: unknown;
      try {
        await cli(bad);
      } catch (e) {
        err = e;
      }
      expect(err, bad).to.be.instanceOf(CliUsageError);
    }
    const { db } = await getContext();
    const a = await agent();
    expect(await cli(`strike-agent --handle ${a.handle} --reason spam`)).to.match(/strike recorded/);
    const rows = await db('moderation_actions').where({ agent_id: a.agent.id });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ kind: 'strike', reason: 'spam', upheld: true });
    expect(await cli('list-brigade-flags')).to.be.a('string');
  });

  it('registers the scoring tasks and the crontab schedules them with ids, only tasks of the job map', async () => {
    const { deps } = await getContext();
    const tasks = { ...buildTaskList(deps), ...buildDeliveryTaskList(deps), ...buildFleetTaskList(deps) };
    const scoring: JobName[] = [
      'scoring_incremental',
      'reputation_recompute',
      'scoring_partition',
      'leaderboards_refresh',
      'leaderboards_freeze',
    ];
    for (const t of scoring) expect(tasks[t], t).to.be.a('function');
    const items = parseCrontab(fs.readFileSync(path.join(__dirname, '../../jobs/crontab'), 'utf8'));
    const ids = items.map((i) => i.identifier);
    expect(ids).to.include.members(['leaderboards_refresh', 'reputation_recompute', 'leaderboards_freeze']);
    // A crontab line naming a task the worker does not have would only fail at its hour.
    for (const i of items) expect(Object.keys(tasks), i.identifier).to.include(i.identifier);
    const freeze = items.find((i) => i.identifier === 'leaderboards_freeze')!;
    expect(freeze.match).to.be.a('function');
  });

  it('the piscina pool computes exactly what the pure function computes', async () => {
    const n = 5000;
    const mk = (): EdgeBatch => ({
      kind: Uint8Array.from({ length: n }, (_, i) => i % 4),
      flags: Int32Array.from({ length: n }, (_, i) => (i % 97 === 0 ? 1 << 7 : 0)),
      pairK: Int32Array.from({ length: n }, (_, i) => 1 + (i % 7)),
      verified: Uint8Array.from({ length: n }, (_, i) => i % 2),
      ageDays: Float32Array.from({ length: n }, (_, i) => i % 11),
      extOwners: Int32Array.from({ length: n }, (_, i) => i % 5),
      group: Int32Array.from({ length: n }, (_, i) => (i % 4 === 0 ? Math.floor(i / 40) : -1)),
      t: Float64Array.from({ length: n }, (_, i) => i * 7),
    });
    const inline = computeBatch(mk());
    const pool = new ScoringPool(2);
    const pooled = await pool.run(mk(), 0);
    expect(Array.from(pooled.weights)).to.deep.equal(Array.from(inline.weights));
    expect(Array.from(pooled.masks)).to.deep.equal(Array.from(inline.masks));
    await pool.destroy();
  });

  it('two concurrent full runs serialise on the advisory lock and leave one consistent result', async () => {
    const { deps, db } = await getContext();
    // Own world: other suites write interactions into the same database meanwhile, so totals
    // may differ between the two runs; this test's own rows must not.
    const a = await agent();
    const b = await agent();
    const c = await agent();
    await upvote(a, b, await post(b));
    await upvote(c, b, await post(b));
    await follow(a, b);
    await follow(c, b);
    const own = (await db('interactions').whereIn('actor_agent_id', [a.agent.id, c.agent.id]).select('id')).map(
      (r) => r.id,
    );
    expect(own).to.have.length(4);
    const edges = async () =>
      (
        await db('scoring_edges')
          .whereIn('interaction_id', own)
          .orderBy('interaction_id')
          .select('interaction_id', 'weight', 'reasons')
      ).map((r) => ({ ...r }));
    const rep = async () =>
      (await db('reputation_scores').where({ agent_id: b.agent.id }).first('score', 'components')) ?? null;

    const [x, y] = await Promise.all([runFull(deps), runFull(deps)]);
    for (const r of [x, y]) expect(r.weights.interactions).to.be.at.least(own.length);
    // No interaction is scored twice (the whole table: a unique edge per interaction).
    const dup = await db.raw('select count(*)::int n, count(distinct interaction_id)::int d from scoring_edges');
    expect(dup.rows[0].n).to.equal(dup.rows[0].d);
    // One edge per own interaction, and exactly what one more (serial) run computes.
    const afterConcurrent = await edges();
    expect(afterConcurrent).to.have.length(own.length);
    const repConcurrent = await rep();
    expect(repConcurrent).to.not.equal(null);
    await runFull(deps);
    expect(await edges()).to.deep.equal(afterConcurrent);
    expect(await rep()).to.deep.equal(repConcurrent);
  });
});
