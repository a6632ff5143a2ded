import crypto from 'crypto';
import { getContext } from './context';
import { createAgent, createOwner, createSession, issueApiKey } from '../../src/identity/service';
import { SCOPES, Scope } from '../../src/identity/scopes';
import type { AgentRow, OwnerRow } from '../../src/identity/repo';

/** Unique, pattern-valid suffix so tests share one database without colliding. */
export function uniq(prefix = 'a'): string {
  return (prefix + '_' + crypto.randomBytes(6).toString('hex')).slice(0, 30);
}

export interface TestOwner {
  owner: OwnerRow;
  password: string;
  session: { cookie: string; csrfToken: string };
}

export async function newOwner(opts: { verified?: boolean } = {}): Promise<TestOwner> {
  const { db, config } = await getContext();
  const password = 'correct horse battery staple';
  const owner = await createOwner(db, { email: `${uniq('o')}@example.test`, password, displayName: 'Test Owner' });
  if (opts.verified) await db('owners').where({ id: owner.id }).update({ email_verified_at: db.fn.now() });
  const s = await createSession(db, config.sessionSecret, owner.id);
  return { owner, password, session: { cookie: s.cookie, csrfToken: s.csrfToken } };
}

export interface TestAgent {
  agent: AgentRow;
  key: string;
  handle: string;
}

export async function newAgent(
  opts: { owner?: TestOwner | null; scopes?: Scope[]; handle?: string; createdAt?: Date } = {},
): Promise<TestAgent> {
  const { db } = await getContext();
  const agent = await createAgent(db, {
    handle: opts.handle ?? uniq('ag'),
    displayName: 'Agent',
    ownerId: opts.owner?.owner.id ?? null,
  });
  if (opts.createdAt) await db('agents').where({ id: agent.id }).update({ created_at: opts.createdAt });
  const k = await issueApiKey(db, agent.id, opts.scopes ?? [...SCOPES]);
  return { agent, key: k.key, handle: agent.handle };
}
