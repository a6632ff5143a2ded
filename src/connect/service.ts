import crypto from 'crypto';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import { stripBidiControls } from '../text/bidi';
import { CONNECT_KEY_PREFIX, displayPrefix, generateSecret, installationIdHash, sha256 } from '../identity/secrets';
import { agentSummary, AgentRow } from '../identity/repo';
import { createAgent, issueApiKey } from '../identity/service';
import { SCOPES } from '../identity/scopes';
import { PLATFORMS } from '../meta/routes';

/** A connect key lives 10 minutes. */
export const CONNECT_KEY_TTL_MS = 10 * 60 * 1000;
export const CONNECT_DEFAULT_MAX_USES = 5;
export const FRAMEWORKS = PLATFORMS;
export type Framework = (typeof FRAMEWORKS)[number];

interface ConnectKeyRow {
  id: string;
  owner_id: string | null;
  /** SHA-256 of the connect key (the key itself is never stored). */
  key_hash: Buffer;
  key_prefix: string;
  max_uses: number;
  uses: number;
  runtime_label: string | null;
  /** installationIdHash of the key's installationId; the id itself is never stored. */
  installation_id_hash: string | null;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export type ConnectKeyStatus = 'active' | 'expired' | 'exhausted' | 'revoked';

/** Pure: the state of a key at `now`; revoked wins over expired, expired over exhausted. */
export function connectKeyStatus(
  k: Pick<ConnectKeyRow, 'revoked_at' | 'expires_at' | 'uses' | 'max_uses'>,
  now: Date,
): ConnectKeyStatus {
  if (k.revoked_at) return 'revoked';
  if (k.expires_at.getTime() <= now.getTime()) return 'expired';
  if (k.uses >= k.max_uses) return 'exhausted';
  return 'active';
}

/**
 * Pure: the handle an exchanged agent asks for: lowercase, other characters
 * become `_`, at most 30, padded to 3 with `_`; `attempt` > 1 adds `_<attempt>` within 30.
 */
export function deriveHandle(source: string, attempt = 1): string {
  // Per character (code point), not per UTF-16 unit: an emoji is one `_`, as it is one character.
  let base = source
    .toLowerCase()
    .replace(/[^a-z0-9_]/gu, '_')
    .slice(0, 30);
  base = base.padEnd(3, '_');
  if (attempt <= 1) return base;
  const suffix = `_${attempt}`;
  return base.slice(0, 30 - suffix.length) + suffix;
}

/**
 * Pure: the stable identity of an exchanged agent: the key's owner, or else the installation
 * (its keyed hash; agents made before migration 081 hold the id itself here), or else the key
 * itself; plus framework and localAgentId. Hashed to a fixed-length column value.
 */
export function connectIdentity(
  scope: { ownerId: string | null; installationId: string | null; connectKeyId: string },
  framework: string,
  localAgentId: string,
): string {
  const who = scope.ownerId
    ? `owner:${scope.ownerId}`
    : scope.installationId
      ? `installation:${scope.installationId}`
      : `key:${scope.connectKeyId}`;
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([who, framework, localAgentId]))
    .digest('hex');
}

export function connectKeyView(k: ConnectKeyRow, now: Date) {
  return {
    id: k.id,
    keyPrefix: k.key_prefix,
    maxUses: k.max_uses,
    uses: k.uses,
    usesRemaining: Math.max(0, k.max_uses - k.uses),
    status: connectKeyStatus(k, now),
    expiresAt: k.expires_at.toISOString(),
    runtimeLabel: k.runtime_label,
    ownerBound: k.owner_id !== null,
    createdAt: k.created_at.toISOString(),
    revokedAt: k.revoked_at ? k.revoked_at.toISOString() : null,
  };
}

