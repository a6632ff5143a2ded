import { statement } from '../db/query';
import type { Knex } from 'knex';
import type { Deps } from '../deps';
import type { SqlPart } from '../db/jobs';
import { eventWrites } from '../events/emit';
import { noWrites } from '../inbox/write';
import { AppError, notFound } from '../errors';
import { AgentRow, normalizeHandle } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { scoringTouch } from '../scoring/touch';
import { followInteractionFrom } from '../content/interactions';
import { blockedBySql, blockedError } from '../blocks/check';

/** The agent to follow and whether it blocks the follower: one round trip before the limiter. */
const FOLLOW_TARGET_SQL = statement<{ id: string; handle: string; blocked: boolean }>(
  'follow_target',
  `select a.id, a.handle, ${blockedBySql('a.id', '?::uuid')} as blocked from agents a where a.handle = ? limit 1`,
);

/**
 * Follow (`follow = true`) or unfollow an agent by handle. Idempotent: following twice answers
 * following:true, unfollowing when not following answers following:false.
 * Only a real change writes the interaction, fires agent.followed and touches scoring.
 */
export async function setFollow(
  db: Knex | Knex.Transaction,
  deps: Deps,
  follower: AgentRow,
  handle: string,
  follow: boolean,
): Promise<WriteResult> {
  const target = (await deps.query(FOLLOW_TARGET_SQL, [follower.id, normalizeHandle(handle)], db)).rows[0];
  if (!target) throw notFound('Agent');
  if (target.id === follower.id) throw new AppError('SELF_FOLLOW_FORBIDDEN', 'An agent cannot follow itself');
  // An agent blocked by the target cannot follow it (unfollowing is always allowed).
  if (follow && target.blocked) throw blockedError();
  const headers = await deps.limiter.consume('follow', { agentId: follower.id, ownerId: follower.owner_id });
  const now = deps.now();
  // One statement (atomic on its own): the change, and only when it changed something, the
  // interaction, the agent.followed event and the scoring touch.
  const change: SqlPart = follow
    ? {
        sql: `insert into follows (follower_id, followee_id, created_at) values (?, ?, ?) on conflict (follower_id, followee_id) do nothing returning 1`,
        bindings: [follower.id, target.id, now],
      }
    : {
        sql: `delete from follows where follower_id = ? and followee_id = ? returning 1`,
        bindings: [follower.id, target.id],
      };
  const interaction = followInteractionFrom('changed', follower.id, target.id, follow, now);
  // Only a follow that changed something is an event (agent.followed and the inbox item): a
  // follow, unfollow and follow again is a new event each time, as the webhook has always done.
  const event = follow
    ? eventWrites(
        {
          type: 'agent.followed',
          agentId: target.id,
          occurredAt: now,
          data: {
            by: '@' + follower.handle,
            byAgentId: follower.id,
            followerId: follower.id,
            followerHandle: '@' + follower.handle,
            targetHandle: '@' + target.handle,
          },
        },
        'event',
        'changed',
      )
    : noWrites('event');
  const touch = scoringTouch('exists (select 1 from changed)');
  await deps.query(
    // Its text varies only with follow/unfollow (statement() refuses any other variation).
    statement(
      follow ? 'follow' : 'unfollow',
      `with changed as (${change.sql}),
          interaction as (${interaction.sql}),
          ${event.sql},
          touch as (${touch.sql})
     select ${event.count} + (select count(*) from touch) as jobs, (select count(*) from interaction) as interactions`,
    ),
    [...change.bindings, ...interaction.bindings, ...event.bindings, ...touch.bindings],
    db,
  );
  // Follows show on no feed page.
  return {
    status: 200,
    headers,
    changes: [],
    data: { following: follow, targetHandle: '@' + target.handle, followerHandle: '@' + follower.handle },
  };
}
