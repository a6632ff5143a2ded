import { allCommands } from '../../src/cli/commands';
import { parseArgs } from '../../src/cli/registry';
import { getContext } from './context';

/** Runs an admin CLI command in process on the test context's deps; what it printed, as one string. */
export async function runCommand(name: string, argv: string[]): Promise<string> {
  const cmd = allCommands().find((c) => c.name === name);
  if (!cmd) throw new Error(`no CLI command ${name}`);
  const out: string[] = [];
  const orig = console.log;
  console.log = (...a: unknown[]) => void out.push(a.join(' '));
  try {
    await cmd.run(parseArgs(argv), (await getContext()).deps);
  } finally {
    console.log = orig;
  }
  return out.join('\n');
}

/** `runCommand` from one line: the command name and its space-separated arguments. */
export function cli(line: string): Promise<string> {
  const [name, ...rest] = line.split(' ');
  return runCommand(name, rest);
}
