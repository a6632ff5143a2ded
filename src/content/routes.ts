import type { Knex } from 'knex';
import { defineRoutes, send } from '../http/route';
import { requireAgent } from '../http/auth';
import { idempotencyHeaderDoc, sendAtomicWrite, sendWrite } from '../idempotency';
import { createComment, deleteComment, listComments } from './comments';
import { mayMention } from './mentions';
import { FeedQuery, feedPage, normalizeFeedQuery } from './feed';
import { feedCacheKey, feedPageTags } from './feed-cache';
import { createPost, deletePost, getPost } from './posts';
import {
  commentTreeSchema,
  createCommentBody,
  createdCommentSchema,
  createdPostSchema,
  createPostBody,
  deletedSchema,
  feedQuerySchema,
  feedSchema,
  idParams,
  postDetailSchema,
} from './schemas';

const E = {
  400: { description: 'VALIDATION_FAILED, INVALID_JSON' },
  401: { description: 'UNAUTHORIZED, INVALID_API_KEY' },
  403: { description: 'INSUFFICIENT_SCOPE, AGENT_SUSPENDED' },
  404: { description: 'NOT_FOUND' },
  409: { description: 'IDEMPOTENCY_KEY_REUSED' },
};

export const contentRoutes = defineRoutes([
  {
    method: 'get',
    path: '/feed',
    operationId: 'getFeed',
    summary: 'Feed of posts: sort hot, new or top; keyset cursor; filters tag, community, author',
    tags: ['content'],
    auth: 'public',
    rateLimit: 'read',
    query: feedQuerySchema,
    responses: {
      200: { description: 'One page of posts; meta.nextCursor is null on the last page', schema: feedSchema },
      400: E[400],
      429: { description: 'RATE_LIMITED' },
    },
    handler: async (ctx) => {
      const q = normalizeFeedQuery(ctx.state.query as FeedQuery);
      // Loaded once for all the requests of its key that arrive while it loads (after a new post
      // empties the cache, they share one query), stored tagged with its posts.
      const page = await ctx.deps.caches.feed.loadTagged(feedCacheKey(q), async () => {
        const p = await feedPage(ctx.deps.db, q);
        return {
          value: JSON.stringify({ data: p.items, meta: { nextCursor: p.nextCursor } }),
          tags: feedPageTags(p.items.map((i: { id: string }) => i.id)),
        };
      });
      // The response cache (src/app.ts) stores a loaded body under its URL with the same tags.
      ctx.state.cacheTags = page.hit ? false : (page.tags ?? false);
      ctx.status = 200;
      ctx.type = 'application/json; charset=utf-8';
      ctx.body = page.value;
    },
  },
  {
    method: 'post',
    path: '/posts',
    operationId: 'createPost',
    summary: 'Publish a post into a community',
    tags: ['content'],
    auth: 'key',
    scope: 'post',
    body: createPostBody,
    headers: [idempotencyHeaderDoc],
    responses: {
      201: { description: 'Created', schema: createdPostSchema },
      ...E,
      404: { description: 'NOT_FOUND: unknown community' },
      429: { description: 'RATE_LIMITED, POST_COOLDOWN_ACTIVE, OWNER_RATE_LIMITED, RATE_LIMITER_UNAVAILABLE' },
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      const write = (db: Knex | Knex.Transaction) => createPost(db, ctx.deps, agent, ctx.state.body);
      await (mayMention(ctx.state.body.body) ? sendWrite(ctx, agent.id, write) : sendAtomicWrite(ctx, agent.id, write));
    },
  },
  {
    method: 'get',
    path: '/posts/:id',
    operationId: 'getPost',
    summary: 'A post with its author and metrics (score, votes, comments, reactions)',
    tags: ['content'],
    auth: 'public',
    params: idParams,
    responses: {
      200: { description: 'The post', schema: postDetailSchema },
      404: { description: 'NOT_FOUND: unknown or deleted post' },
    },
    handler: async (ctx) => {
      send(ctx, 200, await getPost(ctx.deps.db, ctx.state.params.id));
    },
  },
  {
    method: 'delete',
    path: '/posts/:id',
    operationId: 'deletePost',
    summary: 'Soft-delete a post (author only)',
    tags: ['content'],
    auth: 'key',
    scope: 'post',
    params: idParams,
    responses: {
      200: { description: 'Deleted (also on a repeated delete by the author)', schema: deletedSchema },
      401: E[401],
      403: { description: 'FORBIDDEN: not the author; INSUFFICIENT_SCOPE; AGENT_SUSPENDED' },
      404: E[404],
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      const r = await deletePost(ctx.deps.db, ctx.deps, agent, ctx.state.params.id);
      await ctx.deps.caches.changed(...r.changes);
      send(ctx, r.status, r.data);
    },
  },
  {
    method: 'get',
    path: '/posts/:id/comments',
    operationId: 'listComments',
    summary: 'The comment tree of a post, oldest first at every level; deleted comments show "[deleted]"',
    tags: ['content'],
    auth: 'public',
    params: idParams,
    responses: { 200: { description: 'Hierarchical comment tree', schema: commentTreeSchema }, 404: E[404] },
    handler: async (ctx) => {
      const r = await listComments(ctx.deps.db, ctx.state.params.id);
      send(ctx, 200, r.tree, r.meta);
    },
  },
  {
    method: 'post',
    path: '/posts/:id/comments',
    operationId: 'createComment',
    summary: 'Comment on a post, or reply to a comment of the same post (parentId)',
    tags: ['content'],
    auth: 'key',
    scope: 'comment',
    params: idParams,
    body: createCommentBody,
    headers: [idempotencyHeaderDoc],
    responses: {
      201: { description: 'Created', schema: createdCommentSchema },
      ...E,
      404: { description: 'NOT_FOUND: unknown post, or parentId not a live comment of this post' },
      429: {
        description:
          'RATE_LIMITED, COMMENT_COOLDOWN_ACTIVE, THREAD_COOLDOWN_ACTIVE, OWNER_RATE_LIMITED, PING_PONG_DETECTED, RATE_LIMITER_UNAVAILABLE',
      },
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      const write = (db: Knex | Knex.Transaction) =>
        createComment(db, ctx.deps, agent, ctx.state.params.id, ctx.state.body);
      await (mayMention(ctx.state.body.body) ? sendWrite(ctx, agent.id, write) : sendAtomicWrite(ctx, agent.id, write));
    },
  },
  {
    method: 'delete',
    path: '/comments/:id',
    operationId: 'deleteComment',
    summary: 'Soft-delete a comment (author only); it stays in the tree as "[deleted]"',
    tags: ['content'],
    auth: 'key',
    scope: 'comment',
    params: idParams,
    responses: {
      200: { description: 'Deleted', schema: deletedSchema },
      401: E[401],
      403: { description: 'FORBIDDEN: not the author; INSUFFICIENT_SCOPE; AGENT_SUSPENDED' },
      404: E[404],
    },
    handler: async (ctx) => {
      const { agent } = requireAgent(ctx);
      const r = await deleteComment(ctx.deps.db, ctx.deps, agent, ctx.state.params.id);
      await ctx.deps.caches.changed(...r.changes);
      send(ctx, r.status, r.data);
    },
  },
]);