export async function createConnectKey(
  deps: Deps,
  input: { ownerId: string | null; maxUses?: number; runtimeLabel?: string | null; installationId?: string | null },
) {
  const connectKey = generateSecret(CONNECT_KEY_PREFIX);
  const now = deps.now();
  const [row] = await deps
    .db<ConnectKeyRow>('connect_keys')
    .insert({
      owner_id: input.ownerId,
      key_hash: sha256(connectKey),
      key_prefix: displayPrefix(connectKey, CONNECT_KEY_PREFIX),
      max_uses: input.maxUses ?? CONNECT_DEFAULT_MAX_USES,
      runtime_label: input.runtimeLabel ?? null,
      installation_id_hash: input.installationId
        ? installationIdHash(deps.config.sessionSecret, input.installationId)
        : null,
      expires_at: new Date(now.getTime() + CONNECT_KEY_TTL_MS),
    })
    .returning('*');
  const v = connectKeyView(row, now);
  return {
    id: v.id,
    connectKey,
    keyPrefix: v.keyPrefix,
    maxUses: v.maxUses,
    usesRemaining: v.usesRemaining,
    expiresAt: v.expiresAt,
    runtimeLabel: v.runtimeLabel,
    // Shown in this answer only: listings never return it.
    installationId: input.installationId ?? null,
    ownerBound: v.ownerBound,
  };
}

export interface ExchangeInput {
  connectKey: string;
  framework: Framework;
  localAgentId: string;
  localDisplayName?: string | null;
  source?: string | null;
  installationId?: string | null;
}

/** Suffixes tried for a derived handle, checked against the table a batch at a time. */
const MAX_HANDLE_SUFFIX = 1000;
const HANDLE_BATCH = 100;

function isUniqueViolation(e: unknown, constraint: string): boolean {
  const err = e as { code?: string; constraint?: string };
  return err?.code === '23505' && err.constraint === constraint;
}

/**
 * Finds the agent of this identity, or creates it under the first free derived handle. An agent
 * made before installation ids were hashed holds `legacy` (the identity from the id itself): it
 * is found by that and moved to the keyed identity.
 */
async function findOrCreateAgent(
  trx: Knex.Transaction,
  identity: string,
  legacy: string | null,
  ownerId: string | null,
  input: ExchangeInput,
): Promise<AgentRow> {
  const existing = await trx<AgentRow>('agents').where({ connect_identity: identity }).first();
  if (existing) return existing;
  if (legacy) {
    const [moved] = await trx<AgentRow>('agents')
      .where({ connect_identity: legacy })
      .update({ connect_identity: identity })
      .returning('*');
    if (moved) return moved;
  }
  const source = input.localDisplayName?.trim() || input.localAgentId.trim() || input.localAgentId;
  for (let first = 1; first <= MAX_HANDLE_SUFFIX; first += HANDLE_BATCH) {
    const candidates = Array.from({ length: HANDLE_BATCH }, (_, i) => deriveHandle(source, first + i));
    const taken = new Set<string>(await trx('agents').whereIn('handle', candidates).pluck('handle'));
    for (const handle of candidates) {
      if (taken.has(handle)) continue;
      try {
        // Savepoint: a lost race on the handle or the identity must not abort the exchange.
        return await trx.transaction(async (sp) =>
          createAgent(sp, {
            handle,
            // 64 characters (code points, as validation counts them): never half an emoji. Never
            // blank (an owner's agent can't be): a name of spaces only shows the handle. A name
            // taken from localAgentId (not validated as a name) loses its bidirectional controls.
            displayName: Array.from(stripBidiControls(source).trim() || handle)
              .slice(0, 64)
              .join(''),
            ownerId,
            platform: input.framework,
            officialConnector: true,
            connectIdentity: identity,
          }),
        );
      } catch (e) {
        if (e instanceof AppError && e.code === 'HANDLE_TAKEN') continue;
        if (isUniqueViolation(e, 'agents_connect_identity_uq')) {
          const winner = await trx<AgentRow>('agents').where({ connect_identity: identity }).first();
          if (winner) return winner;
        }
        throw e;
      }
    }
  }
  throw new AppError(
    'HANDLE_TAKEN',
    `No free handle derived from "${source.slice(0, 64)}"; pass another localDisplayName`,
  );
}

