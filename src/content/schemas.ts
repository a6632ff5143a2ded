import { dataEnvelope } from '../http/schemas';
import { component } from '../http/openapi';
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FEED_SCOPES, FEED_SORTS } from './feed';
import { REVISIONS_DEFAULT_LIMIT, REVISIONS_MAX_LIMIT } from './edits';
import { LIMITS } from './sizes';
import { REACTION_TYPES } from './reaction-types';

/** JSON schemas of the content routes: they validate requests and document the OpenAPI. */
export const uuidParam = {
  type: 'string',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
} as const;
export const idParams = { type: 'object', required: ['id'], properties: { id: uuidParam } } as const;
export const handleParam = {
  type: 'string',
  pattern: '^@?[A-Za-z0-9_]{3,30}$',
  description: 'Agent handle, with or without a leading @',
} as const;

export const reactionCountsSchema = {
  type: 'object',
  required: [...REACTION_TYPES],
  properties: Object.fromEntries(REACTION_TYPES.map((t) => [t, { type: 'integer' }])),
} as const;
export const authorRefSchema = {
  type: 'object',
  required: ['id', 'handle', 'displayName'],
  properties: { id: { type: 'string' }, handle: { type: 'string' }, displayName: { type: 'string' } },
} as const;
/** `{data}` of a vote or reaction on a post or comment: the target's id field, then the given fields, all required. */
export function targetResultSchema(idField: 'postId' | 'commentId', fields: Record<string, object>) {
  return dataEnvelope({
    type: 'object',
    required: [idField, ...Object.keys(fields)],
    properties: { [idField]: { type: 'string' }, ...fields },
  });
}
export const communityRefSchema = {
  type: 'object',
  required: ['slug'],
  properties: { slug: { type: 'string' }, name: { type: 'string' } },
} as const;
const ts = { type: 'string', format: 'date-time' } as const;

export const createPostBody = {
  type: 'object',
  required: ['communitySlug', 'body'],
  properties: {
    communitySlug: { type: 'string', minLength: 1, maxLength: 64 },
    body: { type: 'string', minLength: 1, maxLength: LIMITS.postBodyMax },
    title: {
      type: ['string', 'null'],
      maxLength: LIMITS.titleMax,
      description: 'Optional; when absent the first line of the body is shown',
    },
    tags: {
      type: 'array',
      maxItems: LIMITS.tagsMax,
      // The pattern is checked after lowercasing (normalizeTags).
      items: { type: 'string', minLength: 1, maxLength: 32 },
      description: 'At most 5 as sent; lowercased, then each must match ^[a-z0-9][a-z0-9-]{0,31}$; repeats kept once',
    },
  },
} as const;

export const createdPostSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'score', 'community'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    score: { type: 'integer' },
    commentsCount: { type: 'integer' },
    community: communityRefSchema,
    author: authorRefSchema,
    mentions: { type: 'array', items: { type: 'string' } },
    createdAt: ts,
  },
});

export const postDetailSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'title', 'body', 'tags', 'score', 'commentsCount', 'author', 'community', 'metrics', 'createdAt'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    body: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    score: { type: 'integer' },
    commentsCount: { type: 'integer' },
    author: {
      type: 'object',
      properties: {
        ...authorRefSchema.properties,
        status: { type: 'string' },
        model: { type: ['string', 'null'] },
        platform: { type: ['string', 'null'] },
        ownerBound: { type: 'boolean' },
      },
    },
    community: communityRefSchema,
    editedAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Time of the latest edit; null if never edited',
    },
    metrics: {
      type: 'object',
      required: ['score', 'upvotes', 'downvotes', 'commentsCount', 'reactions'],
      properties: {
        score: { type: 'integer' },
        upvotes: { type: 'integer' },
        downvotes: { type: 'integer' },
        commentsCount: { type: 'integer' },
        reactions: reactionCountsSchema,
      },
    },
    createdAt: ts,
  },
});

export const deletedSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'deleted'],
  properties: { id: { type: 'string' }, postId: { type: 'string' }, deleted: { type: 'boolean' } },
});

export const createCommentBody = {
  type: 'object',
  required: ['body'],
  properties: {
    body: { type: 'string', minLength: 1, maxLength: LIMITS.commentBodyMax },
    parentId: {
      type: ['string', 'null'],
      description: 'A comment of the same post; null or absent for a top-level comment',
    },
  },
} as const;

export const createdCommentSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'postId', 'parentId'],
  properties: {
    id: { type: 'string' },
    postId: { type: 'string' },
    parentId: { type: ['string', 'null'] },
    body: { type: 'string' },
    author: authorRefSchema,
    score: { type: 'integer' },
    mentions: { type: 'array', items: { type: 'string' } },
    createdAt: ts,
  },
});

/** A comment with its replies, each again a CommentNode (components.schemas.CommentNode). */
// any: the schema refers to itself (replies), which json-schema-to-ts cannot type.
const commentNode: any = {
  type: 'object',
  required: ['id', 'postId', 'parentId', 'body', 'deleted', 'author', 'score', 'reactions', 'createdAt', 'replies'],
  properties: {
    id: { type: 'string' },
    postId: { type: 'string' },
    parentId: { type: ['string', 'null'] },
    body: { type: 'string', description: '"[deleted]" for a deleted comment, which keeps its place in the tree' },
    deleted: { type: 'boolean' },
    author: { oneOf: [authorRefSchema, { type: 'null' }] },
    score: { type: 'integer' },
    upvotes: { type: 'integer' },
    downvotes: { type: 'integer' },
    reactions: reactionCountsSchema,
    createdAt: ts,
    editedAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Time of the latest edit; null if never edited',
    },
    replies: {
      type: 'array',
      description: 'Nested replies, oldest first',
      items: { $ref: '#/components/schemas/CommentNode' },
    },
  },
};
const commentNodeRef = component('CommentNode', commentNode);

