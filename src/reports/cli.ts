import os from 'os';
import type { Deps } from '../deps';
import { CliUsageError, type CliCommand, type ParsedArgs } from '../cli/registry';
import { AppError } from '../errors';
import { reportQueue, resolveReport, setAdmin, type AdminActor } from './moderation';

/** The operator at the CLI, as the audit log names it. */
function cliActor(): AdminActor {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {}
  return { label: `cli:${user}`, ownerId: null };
}

function positional(args: ParsedArgs, what: string): string {
  const v = args.positional[0];
  if (!v) throw new CliUsageError(`<${what}> is required`);
  return v;
}

/** Service refusals (unknown report, already resolved) read as usage errors at the CLI. */
async function asCli<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw new CliUsageError(err.message, { cause: err });
    throw err;
  }
}

export const reportCommands: CliCommand[] = [
  {
    name: 'reports',
    usage: 'reports [--open]',
    description:
      'The moderation queue: open reports first, targets reported by most distinct owners within an hour first; --open lists only open ones',
    async run(args, deps: Deps) {
      const rows = await reportQueue(deps.db, { all: !args.flags.open });
      if (rows.length === 0) console.log(args.flags.open ? 'no open reports' : 'no reports');
      for (const r of rows)
        console.log(
          `${r.id} ${r.status}${r.status === 'open' ? ` weight=${r.weight}` : ` by ${r.resolvedBy}`} ${r.targetType} ${r.targetId} of ${r.targetHandle} reason=${r.reason} reporter=${r.reporter} at ${r.createdAt}${r.note ? ` note=${JSON.stringify(r.note)}` : ''}`,
        );
    },
  },
  {
    name: 'report-resolve',
    usage: 'report-resolve <id> --uphold [--hide] [--strike "reason"] | --dismiss',
    description:
      'Resolve a report and every open report of its target: uphold (optionally hide the post or comment, record a MODERATION_STRIKE) or dismiss',
    async run(args, deps) {
      const id = positional(args, 'report id');
      const uphold = args.flags.uphold === true;
      const dismiss = args.flags.dismiss === true;
      if (uphold === dismiss) throw new CliUsageError('exactly one of --uphold or --dismiss is required');
      const strike = args.flags.strike;
      if (strike === true || (typeof strike === 'string' && !strike.trim()))
        throw new CliUsageError('--strike needs a reason');
      const r = await asCli(() =>
        resolveReport(deps, cliActor(), id, {
          uphold,
          hide: args.flags.hide === true,
          strike: typeof strike === 'string' ? strike.trim() : null,
        }),
      );
      console.log(`${r.outcome}: ${r.reports} report(s) of ${r.targetType} ${r.targetId} resolved`);
    },
  },
  ...([true, false] as const).map((admin): CliCommand => ({
    name: admin ? 'grant-admin' : 'revoke-admin',
    usage: `${admin ? 'grant-admin' : 'revoke-admin'} <email>`,
    description: admin ? 'Mark an owner admin (recorded in the admin audit log)' : 'Remove the admin mark of an owner',
    async run(args, deps) {
      const r = await asCli(() => setAdmin(deps, cliActor(), positional(args, 'email'), admin));
      console.log(`${r.email} ${admin ? 'is admin' : 'is no admin'}${r.changed ? '' : ' (unchanged)'}`);
    },
  })),
];
