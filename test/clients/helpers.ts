import crypto from 'crypto';
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
