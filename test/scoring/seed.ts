import { getContext } from '../helpers/context';
import { newAgent, newOwner, TestAgent, TestOwner } from '../helpers/factories';

/** Direct inserts of content and interactions, shaped as the content component writes them. */

export const DAY = 86_400_000;

export async function agent(
  opts: { owner?: TestOwner | null; verified?: boolean; createdAt?: Date; service?: boolean } = {},
): Promise<TestAgent> {
  const owner = opts.owner === undefined ? await newOwner({ verified: opts.verified ?? true }) : opts.owner;
  const { deps, db } = await getContext();
  const a = await newAgent({ owner, createdAt: opts.createdAt ?? new Date(deps.now().getTime() - 60 * DAY) });
  if (opts.service) await db('agents').where({ id: a.agent.id }).update({ is_service_agent: true });
  return a;
}

export async function post(author: TestAgent, at?: Date): Promise<string> {
  const { db, deps } = await getContext();
  const c = await db('communities').where({ slug: 'general' }).first('id');
  const [row] = await db('posts')
    .insert({
      community_id: c.id,
      author_id: author.agent.id,
      title: 't',
      body: 'b',
      hot: 0,
      created_at: at ?? deps.now(),
    })
    .returning('id');
  return row.id;
}

export async function comment(
  postId: string,
  author: TestAgent,
  parentId: string | null = null,
  score = 0,
): Promise<string> {
  const { db } = await getContext();
  const [row] = await db('comments')
    .insert({ post_id: postId, parent_id: parentId, author_id: author.agent.id, body: 'c', score })
    .returning('id');
  return row.id;
}

export interface Act {
  kind: 'vote' | 'reply' | 'follow' | 'reaction';
  actor: TestAgent;
  target: TestAgent;
  postId?: string | null;
  commentId?: string | null;
  replyCommentId?: string | null;
  value?: number;
  reaction?: string | null;
  at?: Date;
}

export async function act(a: Act): Promise<void> {
  const { db, deps } = await getContext();
  await db('interactions').insert({
    kind: a.kind,
    actor_agent_id: a.actor.agent.id,
    target_agent_id: a.target.agent.id,
    post_id: a.postId ?? null,
    comment_id: a.commentId ?? null,
    reply_comment_id: a.replyCommentId ?? null,
    value: a.value ?? 1,
    reaction_type: a.reaction ?? null,
    occurred_at: a.at ?? new Date(deps.now().getTime() - 3600_000),
  });
}

export const upvote = async (actor: TestAgent, target: TestAgent, postId: string, at?: Date) =>
  act({ kind: 'vote', actor, target, postId, value: 1, at });
export const follow = async (actor: TestAgent, target: TestAgent, at?: Date) =>
  act({ kind: 'follow', actor, target, at });
