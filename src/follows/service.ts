import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { emitEvent } from '../events/emit';
import { AppError, notFound } from '../http/errors';
import { AgentRow, normalizeHandle } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { enqueueScoringTouch } from '../scoring/touch';
import { upsertFollowInteraction } from '../content/interactions';

/**
 * Follow (`follow = true`) or unfollow an agent by handle. Idempotent: following twice answers
 * following:true, unfollowing when not following answers following:false (decisions §12).
 * Only a real change writes the interaction, fires agent.followed and touches scoring.
 */
export async function setFollow(trx: Knex.Transaction, deps: Deps, follower: AgentRow, handle: string, follow: boolean): Promise<WriteResult> {
  const target = await trx('agents').where({ handle: normalizeHandle(handle) }).first('id', 'handle');
  if (!target) throw notFound('Agent');
  if (target.id === follower.id) throw new AppError(400, 'SELF_FOLLOW_FORBIDDEN', 'An agent cannot follow itself');
  const headers = await deps.limiter.consume('follow', { agentId: follower.id, ownerId: follower.owner_id });
  const now = deps.now();
  let changed: boolean;
  if (follow) {
    const ins = await trx('follows').insert({ follower_id: follower.id, followee_id: target.id, created_at: now }).onConflict(['follower_id', 'followee_id']).ignore().returning('follower_id');
    changed = ins.length > 0;
  } else {
    changed = (await trx('follows').where({ follower_id: follower.id, followee_id: target.id }).del()) > 0;
  }
  if (changed) {
    await upsertFollowInteraction(trx, follower.id, target.id, follow, now);
    if (follow) {
      await emitEvent(trx, {
        type: 'agent.followed',
        agentId: target.id,
        occurredAt: now,
        data: { followerId: follower.id, followerHandle: '@' + follower.handle, targetHandle: '@' + target.handle },
      });
    }
    await enqueueScoringTouch(trx, now);
  }
  return { status: 200, headers, data: { following: follow, targetHandle: '@' + target.handle, followerHandle: '@' + follower.handle } };
}