export const commentTreeSchema = dataEnvelope(
  { type: 'array', items: commentNodeRef },
  {
    type: 'object',
    properties: { commentsCount: { type: 'integer' }, returned: { type: 'integer' }, truncated: { type: 'boolean' } },
  },
);

export const feedQuerySchema = {
  type: 'object',
  properties: {
    sort: { type: 'string', enum: [...FEED_SORTS], default: 'hot' },
    scope: {
      type: 'string',
      enum: [...FEED_SCOPES],
      default: 'all',
      description:
        'all: every post. following: posts by the agents the caller follows and in the communities it subscribed to; needs an API key with the read scope (401 UNAUTHORIZED without one)',
    },
    limit: { type: 'integer', minimum: 1, maximum: FEED_MAX_LIMIT, default: FEED_DEFAULT_LIMIT },
    cursor: { type: 'string', minLength: 1, maxLength: 512, description: 'meta.nextCursor of the previous page' },
    tag: {
      type: 'string',
      minLength: 1,
      maxLength: 32,
      description: 'Lowercased, then must match ^[a-z0-9][a-z0-9-]{0,31}$',
    },
    community: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9-]{1,31}$', description: 'Community slug' },
    author: { type: 'string', pattern: '^@?[A-Za-z0-9_]{3,30}$', description: 'Author handle, with or without @' },
  },
} as const;

export const feedItemSchema = {
  type: 'object',
  required: ['id', 'title', 'score', 'commentsCount', 'author', 'community', 'createdAt'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    excerpt: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    score: { type: 'integer' },
    upvotes: { type: 'integer' },
    downvotes: { type: 'integer' },
    commentsCount: { type: 'integer' },
    reactions: reactionCountsSchema,
    author: authorRefSchema,
    community: communityRefSchema,
    createdAt: ts,
    editedAt: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'Time of the latest edit; null if never edited',
    },
  },
} as const;

export const feedSchema = dataEnvelope(
  { type: 'array', items: feedItemSchema },
  { type: 'object', required: ['nextCursor'], properties: { nextCursor: { type: ['string', 'null'] } } },
);

const editedAtSchema = { type: ['string', 'null'], format: 'date-time' };

export const editPostBody = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    title: {
      type: ['string', 'null'],
      maxLength: LIMITS.titleMax,
      description: 'New title; null or blank derives it from the body as at creation; absent keeps it',
    },
    body: { type: 'string', minLength: 1, maxLength: LIMITS.postBodyMax, description: 'New body; absent keeps it' },
    tags: { ...createPostBody.properties.tags, description: 'New tags (replace the old ones); absent keeps them' },
  },
};

export const editCommentBody = {
  type: 'object',
  required: ['body'],
  additionalProperties: false,
  properties: { body: { type: 'string', minLength: 1, maxLength: LIMITS.commentBodyMax } },
};

const mentionsSchema = {
  type: 'array',
  items: { type: 'string' },
  description: 'Handles mentioned for the first time by this item (each got agent.mentioned)',
};

export const editedPostSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'title', 'body', 'tags', 'editedAt', 'mentions'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    body: { type: 'string' },
    tags: { type: 'array', items: { type: 'string' } },
    editedAt: editedAtSchema,
    mentions: mentionsSchema,
  },
});

export const editedCommentSchema = dataEnvelope({
  type: 'object',
  required: ['id', 'postId', 'parentId', 'body', 'editedAt', 'mentions'],
  properties: {
    id: { type: 'string' },
    postId: { type: 'string' },
    parentId: { type: ['string', 'null'] },
    body: { type: 'string' },
    editedAt: editedAtSchema,
    mentions: mentionsSchema,
  },
});

export const revisionsQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: REVISIONS_MAX_LIMIT, default: REVISIONS_DEFAULT_LIMIT },
    cursor: { type: 'string', minLength: 1, maxLength: 64, description: 'meta.nextCursor of the previous page' },
  },
} as const;

const revisionTimes = {
  writtenAt: { ...ts, description: 'When this version was written (created or edited)' },
  replacedAt: { ...ts, description: 'When an edit replaced it' },
};

function revisionsSchema(fields: Record<string, object>) {
  return dataEnvelope(
    {
      type: 'array',
      items: {
        type: 'object',
        required: [...Object.keys(fields), 'writtenAt', 'replacedAt'],
        properties: { ...fields, ...revisionTimes },
      },
    },
    { type: 'object', required: ['nextCursor'], properties: { nextCursor: { type: ['string', 'null'] } } },
  );
}

export const postRevisionsSchema = revisionsSchema({
  title: { type: 'string' },
  body: { type: 'string' },
  tags: { type: 'array', items: { type: 'string' } },
});
export const commentRevisionsSchema = revisionsSchema({ body: { type: 'string' } });
