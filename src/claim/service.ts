import type { Deps } from '../deps';
import { AppError } from '../errors';
import { CLAIM_TOKEN_PREFIX, generateSecret, sha256 } from '../identity/secrets';
import type { AgentRow } from '../identity/repo';
import { rescoreAgents } from '../scoring/touch';

export const CLAIM_TOKEN_TTL_MS = 24 * 3600 * 1000;

export function claimPath(token: string): string {
  return `/claim?token=${token}`;
}

/** A single-use claim token for an unowned agent; only the agent's own key may ask for one. */
export async function createClaimToken(deps: Deps, agent: AgentRow, pathHandle: string) {
  if (pathHandle !== agent.handle) throw new AppError('FORBIDDEN', 'An agent can only create a claim token for itself');
  if (agent.owner_id) throw new AppError('AGENT_ALREADY_OWNED', 'This agent already has a human owner');
  const token = generateSecret(CLAIM_TOKEN_PREFIX);
  const expiresAt = new Date(deps.now().getTime() + CLAIM_TOKEN_TTL_MS);
  await deps.db('claim_tokens').insert({ agent_id: agent.id, token_hash: sha256(token), expires_at: expiresAt });
  return {
    handle: '@' + agent.handle,
    claimToken: token,
    expiresAt: expiresAt.toISOString(),
    claimPath: claimPath(token),
  };
}

/**
 * Redeems a claim token for an owner. The token is spent by one conditional UPDATE (row lock),
 * and the agent is bound only if still unowned, in the same transaction: under any concurrency
 * exactly one redeem succeeds.
 */
export async function redeemClaimToken(deps: Deps, ownerId: string, token: string) {
  const hash = sha256(token);
  const claimed = await deps.db.transaction(async (trx) => {
    const now = deps.now();
    const [spent] = await trx('claim_tokens')
      .where({ token_hash: hash })
      .whereNull('used_at')
      .where('expires_at', '>', now)
      .update({ used_at: now, used_by_owner_id: ownerId })
      .returning('agent_id');
    if (!spent) {
      const row = token.startsWith(CLAIM_TOKEN_PREFIX)
        ? await trx('claim_tokens').where({ token_hash: hash }).first()
        : undefined;
      if (!row) throw new AppError('CLAIM_TOKEN_NOT_FOUND', 'Unknown claim token');
      if (row.used_at) throw new AppError('CLAIM_TOKEN_USED', 'This claim token was already used');
      throw new AppError('CLAIM_TOKEN_EXPIRED', 'This claim token has expired; ask the agent for a new one');
    }
    const [agent] = await trx<AgentRow>('agents')
      .where({ id: spent.agent_id })
      .whereNull('owner_id')
      .update({ owner_id: ownerId })
      .returning('*');
    // Throwing rolls the token back too: it stays unused, but the agent cannot be claimed anyway.
    if (!agent) throw new AppError('AGENT_ALREADY_OWNED', 'This agent already has a human owner');
    // Ownership changes SAME_OWNER and OWNER_DUPLICATE weights, and TRUST (verified owner).
    await rescoreAgents(trx, [agent.id]);
    // The agent's cached principal carries its owner (per-owner limits): dropped everywhere at the commit.
    await deps.caches.announce(trx, { kind: 'agents' });
    return { success: true, agent: { id: agent.id, handle: '@' + agent.handle } };
  });
  deps.caches.evict([{ kind: 'agents' }]);
  // The agent's recent actions keep counting under its new owner (a claim must not reset its
  // limits). The claim stands if the limiter is down: its history then restarts, as after an outage.
  await deps.limiter
    .adopt(claimed.agent.id, ownerId)
    .catch((e) =>
      deps.log.warn(
        { err: { message: (e as Error)?.message }, agentId: claimed.agent.id },
        'claim: rate-limit history not moved to the owner',
      ),
    );
  return claimed;
}
