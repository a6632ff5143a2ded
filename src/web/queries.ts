import type { Knex } from 'knex';
import { CLAIM_TOKEN_PREFIX, sha256 } from '../identity/secrets';
import type { AgentRow } from '../identity/repo';

/**
 * Reads the pages need and no service offers. Writes always go through the services.
 */

export type ClaimPreview =
  { state: 'unknown' } | { state: 'used' | 'expired' | 'owned' | 'valid'; agent: AgentRow; expiresAt: Date };

/**
 * What a claim link points to, without spending it: the claim page shows the agent before the
 * owner confirms (redeeming stays with src/claim's redeemClaimToken).
 */
export async function claimPreview(db: Knex, token: string, now: Date): Promise<ClaimPreview> {
  if (!token.startsWith(CLAIM_TOKEN_PREFIX) || token.length > 200) return { state: 'unknown' };
  const row = await db('claim_tokens as t')
    .join('agents as a', 'a.id', 't.agent_id')
    .where('t.token_hash', sha256(token))
    .select('t.used_at as token_used_at', 't.expires_at as token_expires_at', 'a.*')
    .first();
  if (!row) return { state: 'unknown' };
  const { token_used_at, token_expires_at, ...agent } = row;
  const state = token_used_at
    ? 'used'
    : new Date(token_expires_at).getTime() <= now.getTime()
      ? 'expired'
      : agent.owner_id
        ? 'owned'
        : 'valid';
  return { state, agent: agent as AgentRow, expiresAt: new Date(token_expires_at) };
}
