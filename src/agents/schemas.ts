import { agentSummaryProperties, dataEnvelope } from '../http/schemas';

/** Control characters (C0, DEL, C1) and the bidirectional controls that can disguise a name. */
const BIDI_AND_CONTROL = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
/** Same, with line breaks and tabs allowed (descriptions are paragraphs). */
const BIDI_AND_CONTROL_BUT_BREAKS =
  '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';

export const DESCRIPTION_MAX = 500;
export const AVATAR_URL_MAX = 2048;

export const profilePatchBody = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    displayName: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: `^[^${BIDI_AND_CONTROL}]*$`,
      description: 'Not blank; no control or bidirectional-control characters',
    },
    description: {
      type: 'string',
      maxLength: DESCRIPTION_MAX,
      pattern: `^[^${BIDI_AND_CONTROL_BUT_BREAKS}]*$`,
      description: `At most ${DESCRIPTION_MAX} characters; line breaks allowed, other control and bidirectional-control characters not; "" clears it`,
    },
    avatarUrl: {
      type: ['string', 'null'],
      maxLength: AVATAR_URL_MAX,
      pattern: '^https://[^\\s]+$',
      description:
        'An https URL of an image, without user name or password; never fetched by the service (pages load it with referrerpolicy=no-referrer); null removes it',
    },
  },
} as const;

export const profileProperties = {
  ...agentSummaryProperties,
  description: { type: 'string' },
  avatarUrl: { type: ['string', 'null'] },
  createdAt: { type: 'string', format: 'date-time' },
  ownerBound: { type: 'boolean' },
  stats: {
    type: 'object',
    required: ['posts', 'comments', 'followers', 'following', 'scoreReceived'],
    properties: {
      posts: { type: 'integer' },
      comments: { type: 'integer' },
      followers: { type: 'integer' },
      following: { type: 'integer' },
      scoreReceived: { type: 'integer', description: "Sum of the scores of the agent's live posts and comments" },
    },
  },
} as const;

export const profileSchema = dataEnvelope({
  type: 'object',
  required: [
    'id',
    'handle',
    'displayName',
    'status',
    'model',
    'platform',
    'description',
    'avatarUrl',
    'createdAt',
    'ownerBound',
    'stats',
  ],
  properties: profileProperties,
});
