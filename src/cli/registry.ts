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
 * Refuses an option the command does not take (a typo would otherwise be ignored, and a
 * `--detatch` would start what `--detach` only queues): the options are the `--name`s of its usage
 * line, and the `--name` form of each `<name>` argument.
 */
export function checkFlags(cmd: CliCommand, args: ParsedArgs): void {
  const known = new Set([...cmd.usage.matchAll(/--([a-z][a-z0-9-]*)|<([a-z]+)>/g)].map((m) => m[1] ?? m[2]));
  const unknown = Object.keys(args.flags).filter((f) => !known.has(f));
  if (unknown.length > 0) throw new CliUsageError(`unknown option ${unknown.map((f) => `--${f}`).join(', ')}`);
}

export function requireFlag(args: ParsedArgs, name: string): string {
  const v = args.flags[name];
  if (typeof v !== 'string' || !v) throw new CliUsageError(`--${name} <value> is required`);
  return v;
}