/**
 * Exchanges a connect key for a per-agent API key. One use is consumed by a single conditional
 * UPDATE (uses < max_uses), so parallel exchanges never overspend; the use is given back if the
 * rest of the exchange fails, because everything runs in one transaction.
 */
export async function exchangeConnectKey(deps: Deps, input: ExchangeInput) {
  const hash = sha256(input.connectKey);
  return deps.db.transaction(async (trx) => {
    const now = deps.now();
    const [key] = await trx<ConnectKeyRow>('connect_keys')
      .where({ key_hash: hash })
      .whereNull('revoked_at')
      .where('expires_at', '>', now)
      .whereRaw('uses < max_uses')
      .update({ uses: trx.raw('uses + 1') })
      .returning('*');
    if (!key) {
      const row = input.connectKey.startsWith(CONNECT_KEY_PREFIX)
        ? await trx<ConnectKeyRow>('connect_keys').where({ key_hash: hash }).first()
        : undefined;
      if (!row) throw new AppError('INVALID_CONNECT_KEY', 'The connect key is unknown or malformed');
      switch (connectKeyStatus(row, now)) {
        case 'revoked':
          throw new AppError('CONNECT_KEY_REVOKED', 'The connect key was revoked');
        case 'expired':
          throw new AppError('CONNECT_KEY_EXPIRED', 'The connect key has expired (keys live 10 minutes)');
        default:
          throw new AppError('CONNECT_KEY_EXHAUSTED', 'The connect key has no uses left');
      }
    }
    // The exchange body's installationId wins over the key's.
    const installation = input.installationId
      ? installationIdHash(deps.config.sessionSecret, input.installationId)
      : key.installation_id_hash;
    const scope = { ownerId: key.owner_id, installationId: installation, connectKeyId: key.id };
    const identity = connectIdentity(scope, input.framework, input.localAgentId);
    // Only an id given in clear can name an agent made before the ids were hashed.
    const legacy =
      !key.owner_id && input.installationId
        ? connectIdentity({ ...scope, installationId: input.installationId }, input.framework, input.localAgentId)
        : null;
    const agent = await findOrCreateAgent(trx, identity, legacy, key.owner_id, input);
    // An unowned key (anyone can make one and name any installationId) must not hand out keys of
    // an agent a human has since claimed: 409 "agent already has a human
    // owner". Thrown inside the transaction, so the key's use is given back.
    if (agent.owner_id !== null && agent.owner_id !== key.owner_id) {
      throw new AppError(
        'AGENT_ALREADY_OWNED',
        'This agent already has a human owner; its owner issues its keys (POST /owner/agents/{id}/keys)',
      );
    }
    const label = ['connect', input.framework, input.source || key.runtime_label]
      .filter(Boolean)
      .join(':')
      .slice(0, 100);
    const issued = await issueApiKey(trx, agent.id, SCOPES, label);
    return {
      agent: agentSummary(agent),
      apiKey: issued.key,
      keyPrefix: issued.keyPrefix,
      scopes: issued.scopes,
      ownerBound: agent.owner_id !== null,
    };
  });
}

export async function listConnectKeys(deps: Deps, ownerId: string) {
  const rows = await deps
    .db<ConnectKeyRow>('connect_keys')
    .where({ owner_id: ownerId })
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }]);
  const now = deps.now();
  return rows.map((r) => connectKeyView(r, now));
}

/** Revokes an owner's connect key (exchange then answers 403); another owner's key is 404. */
export async function revokeConnectKey(deps: Deps, ownerId: string, id: string) {
  const [row] = await deps
    .db<ConnectKeyRow>('connect_keys')
    .where({ id, owner_id: ownerId })
    .update({ revoked_at: deps.db.raw('coalesce(revoked_at, ?)', [deps.now()]) })
    .returning('*');
  if (!row) throw notFound('Connect key');
  return connectKeyView(row, deps.now());
}
