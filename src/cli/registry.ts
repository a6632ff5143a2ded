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

export function requireFlag(args: ParsedArgs, name: string): string {
  const v = args.flags[name];
  if (typeof v !== 'string' || !v) throw new CliUsageError(`--${name} <value> is required`);
  return v;
}
