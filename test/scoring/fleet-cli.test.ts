import { expect } from 'chai';
import path from 'path';
import { spawn } from 'child_process';
import type { Knex } from 'knex';
import { createPrivateDb, PrivateDb, scoringDeps } from '../helpers/private-db';
import { allCommands } from '../../src/cli/commands';
import { checkFlags, CliUsageError, parseArgs } from '../../src/cli/registry';
import { FLEET_POLL_MS } from '../../src/scoring/cli';
import type { Deps } from '../../src/deps';

/**
 * What `recompute-reputation --fleet` tells the operator around the run itself (the run's results
 * are test/scoring/fleet.test.ts's): no worker running, a stale run abandoned, a second start,
 * Ctrl-C while following; and options the commands do not take.
 */
const REPO = path.resolve(__dirname, '../..');

describe('scoring: the fleet recompute on the command line', function () {
  this.timeout(60_000);
  let pdb: PrivateDb;
  let db: Knex;
  let deps: Deps;
  const cmd = allCommands().find((c) => c.name === 'recompute-reputation')!;

  /** The command run in process; what it printed, its exit code and what it threw. */
  async function fleet(
    argv: string[],
    during?: () => void,
  ): Promise<{ out: string[]; exitCode: unknown; err: unknown }> {
    const out: string[] = [];
    const orig = console.log;
    const code = process.exitCode;
    console.log = (...a: unknown[]) => {
      out.push(a.join(' '));
      during?.();
    };
    let err: unknown = null;
    try {
      await cmd.run(parseArgs(argv), deps);
    } catch (e) {
      err = e;
    } finally {
      console.log = orig;
    }
    const exitCode = process.exitCode;
    process.exitCode = code;
    return { out, exitCode, err };
  }

  const unfinished = async () =>
    (await db('scoring_runs').whereNull('finished_at').select('id', 'phase')).map((r) => Number(r.id));

  before(async () => {
    pdb = await createPrivateDb('svc_test_fleet_cli', 3);
    db = pdb.db;
    deps = scoringDeps(db, () => new Date(), 1);
  });

  afterEach(async () => {
    await db.raw(`update scoring_runs set phase = 'abandoned', finished_at = now() where finished_at is null`);
    await db.raw('delete from worker_heartbeats');
  });

  after(async () => {
    await deps?.scoringPool.destroy();
    await pdb?.drop();
  });

  it('--detach with no worker running: starts the run, says no worker runs, and a second start starts nothing', async () => {
    const first = await fleet(['--fleet', '--detach']);
    expect(first.err).to.equal(null);
    const [id] = await unfinished();
    expect(first.out).to.deep.equal([
      `started fleet run ${id}`,
      'no worker is running: the run waits for one (npm run worker)',
    ]);
    const second = await fleet(['--fleet', '--detach']);
    expect(second.out[0]).to.equal(
      `fleet run ${id} is unfinished: not started again (follow it: recompute-reputation --fleet)`,
    );
    expect(await unfinished()).to.deep.equal([id]);
  });

  it('a heartbeat older than WORKER_STALE_SECONDS is no running worker; a fresh one is', async () => {
    await db.raw(
      `insert into worker_heartbeats (worker_id, worker_ids, hostname, pid, last_seen)
       values ('frozen', '{}', 'h', 1, now() - ? * interval '1 second')`,
      [deps.config.workerStaleSeconds + 5],
    );
    expect((await fleet(['--fleet', '--detach'])).out).to.include(
      'no worker is running: the run waits for one (npm run worker)',
    );
    await db.raw(`update worker_heartbeats set last_seen = now()`);
    expect((await fleet(['--fleet', '--detach'])).out.join('\n')).not.to.match(/no worker is running/);
  });

  it('a run without progress for 60 minutes is abandoned by the next start, which says so', async () => {
    await fleet(['--fleet', '--detach']);
    const [stale] = await unfinished();
    await db.raw(`update scoring_runs set progressed_at = now() - interval '61 minutes' where id = ?`, [stale]);
    const r = await fleet(['--fleet', '--detach']);
    const [id] = await unfinished();
    expect(id).not.to.equal(stale);
    expect(r.out.slice(0, 2)).to.deep.equal([
      `abandoned fleet run ${stale}: no progress for 60 minutes`,
      `started fleet run ${id}`,
    ]);
    expect((await db('scoring_runs').where({ id: stale }).first('phase')).phase).to.equal('abandoned');
  });

  it('Ctrl-C while following stops the following with exit code 130; the run stays for the workers', async () => {
    let sent = false;
    const listeners = process.listenerCount('SIGINT');
    const t0 = Date.now();
    // SIGINT once the first progress line is out: the command is then waiting for the run.
    const r = await fleet(['--fleet'], () => {
      if (sent) return;
      sent = true;
      setTimeout(() => process.emit('SIGINT'), 50);
    });
    const [id] = await unfinished();
    expect(r.err).to.equal(null);
    expect(r.exitCode).to.equal(130);
    expect(r.out.at(-1)).to.equal(
      `stopped following fleet run ${id}: it goes on on the workers (recompute-reputation --fleet follows it again)`,
    );
    // Woken by the interrupt, not by the next poll.
    expect(Date.now() - t0).to.be.lessThan(FLEET_POLL_MS * 3);
    expect(process.listenerCount('SIGINT')).to.equal(listeners);
  });

  it('following: says when the last worker stops and when one runs again', async () => {
    await db.raw(`insert into worker_heartbeats (worker_id, worker_ids, hostname, pid) values ('w1', '{}', 'h', 1)`);
    let lines = 0;
    // Each line sets what the next poll sees (a knex query runs once it is awaited or then'd).
    const set = (sql: string) => void db.raw(sql).then(() => undefined);
    const r = await fleet(['--fleet'], () => {
      lines++;
      if (lines === 2) set(`update worker_heartbeats set last_seen = now() - interval '1 hour'`);
      if (lines === 3) set(`update worker_heartbeats set last_seen = now()`);
      if (lines === 4) setTimeout(() => process.emit('SIGINT'), 10);
    });
    expect(r.out.slice(1, 4)).to.deep.equal([
      r.out[1],
      'no worker is running: the run waits for one (npm run worker)',
      '1 worker running: the run goes on',
    ]);
    expect(r.out[1]).to.match(/^run \d+: facts, 0\/\d+ partitions/);
  });

  it('--detach without --fleet, and --fleet with --now, are usage errors', async () => {
    for (const argv of [['--detach'], ['--now', '--detach'], ['--fleet', '--now']]) {
      const r = await fleet(argv);
      expect(r.err, argv.join(' ')).to.be.instanceOf(CliUsageError);
    }
    expect(await unfinished()).to.deep.equal([]);
  });

  it('the CLI process interrupted while following exits with code 130, after stopping', async () => {
    const child = spawn(
      process.execPath,
      ['-r', 'tsx/cjs', path.join(REPO, 'src', 'cli.ts'), 'recompute-reputation', '--fleet'],
      {
        cwd: REPO,
        env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: pdb.url, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let sent = false;
    child.stderr.on('data', (b) => (out += b));
    const code = await new Promise<number | null>((resolve) => {
      child.stdout.on('data', (b) => {
        out += b;
        if (!sent && /^run \d+: /m.test(out)) sent = child.kill('SIGINT');
      });
      child.on('exit', (c) => resolve(c));
    });
    expect(code, out).to.equal(130);
    expect(out).to.match(/stopped following fleet run \d+/);
  });

  it('every command refuses an option its usage does not show, and takes those it shows', () => {
    const refuse = (name: string, argv: string[], why = /unknown option/) => {
      const c = allCommands().find((x) => x.name === name)!;
      expect(() => checkFlags(c, parseArgs(argv)), `${name} ${argv.join(' ')}`).to.throw(CliUsageError, why);
    };
    const take = (name: string, argv: string[]) => {
      const c = allCommands().find((x) => x.name === name)!;
      expect(() => checkFlags(c, parseArgs(argv)), `${name} ${argv.join(' ')}`).not.to.throw();
    };
    refuse('recompute-reputation', ['--fleet', '--detatch']);
    refuse('recompute-reputation', ['--fleet', '--bogus']);
    refuse('list-brigade-flags', ['--all']);
    // An option shown with a value given none (a bare --handle would recompute everyone), one
    // shown without given one, and arguments the usage does not show.
    refuse('recompute-reputation', ['--handle'], /--handle needs a value/);
    refuse('recompute-reputation', ['--handle', '--now'], /--handle needs a value/);
    refuse('recompute-reputation', ['--fleet', 'extra', '--detach'], /--fleet takes no value/);
    refuse('recompute-reputation', ['extra'], /unexpected argument extra/);
    refuse('recompute-leaderboards', ['extra'], /unexpected argument extra/);
    refuse('explain', ['--handle', 'x', 'extra'], /unexpected argument extra/);
    refuse('suspend-agent', ['x', 'y'], /unexpected argument y/);
    take('recompute-reputation', ['--fleet', '--detach']);
    take('recompute-reputation', ['--handle', 'x', '--now']);
    take('report-resolve', ['abc', '--uphold', '--hide', '--strike', 'spam']);
    // An argument shown as <handle> may also be given as --handle (onePositional).
    take('suspend-agent', ['--handle', 'x']);
    take('explain', ['--handle', 'x', '--model', 'reputation_v2']);
    take('suspend-agent', ['x']);
    take('create-community', ['slug', '--name', 'A name']);
    take('recompute-leaderboards', ['--week', '2026-W47', '--now']);
  });
});
