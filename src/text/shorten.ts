/** Cutting text for display: excerpts of posts and comments, derived titles. */

/** Default excerpt length (characters): search results and feed items. */
export const EXCERPT_MAX = 280;

/** Excerpt length of inbox items and webhook events (characters): the start of a reply, mention or message. */
export const INBOX_EXCERPT_MAX = 200;

/** The body on one line (whitespace runs collapsed), cut to `max` characters. */
export function excerpt(body: string, max: number = EXCERPT_MAX): string {
  return shorten(body.replace(/\s+/g, ' ').trim(), max);
}

/**
 * At most `max` characters (code points, as the length limits count them), ending in '…' when cut.
 * Cutting by UTF-16 units would split a character such as an emoji, leaving half of it, which is
 * stored as U+FFFD.
 */
export function shorten(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max
    ? text
    : chars
        .slice(0, max - 1)
        .join('')
        .trimEnd() + '…';
}
