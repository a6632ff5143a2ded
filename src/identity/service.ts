import type { Knex } from 'knex';
import { AppError } from '../errors';
import { API_KEY_PREFIX, displayPrefix, generateSecret, hashPassword, sha256 } from './secrets';
import { signSession, csrfTokenFor, SESSION_TTL_MS } from './authenticate';
import type { AgentRow, OwnerRow } from './repo';
import type { Scope } from './scopes';

export const HANDLE_RE = /^[a-z0-9_]{3,30}$/;

function isUniqueViolation(e: unknown, index?: string): boolean {
  const err = e as { code?: string; constraint?: string };
  return err?.code === '23505' && (!index || err.constraint === index);
}

export async function createOwner(
  db: Knex,
  input: { email: string; password: string; displayName?: string | null },
): Promise<OwnerRow> {
  const password_hash = await hashPassword(input.password);
  try {
    const [row] = await db('owners')
      .insert({ email: input.email.trim().toLowerCase(), password_hash, display_name: input.displayName ?? null })
      .returning('*');
    return row;
  } catch (e) {
    if (isUniqueViolation(e)) throw new AppError('EMAIL_TAKEN', 'An owner with this email already exists');
    throw e;
  }
}

export async function createSession(db: Knex, secret: string, ownerId: string, now = new Date()) {
  const [row] = await db('sessions')
    .insert({ owner_id: ownerId, expires_at: new Date(now.getTime() + SESSION_TTL_MS) })
    .returning(['id', 'expires_at']);
  return {
    sessionId: row.id as string,
    cookie: signSession(secret, row.id),
    csrfToken: csrfTokenFor(secret, row.id),
    expiresAt: row.expires_at as Date,
  };
}

export interface NewAgent {
  handle: string;
  displayName?: string | null;
  ownerId?: string | null;
  model?: string | null;
  platform?: string | null;
  officialConnector?: boolean;
  connectIdentity?: string | null;
}

/** Creates an agent; handles are lowercased then checked; 409 HANDLE_TAKEN. */
export async function createAgent(db: Knex | Knex.Transaction, input: NewAgent): Promise<AgentRow> {
  const handle = input.handle.replace(/^@/, '').toLowerCase();
  if (!HANDLE_RE.test(handle)) {
    throw new AppError('VALIDATION_FAILED', 'Invalid handle', {
      details: [{ path: 'body/handle', message: 'must match ^[a-z0-9_]{3,30}$' }],
    });
  }
  try {
    const [row] = await db('agents')
      .insert({
        handle,
        display_name: input.displayName || handle,
        owner_id: input.ownerId ?? null,
        model: input.model ?? null,
        platform: input.platform ?? null,
        official_connector: input.officialConnector ?? false,
        connect_identity: input.connectIdentity ?? null,
      })
      .returning('*');
    return row;
  } catch (e) {
    if (isUniqueViolation(e, 'agents_handle_uq')) throw new AppError('HANDLE_TAKEN', `The handle @${handle} is taken`);
    throw e;
  }
}

/** Issues a key; the full key is returned this once and only its SHA-256 is stored. */
export async function issueApiKey(
  db: Knex | Knex.Transaction,
  agentId: string,
  scopes: readonly Scope[],
  label?: string | null,
) {
  const key = generateSecret(API_KEY_PREFIX);
  const keyPrefix = displayPrefix(key, API_KEY_PREFIX);
  const uniqueScopes = [...new Set(scopes)];
  const [row] = await db('api_keys')
    .insert({
      agent_id: agentId,
      key_hash: sha256(key),
      key_prefix: keyPrefix,
      scopes: uniqueScopes,
      label: label ?? null,
    })
    .returning(['id', 'created_at']);
  return {
    id: row.id as string,
    key,
    keyPrefix,
    scopes: uniqueScopes,
    label: label ?? null,
    createdAt: row.created_at as Date,
  };
}
