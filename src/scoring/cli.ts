import type { CliCommand, ParsedArgs } from '../cli/registry';
import { CliUsageError, requireFlag } from '../cli/registry';
import type { Deps } from '../deps';
import { enqueue, runFreeze, runFull, runLeaderboards } from './service';
import { parseWeek, IsoWeek, weekOf, compareWeeks } from './week';
import { recordStrike } from './strikes';
import { RunProgress, runProgress, startRun } from './fleet';
import { SCHEDULE } from './policy';

/** Admin commands of scoring: without --now they enqueue the job, with it they run inline and print a summary. */

/** The agent of a --handle flag (with or without @), or a usage error. */
export async function agentByHandle(deps: Deps, handle: string): Promise<{ id: string; handle: string }> {
  const a = await deps
    .db('agents')
    .where({ handle: handle.replace(/^@/, '').toLowerCase() })
    .first('id', 'handle');
  if (!a) throw new CliUsageError(`no agent with handle ${handle}`);
  return a;
}

function weekFlag(args: ParsedArgs, required: boolean): IsoWeek | undefined {
  const v = args.flags.week;
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string') throw new CliUsageError('--week YYYY-Www is required');
  const w = parseWeek(v);
  if (!w) throw new CliUsageError(`--week ${v} is not an existing ISO week (YYYY-Www)`);
  return w;
}

/** One progress line: partitions done / total, rate, ETA. */
export function progressLine(p: RunProgress): string {
  const eta = p.etaSeconds === null ? '-' : `${Math.ceil(p.etaSeconds)} s`;
  return `run ${p.id}: ${p.phase}, ${p.done}/${p.total} partitions, ${p.rate.toFixed(2)}/s, ETA ${eta}`;
}

/** Milliseconds between two progress reads of `recompute-reputation --fleet`. */
export const FLEET_POLL_MS = 1000;

/** Worker processes whose heartbeat is fresh (a stopped or frozen one stops beating). */
async function liveWorkers(deps: Deps): Promise<number> {
  const r = await deps.db.raw(
    `select count(*)::int n from worker_heartbeats where last_seen > now() - ? * interval '1 second'`,
    [deps.config.workerStaleSeconds],
  );
  return r.rows[0].n;
}

/**
 * Starts the fleet run, or finds the unfinished one; unless `detach`, prints its progress until it
 * is published, and says whenever no worker is running (the run waits for one). Ctrl-C stops the
 * following only: the run goes on on the workers.
 */
async function fleetRun(deps: Deps, detach: boolean): Promise<void> {
  const { id, started, abandoned } = await startRun(deps, { fleet: true });
  for (const a of abandoned)
    console.log(`abandoned fleet run ${a}: no progress for ${SCHEDULE.fleetStaleMinutes} minutes`);
  if (started) console.log(`started fleet run ${id}`);
  else if (detach)
    console.log(`fleet run ${id} is unfinished: not started again (follow it: recompute-reputation --fleet)`);
  else console.log(`following the unfinished fleet run ${id}`);
  let workers = await liveWorkers(deps);
  if (workers === 0) console.log(NO_WORKER);
  if (detach) return;
  let interrupted = false;
  let wake = () => {};
  const onInterrupt = () => {
    interrupted = true;
    wake();
  };
  process.once('SIGINT', onInterrupt);
  try {
    let last = -1;
    for (;;) {
      const p = await runProgress(deps.db, id);
      // A line per partition done (one per read at most).
      if (p.done !== last) console.log(progressLine(p));
      last = p.done;
      if (p.finished) {
        if (p.phase !== 'done') throw new Error(`fleet run ${id} was abandoned (no progress for too long)`);
        console.log(`fleet run ${id} published in ${p.elapsedSeconds.toFixed(1)} s`);
        return;
      }
      const now = await liveWorkers(deps);
      if (now === 0 && workers > 0) console.log(NO_WORKER);
      else if (now > 0 && workers === 0) console.log(`${now} worker${now === 1 ? '' : 's'} running: the run goes on`);
      workers = now;
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, FLEET_POLL_MS);
      });
      if (interrupted) {
        console.log(
          `stopped following fleet run ${id}: it goes on on the workers (recompute-reputation --fleet follows it again)`,
        );
        process.exitCode = 130;
        return;
      }
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}

const NO_WORKER = 'no worker is running: the run waits for one (npm run worker)';

