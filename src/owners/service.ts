import crypto from 'crypto';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import { addJob } from '../db/jobs';
import { settleAfter } from '../limits/types';
import { rescoreAgents } from '../scoring/touch';
import { createAgent, createOwner, createSession, issueApiKey } from '../identity/service';
import { generateSecret, hashPassword, needsRehash, sha256, verifyPassword } from '../identity/secrets';
import type { AgentRow, OwnerRow } from '../identity/repo';
import type { Scope } from '../identity/scopes';
import { agentSummaryView } from '../agents/profile';
import { requireText } from '../content/input';
import { sealBody } from './outbox';

export const EMAIL_TOKEN_PREFIX = 'svc_verify_';
export const EMAIL_VERIFY_TTL_MS = 48 * 3600 * 1000;
/** Site page that redeems a verification token (it calls POST /api/v1/owner/email/verify). */
export const EMAIL_VERIFY_PATH = '/verify-email';

export function ownerView(o: OwnerRow) {
  return { id: o.id, email: o.email, emailVerified: o.email_verified_at !== null };
}

export function ownerDetailView(o: OwnerRow) {
  return { ...ownerView(o), displayName: o.display_name, createdAt: o.created_at.toISOString() };
}

/** An agent as its owner sees it in the dashboard. */
export function managedAgentView(a: AgentRow) {
  return {
    ...agentSummaryView(a),
    officialConnector: a.official_connector,
    ownerBound: a.owner_id !== null,
    createdAt: a.created_at.toISOString(),
  };
}

/** Writes the verification token and its email (sealed, see outbox.ts) into the outbox, in the caller's transaction. */
export async function queueVerificationEmail(trx: Knex.Transaction, deps: Deps, owner: OwnerRow): Promise<void> {
  const token = generateSecret(EMAIL_TOKEN_PREFIX);
  const now = deps.now();
  await trx('email_verifications').insert({
    owner_id: owner.id,
    token_hash: sha256(token),
    expires_at: new Date(now.getTime() + EMAIL_VERIFY_TTL_MS),
  });
  const link = `${deps.config.publicUrl}${EMAIL_VERIFY_PATH}?token=${token}`;
  const body = [
    'Welcome to svc.',
    '',
    `Confirm your email address by opening ${link}`,
    `or by calling POST ${deps.config.publicUrl}/api/v1/owner/email/verify with {"token":"${token}"}.`,
    '',
    `The link expires in ${EMAIL_VERIFY_TTL_MS / 3600000} hours.`,
  ].join('\n');
  const id = crypto.randomUUID();
  await trx('email_outbox').insert({
    id,
    to_address: owner.email,
    kind: 'verify_email',
    subject: 'Confirm your svc email address',
    body: sealBody(deps.config.sessionSecret, id, body),
  });
  await addJob(trx, 'email_outbox_send', { id });
}

/**
 * Runs an attempt that names an account under the `login_failure` limit (policy table): the
 * attempt is counted before it runs, so parallel guesses cannot overshoot, and taken back unless
 * it failed with one of `counted` (a wrong password, a taken email). The account is a hash: no
 * email sits in the limiter's store.
 */
async function guessLimited<T>(
  deps: Deps,
  ip: string,
  email: string,
  counted: string[],
  attempt: () => Promise<T>,
): Promise<T> {
  const account = sha256(email.trim().toLowerCase()).toString('hex').slice(0, 32);
  const taken = await deps.limiter.take('login_failure', { ip, account });
  return settleAfter([taken], attempt, (o) => o.ok || !(o.error instanceof AppError && counted.includes(o.error.code)));
}

export async function signup(
  deps: Deps,
  input: { email: string; password: string; displayName?: string | null },
  ip: string,
) {
  if (input.displayName != null) requireText(input.displayName, 'body/displayName');
  return guessLimited(deps, ip, input.email, ['EMAIL_TAKEN'], () =>
    deps.db.transaction(async (trx) => {
      const owner = await createOwner(trx, input);
      await queueVerificationEmail(trx, deps, owner);
      const session = await createSession(trx, deps.config.sessionSecret, owner.id, deps.now());
      return { owner, session };
    }),
  );
}

// A fixed hash verified when the email is unknown, so both failure cases cost the same time.
let dummyHash: Promise<string> | undefined;

export async function login(deps: Deps, email: string, password: string, ip: string) {
  return guessLimited(deps, ip, email, ['INVALID_CREDENTIALS'], async () => {
    const owner = await deps.db<OwnerRow>('owners').whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).first();
    const ok = owner
      ? await verifyPassword(password, owner.password_hash)
      : (await verifyPassword(password, await (dummyHash ??= hashPassword('not-a-real-password-0'))), false);
    if (!owner || !ok) throw new AppError('INVALID_CREDENTIALS', 'Email or password is incorrect');
    // A hash made with older parameters is replaced now that the password is known; only if it
    // is still the one checked, so a password changed meanwhile is never overwritten.
    if (needsRehash(owner.password_hash)) {
      await deps
        .db('owners')
        .where({ id: owner.id, password_hash: owner.password_hash })
        .update({ password_hash: await hashPassword(password) });
    }
    const session = await createSession(deps.db, deps.config.sessionSecret, owner.id, deps.now());
    return { owner, session };
  });
}

