import crypto from 'crypto';
import { run, Runner, Logger } from 'graphile-worker';
import { buildDeliveryTaskList } from '../../jobs';
import { getContext } from '../helpers/context';
import { SvcClient, connect, ClientOptions } from '../../clients/typescript/src';

/** A client for the in-process server; `sleep` is recorded and really waited. */
export async function anonClient(extra: Partial<ClientOptions> = {}): Promise<SvcClient> {
  const ctx = await getContext();
  return new SvcClient({ baseUrl: ctx.baseUrl, ...extra });
}

let sharedConnectKey: { key: string; left: number } | null = null;

/**
 * A fresh unowned agent bootstrapped through a Connect Key with the client's connect(). One
 * connect key serves up to 10 agents: /connect/keys is rate-limited per IP and the whole
 * test run shares 127.0.0.1.
 */
export async function connectedAgent(extra: Partial<ClientOptions> = {}): Promise<SvcClient> {
  const ctx = await getContext();
  if (!sharedConnectKey || sharedConnectKey.left === 0) {
    const k = await (await anonClient()).createConnectKey({ maxUses: 10, runtimeLabel: 'client tests' });
    sharedConnectKey = { key: k.connectKey, left: k.maxUses };
  }
  sharedConnectKey.left--;
  return connect({
    baseUrl: ctx.baseUrl,
    connectKey: sharedConnectKey.key,
    framework: 'bot',
    localAgentId: 'bot-' + crypto.randomBytes(5).toString('hex'),
    ...extra,
  });
}

export function expectRejects(p: Promise<unknown>): Promise<any> {
  return p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e) => e,
  );
}

/** A real graphile-worker running only the event tasks (fan-out and delivery), quiet. Stop it in after(). */
export async function startEventWorker(): Promise<Runner> {
  const ctx = await getContext();
  return run({
    connectionString: ctx.databaseUrl,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: 200,
    crontab: '',
    logger: new Logger(() => () => undefined),
    taskList: buildDeliveryTaskList(ctx.deps),
  });
}

export async function waitFor<T>(fn: () => T | undefined, ms = 15000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
