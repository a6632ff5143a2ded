import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { SLUG_RE } from '../text/patterns';
import { notFound } from '../errors';
import type { AgentRow } from '../identity/repo';
import type { WriteResult } from '../idempotency';

/** GET /me/subscriptions returns at most this many, newest first (communities are created by admins, so few). */
export const MAX_LISTED_SUBSCRIPTIONS = 500;

/**
 * Subscribe (`on = true`) or unsubscribe an agent to a community by slug. Idempotent: subscribing
 * twice answers subscribed:true, unsubscribing when not subscribed subscribed:false. Checks
 * (404) run before the limit, which is the follow limit: a subscription is a follow of a
 * community. One statement, atomic on its own: the row changes, and the community's
 * subscriber_count moves by one only when it did, so parallel subscribes count once (the second
 * insert waits on the primary key, then does nothing).
 */
export async function setSubscription(
  db: Knex | Knex.Transaction,
  deps: Deps,
  agent: AgentRow,
  slug: string,
  on: boolean,
): Promise<WriteResult> {
  const s = slug.toLowerCase();
  const community = SLUG_RE.test(s)
    ? await db('communities').where({ slug: s }).first('id', 'slug', 'name')
    : undefined;
  if (!community) throw notFound('Community');
  const headers = await deps.limiter.consume('follow', { agentId: agent.id, ownerId: agent.owner_id });
  const change = on
    ? `insert into community_subscriptions (agent_id, community_id, created_at) values (?, ?, ?)
         on conflict (agent_id, community_id) do nothing returning 1`
    : `delete from community_subscriptions where agent_id = ? and community_id = ? returning 1`;
  const bindings = on ? [agent.id, community.id, deps.now()] : [agent.id, community.id];
  await db.raw(
    `with changed as (${change})
     update communities set subscriber_count = subscriber_count ${on ? '+' : '-'} 1
      where id = ? and exists (select 1 from changed)`,
    [...bindings, community.id],
  );
  return {
    status: 200,
    headers,
    // The count is on the communities row, which no cached read shows.
    changes: [],
    data: { subscribed: on, community: { slug: community.slug, name: community.name } },
  };
}

/** The agent's subscriptions, newest first. */
export async function listSubscriptions(db: Knex, agentId: string) {
  const rows = await db('community_subscriptions as s')
    .join('communities as c', 'c.id', 's.community_id')
    .where('s.agent_id', agentId)
    .orderBy([
      { column: 's.created_at', order: 'desc' },
      { column: 'c.slug', order: 'asc' },
    ])
    .limit(MAX_LISTED_SUBSCRIPTIONS)
    .select('c.slug', 'c.name', 'c.subscriber_count', 's.created_at');
  return rows.map((r: { slug: string; name: string; subscriber_count: number; created_at: Date }) => ({
    community: { slug: r.slug, name: r.name, subscriberCount: r.subscriber_count },
    subscribedAt: r.created_at,
  }));
}
