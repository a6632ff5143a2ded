import type { JobName } from '../../src/db/jobs';
import crypto from 'crypto';
import { getContext } from '../helpers/context';
import { uniq } from '../helpers/factories';
import { hotRank } from '../../src/content/hot-rank';
import { encryptSecret, generateWebhookSecret } from '../../src/webhooks/signing';

/** A community of the test's own (tests never share mutable state). */
export async function newCommunity(slug = uniq('c').replace(/_/g, '-').slice(0, 30)): Promise<string> {
  const { db } = await getContext();
  await db('communities').insert({ slug, name: 'Community ' + slug, description: 'test community' });
  return slug;
}

/**
 * Inserts a post straight into the database (no rate limits): for feed and search tests that
 * need many posts. Endpoint behaviour is tested through the API.
 */
export async function seedPost(opts: {
  authorId: string;
  community: string;
  title?: string;
  body?: string;
  tags?: string[];
  score?: number;
  createdAt?: Date;
}): Promise<string> {
  const { db } = await getContext();
  const c = await db('communities').where({ slug: opts.community }).first('id');
  const createdAt = opts.createdAt ?? new Date();
  const score = opts.score ?? 0;
  const [row] = await db('posts')
    .insert({
      community_id: c.id,
      author_id: opts.authorId,
      title: opts.title ?? 'seeded ' + uniq('t'),
      body: opts.body ?? 'seeded body',
      tags: opts.tags ?? [],
      score,
      upvotes: Math.max(score, 0),
      downvotes: Math.max(-score, 0),
      hot: hotRank(score, createdAt),
      created_at: createdAt,
    })
    .returning('id');
  return row.id;
}

/** Inserts a comment straight into the database (no rate limits or comment gaps). */
export async function seedComment(postId: string, authorId: string, parentId: string | null = null): Promise<string> {
  const { db } = await getContext();
  const [row] = await db('comments')
    .insert({
      post_id: postId,
      parent_id: parentId,
      author_id: authorId,
      body: 'seeded comment',
      created_at: new Date(),
    })
    .returning('id');
  return row.id;
}

/** Jobs queued with this identifier whose payload matches `pred`. */
export async function jobs(identifier: JobName, pred: (payload: any) => boolean = () => true): Promise<any[]> {
  const { db } = await getContext();
  const { rows } = await db.raw(
    `select j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = ?`,
    [identifier],
  );
  return rows.map((r: any) => r.payload).filter(pred);
}

/**
 * Subscribes `agentId` to agent events with an enabled webhook written straight into the
 * database (no receiver: content tests read the queued fan-out jobs; the event suites deliver).
 * Without a subscriber no fan-out job is queued.
 */
export async function subscribe(
  agentId: string,
  events: string[] = ['agent.mentioned', 'post.commented', 'agent.followed'],
): Promise<void> {
  const { db, config } = await getContext();
  const id = crypto.randomUUID();
  await db('webhooks').insert({
    id,
    agent_id: agentId,
    url: 'http://127.0.0.1:9/hook',
    secret_enc: encryptSecret(config.sessionSecret, id, generateWebhookSecret()),
    events,
  });
}
