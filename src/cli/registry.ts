import type { Deps } from '../deps';

export interface CliCommand {
  name: string;
  usage: string;
  description: string;
  run(args: ParsedArgs, deps: Deps): Promise<void>;
}

export interface ParsedArgs {
  positional: string[];
  flags: Record<string, string | true>;
}

export class CliUsageError extends Error {}

/** `--week 2026-W47 --now x y` → { flags: {week:'2026-W47', now:true}, positional: [x, y] } */
export function parseArgs(argv: string[]): ParsedArgs {
  const out: ParsedArgs = { positional: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) out.flags[a.slice(2, eq)] = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) out.flags[a.slice(2)] = argv[++i];
      else out.flags[a.slice(2)] = true;
    } else out.positional.push(a);
  }
  return out;
}

/**
 * Refuses what the command's usage line does not show (a typo would otherwise be ignored, a
 * `--detatch` would start what `--detach` only queues, and a `--handle` without its value would
 * recompute everyone): an option that is not one of its `--name`s or the `--name` form of one of
 * its `<name>` arguments, an option shown with a value (`--handle h`) given none or one shown
 * without given one, and more arguments than its `<name>`s.
 */
export function checkFlags(cmd: CliCommand, args: ParsedArgs): void {
  const usage = cmd.usage;
  const positional = [...usage.matchAll(/(?:^|\s)<([a-z]+)>/g)].map((m) => m[1]);
  const known = new Set([...usage.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]).concat(positional));
  const valued = new Set([...usage.matchAll(/--([a-z][a-z0-9-]*) (?![[|]|--)/g)].map((m) => m[1]).concat(positional));
  const unknown = Object.keys(args.flags).filter((f) => !known.has(f));
  if (unknown.length > 0) throw new CliUsageError(`unknown option ${unknown.map((f) => `--${f}`).join(', ')}`);
  for (const [f, v] of Object.entries(args.flags)) {
    if (valued.has(f) && v === true) throw new CliUsageError(`--${f} needs a value`);
    if (!valued.has(f) && v !== true) throw new CliUsageError(`--${f} takes no value (got "${v}")`);
  }
  if (args.positional.length > positional.length)
    throw new CliUsageError(`unexpected argument ${args.positional.slice(positional.length).join(' ')}`);
}

export function requireFlag(args: ParsedArgs, name: string): string {
  const v = args.flags[name];
  if (typeof v !== 'string' || !v) throw new CliUsageError(`--${name} <value> is required`);
  return v;
}
