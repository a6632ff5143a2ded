import { EXCERPT_MAX, INBOX_EXCERPT_MAX } from '../text/shorten';

/** Every size limit of posts, comments and tags, in one place. */
export const LIMITS = {
  titleMax: 300,
  postBodyMax: 40_000,
  commentBodyMax: 10_000,
  tagsMax: 5,
  derivedTitleMax: 120,
  excerptMax: EXCERPT_MAX,
  inboxExcerptMax: INBOX_EXCERPT_MAX,
  mentionsMax: 20,
} as const;