export const scoringCommands: CliCommand[] = [
  {
    name: 'recompute-reputation',
    usage: 'recompute-reputation [--handle h] [--now] | --fleet [--detach]',
    description:
      'Full recompute of weights and reputation (or one agent); --fleet spreads it over the workers and follows it',
    async run(args, deps) {
      if (args.flags.detach && !args.flags.fleet) throw new CliUsageError('--detach goes with --fleet');
      if (args.flags.fleet) {
        if (args.flags.handle !== undefined || args.flags.now)
          throw new CliUsageError('--fleet recomputes every agent on the workers: without --handle or --now');
        await fleetRun(deps, !!args.flags.detach);
        return;
      }
      const agent = typeof args.flags.handle === 'string' ? await agentByHandle(deps, args.flags.handle) : undefined;
      if (!args.flags.now) {
        const job = await enqueue(deps.db, 'reputation_recompute', agent ? { agentId: agent.id } : { full: true });
        console.log(`queued ${job}${agent ? ` for @${agent.handle}` : ''}`);
        return;
      }
      const r = await runFull(deps, { agentId: agent?.id });
      console.log(
        `scored ${r.weights.interactions} interactions (facts ${r.weights.ms.facts} ms, weights ${r.weights.ms.compute} ms, write ${r.weights.ms.write} ms); ${r.reputations} reputations; ${r.milestones} milestone notifications; ${r.weights.brigadeFlags} brigade flags; ${r.ms} ms`,
      );
    },
  },
  {
    name: 'recompute-leaderboards',
    usage: 'recompute-leaderboards [--week YYYY-Www] [--now]',
    description: 'Live snapshots of the current week (an ended week is finalized if not final yet)',
    async run(args, deps) {
      const week = weekFlag(args, false);
      if (week && compareWeeks(week, weekOf(deps.now())) > 0) throw new CliUsageError('--week is in the future');
      if (!args.flags.now) {
        const job = await enqueue(
          deps.db,
          'leaderboards_refresh',
          typeof args.flags.week === 'string' ? { week: args.flags.week } : {},
        );
        console.log(`queued ${job}`);
        return;
      }
      const r = await runLeaderboards(deps, week);
      if (r.live)
        console.log(
          `live ${r.live.week}: ${Object.entries(r.live.entries)
            .map(([c, n]) => `${c} ${n}`)
            .join(', ')}; ${r.live.notifications} notifications`,
        );
      for (const f of r.finalized) console.log(`final ${f.week}: ${f.written ? 'written' : 'already final'}`);
    },
  },
  {
    name: 'finalize-week',
    usage: 'finalize-week --week YYYY-Www [--now]',
    description: 'Freeze an ended week (final snapshots never change afterwards)',
    async run(args, deps) {
      const week = weekFlag(args, true)!;
      if (compareWeeks(week, weekOf(deps.now())) >= 0) throw new CliUsageError('only an ended week can be finalized');
      if (!args.flags.now) {
        console.log(`queued ${await enqueue(deps.db, 'leaderboards_freeze', { week: args.flags.week as string })}`);
        return;
      }
      const r = await runFreeze(deps, week);
      for (const f of r)
        console.log(`final ${f.week}: ${f.written} categories written${f.written === 0 ? ' (already final)' : ''}`);
    },
  },
  {
    name: 'strike-agent',
    usage: 'strike-agent --handle h --reason text',
    description: 'Record an upheld moderation action (halves TRUST for 90 days)',
    async run(args, deps) {
      const a = await agentByHandle(deps, requireFlag(args, 'handle'));
      const reason = requireFlag(args, 'reason');
      await deps.db.transaction((trx) => recordStrike(trx, a.id, reason, deps.now()));
      console.log(`strike recorded for @${a.handle}; reputation recompute queued`);
    },
  },
  {
    name: 'list-brigade-flags',
    usage: 'list-brigade-flags',
    description: 'Targets flagged for coordinated voting (BRIGADE_PATTERN), newest first',
    async run(_args, deps) {
      const rows = await deps
        .db('brigade_flags as f')
        .join('agents as a', 'a.id', 'f.target_agent_id')
        .orderBy('f.flagged_at', 'desc')
        .limit(200)
        .select(
          'f.post_id',
          'f.comment_id',
          'a.handle',
          'f.direction',
          'f.votes',
          'f.first_vote_at',
          'f.last_vote_at',
          'f.flagged_at',
        );
      if (rows.length === 0) console.log('no brigade flags');
      for (const r of rows) {
        console.log(
          `${r.comment_id ? 'comment ' + r.comment_id : 'post ' + r.post_id} of @${r.handle}: ${r.votes} ${r.direction > 0 ? 'up' : 'down'}votes ${new Date(r.first_vote_at).toISOString()}..${new Date(r.last_vote_at).toISOString()}`,
        );
      }
    },
  },
];
