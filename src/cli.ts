import { boot } from './boot';
import { allCommands } from './cli/commands';
import { checkFlags, CliUsageError, parseArgs } from './cli/registry';

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
  const args = parseArgs(rest);
  try {
    checkFlags(cmd, args);
  } catch (e) {
    console.error(`${(e as Error).message}\nusage: npm run cli -- ${cmd.usage}`);
    process.exitCode = 2;
    return;
  }
  // The command's result is the output: logs only from warnings up, unless LOG_LEVEL says otherwise.
  process.env.LOG_LEVEL ??= 'warn';
  let b: Awaited<ReturnType<typeof boot>>;
  try {
    b = await boot({
      web: false,
      worker: false,
      migrate: true,
      useDevDatabase: true,
      probeDatabaseMs: 1000,
      signals: false,
    });
  } catch (e) {
    console.error(unreachable(e) ?? (e instanceof Error ? e.message : e));
    process.exit(1);
  }
  try {
    await cmd.run(args, b.deps);
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

/** What to say when no database answers, instead of the pool's timeout and its stack. */
function unreachable(e: unknown): string | null {
  const err = e as { name?: string; code?: string };
  const timedOut = err?.name === 'KnexTimeoutError' || /timeout/i.test((e as Error)?.message ?? '');
  if (!timedOut && err?.code !== 'ECONNREFUSED' && err?.code !== 'ENOTFOUND') return null;
  if (process.env.DATABASE_URL)
    return `cannot reach the database of DATABASE_URL (${err.code ?? err.name}); is it running and the address right?`;
  const port = process.env.EMBEDDED_PG_PORT || '54329';
  return `cannot reach the embedded database of npm start on 127.0.0.1:${port}: is \`npm start\` running in this checkout (with the same EMBEDDED_PG_PORT)? Or set DATABASE_URL.`;
}

void main();
