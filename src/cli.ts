import { boot } from './boot';
import { allCommands } from './cli/commands';
import { CliUsageError, parseArgs } from './cli/registry';

/** Admin CLI: `npm run cli -- <command> [args]`; `help` lists commands. */
async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  const commands = allCommands();
  if (!name || name === 'help' || name === '--help') {
    console.log('usage: npm run cli -- <command> [options]\n');
    for (const c of commands) console.log(`  ${c.usage.padEnd(58)} ${c.description}`);
    return;
  }
  const cmd = commands.find((c) => c.name === name);
  if (!cmd) {
    console.error(`unknown command "${name}"; try: npm run cli -- help`);
    process.exitCode = 2;
    return;
  }
  // The command's result is the output: logs only from warnings up, unless LOG_LEVEL says otherwise.
  process.env.LOG_LEVEL ??= 'warn';
  const b = await boot({ web: false, worker: false, migrate: true, useDevDatabase: true });
  try {
    await cmd.run(parseArgs(rest), b.deps);
  } catch (e) {
    if (e instanceof CliUsageError) {
      console.error(`${e.message}\nusage: npm run cli -- ${cmd.usage}`);
      process.exitCode = 2;
    } else {
      console.error(e instanceof Error ? e.message : e);
      process.exitCode = 1;
    }
  } finally {
    await b.stop();
  }
}

void main();
