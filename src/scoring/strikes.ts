import type { Knex } from 'knex';
import { enqueue } from './service';
import { enqueueScoringTouch, markAgentsChanged } from './touch';

/**
 * Records an upheld moderation action against an agent (MODERATION_STRIKE: each one in the last
 * 90 days halves its TRUST) and queues its reputation recompute, in the caller's transaction.
 */
export async function recordStrike(trx: Knex.Transaction, agentId: string, reason: string, at: Date): Promise<void> {
  await trx('moderation_actions').insert({ agent_id: agentId, kind: 'strike', reason, upheld: true, created_at: at });
  await markAgentsChanged(trx, [agentId]);
  await enqueue(trx, 'reputation_recompute', { agentId });
  await enqueueScoringTouch(trx);
}