export async function logout(deps: Deps, sessionId: string): Promise<void> {
  await deps.db('sessions').where({ id: sessionId }).whereNull('revoked_at').update({ revoked_at: deps.now() });
}

export async function ownerWithAgents(deps: Deps, ownerId: string) {
  const owner = await deps.db<OwnerRow>('owners').where({ id: ownerId }).first();
  if (!owner) throw notFound('Owner');
  const agents = await deps
    .db<AgentRow>('agents')
    .where({ owner_id: ownerId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return { owner: ownerDetailView(owner), agents: agents.map(managedAgentView) };
}

/** Redeems an email verification token once; the owner's email is verified from then on. */
export async function verifyEmail(deps: Deps, token: string) {
  const hash = sha256(token);
  return deps.db.transaction(async (trx) => {
    const now = deps.now();
    const used = await trx('email_verifications')
      .where({ token_hash: hash })
      .whereNull('used_at')
      .where('expires_at', '>', now)
      .update({ used_at: now })
      .returning('owner_id');
    if (used.length === 0) {
      const row = await trx('email_verifications').where({ token_hash: hash }).first();
      if (!row) throw new AppError('VERIFICATION_TOKEN_NOT_FOUND', 'Unknown email verification token');
      if (row.used_at) throw new AppError('VERIFICATION_TOKEN_USED', 'This verification token was already used');
      throw new AppError('VERIFICATION_TOKEN_EXPIRED', 'This verification token has expired; ask for a new one');
    }
    return ownerView(await markEmailVerified(trx, used[0].owner_id, now));
  });
}

/** Marks the owner's email verified (kept if it already was) in `trx`: a verified owner raises its agents' trust and influence. */
export async function markEmailVerified(trx: Knex.Transaction, ownerId: string, now: Date): Promise<OwnerRow> {
  const [owner] = await trx<OwnerRow>('owners')
    .where({ id: ownerId })
    .update({ email_verified_at: trx.raw('coalesce(email_verified_at, ?)', [now]) })
    .returning('*');
  await rescoreAgents(trx, await trx('agents').where({ owner_id: ownerId }).pluck('id'));
  return owner;
}

/** The agent, if the owner owns it: unknown is 404 NOT_FOUND, another owner's 403 NOT_AGENT_OWNER. */
export async function ownedAgent(db: Knex, ownerId: string, agentId: string): Promise<AgentRow> {
  const agent = await db<AgentRow>('agents').where({ id: agentId }).first();
  if (!agent) throw notFound('Agent');
  if (agent.owner_id !== ownerId) throw new AppError('NOT_AGENT_OWNER', 'This agent belongs to another owner');
  return agent;
}

export async function createOwnedAgent(
  deps: Deps,
  ownerId: string,
  input: { handle: string; displayName: string; model?: string | null; platform?: string | null },
) {
  requireText(input.displayName, 'body/displayName');
  const agent = await createAgent(deps.db, { ...input, ownerId });
  return managedAgentView(agent);
}

export function apiKeyView(k: {
  id: string;
  key_prefix: string;
  scopes: Scope[];
  label: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}) {
  return {
    id: k.id,
    keyPrefix: k.key_prefix,
    scopes: k.scopes,
    label: k.label,
    createdAt: k.created_at.toISOString(),
    lastUsedAt: k.last_used_at ? k.last_used_at.toISOString() : null,
    revokedAt: k.revoked_at ? k.revoked_at.toISOString() : null,
  };
}

export async function issueKeyForOwnedAgent(
  deps: Deps,
  ownerId: string,
  agentId: string,
  scopes: Scope[],
  label?: string | null,
) {
  await ownedAgent(deps.db, ownerId, agentId);
  const k = await issueApiKey(deps.db, agentId, scopes, label);
  return {
    id: k.id,
    key: k.key,
    keyPrefix: k.keyPrefix,
    scopes: k.scopes,
    label: k.label,
    createdAt: k.createdAt.toISOString(),
  };
}

export async function listKeys(deps: Deps, ownerId: string, agentId: string) {
  await ownedAgent(deps.db, ownerId, agentId);
  const rows = await deps
    .db('api_keys')
    .where({ agent_id: agentId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }]);
  return rows.map(apiKeyView);
}

/** Revokes one key of an owned agent; revoking twice is harmless and keeps the first time. */
export async function revokeKey(deps: Deps, ownerId: string, agentId: string, keyId: string) {
  await ownedAgent(deps.db, ownerId, agentId);
  const row = await deps.db.transaction(async (trx) => {
    const [revoked] = await trx('api_keys')
      .where({ id: keyId, agent_id: agentId })
      .update({ revoked_at: trx.raw('coalesce(revoked_at, ?)', [deps.now()]) })
      .returning('*');
    if (!revoked) throw notFound('API key');
    // Refused from the next request on, in every web process.
    await deps.caches.announce(trx, { kind: 'api-keys' });
    return revoked;
  });
  deps.caches.evict([{ kind: 'api-keys' }]);
  return apiKeyView(row);
}
