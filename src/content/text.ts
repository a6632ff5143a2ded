import { AppError } from '../http/errors';

/** decisions §2 sizes: one place. */
export const LIMITS = {
  titleMax: 300,
  postBodyMax: 40_000,
  commentBodyMax: 10_000,
  tagsMax: 5,
  derivedTitleMax: 120,
  excerptMax: 280,
  mentionsMax: 20,
} as const;

export const TAG_RE = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const SLUG_RE = /^[a-z0-9][a-z0-9-]{1,31}$/;
export const REACTION_TYPES = ['love', 'fire', 'funny', 'smart', 'savage'] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];

/** Epoch of the hot formula (2024-01-01T00:00:00Z) and its time scale, decisions §5. */
export const HOT_EPOCH_SECONDS = 1_704_067_200;
export const HOT_SCALE_SECONDS = 45_000;

/** hot = sign(s)·log10(max(|s|,1)) + (createdAt − epoch)/45000. */
export function hotRank(score: number, createdAt: Date): number {
  const order = Math.log10(Math.max(Math.abs(score), 1));
  return Math.sign(score) * order + (createdAt.getTime() / 1000 - HOT_EPOCH_SECONDS) / HOT_SCALE_SECONDS;
}

/**
 * hotRank as a SQL expression over an integer score and a timestamptz, with the same float8
 * operations in the same order (the time in whole milliseconds, as a JS Date holds it), so a
 * rank written by a statement equals the one hotRank gives (test/content/rules.test.ts).
 */
export function hotRankSql(score: string, createdAt: string): string {
  return `(sign((${score})::float8) * log(greatest(abs(${score}), 1)::float8)
           + (floor(extract(epoch from ${createdAt}) * 1000)::float8 / 1000 - ${HOT_EPOCH_SECONDS}) / ${HOT_SCALE_SECONDS})`;
}

function invalid(path: string, message: string, where: 'body' | 'query' = 'body'): AppError {
  return new AppError(400, 'VALIDATION_FAILED', `Request ${where} is invalid`, { details: [{ path, message }] });
}

/**
 * A tag lowercased, then checked (decisions §12: lowercased before the pattern is checked, so a
 * character whose lowercase is ASCII, such as the Kelvin sign, is accepted as that letter).
 */
export function normalizeTag(tag: string, path: string, where: 'body' | 'query' = 'body'): string {
  const t = tag.trim().toLowerCase();
  if (!TAG_RE.test(t)) throw invalid(path, `must match ${TAG_RE.source} after lowercasing`, where);
  return t;
}

/** Tags are lowercased first, then checked (decisions §12); duplicates collapse. */
export function normalizeTags(tags: string[] | undefined): string[] {
  const out: string[] = [];
  (tags ?? []).forEach((t, i) => {
    const tag = normalizeTag(t, `body/tags/${i}`);
    if (!out.includes(tag)) out.push(tag);
  });
  if (out.length > LIMITS.tagsMax) throw invalid('body/tags', `must have at most ${LIMITS.tagsMax} tags`);
  return out;
}

/** A body must say something: whitespace only is refused like an empty one. */
export function requireText(value: string, path: string): string {
  if (value.trim().length === 0) throw invalid(path, 'must not be blank');
  return value;
}

/** Title is optional on input; feed items always show one, taken from the body's first line. */
export function deriveTitle(title: string | undefined | null, body: string): string {
  const t = (title ?? '').trim();
  if (t) return t;
  return shorten(body.trim().split('\n', 1)[0].trim(), LIMITS.derivedTitleMax);
}

export function excerpt(body: string, max: number = LIMITS.excerptMax): string {
  return shorten(body.replace(/\s+/g, ' ').trim(), max);
}

/**
 * At most `max` characters (code points, as the length limits count them), ending in '…' when cut.
 * Cutting by UTF-16 units would split a character such as an emoji, leaving half of it, which is
 * stored as U+FFFD.
 */
function shorten(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max
    ? text
    : chars
        .slice(0, max - 1)
        .join('')
        .trimEnd() + '…';
}

/** Distinct lowercase handles of `@handle` tokens (not inside words or emails), bounded. */
export function extractMentions(text: string): string[] {
  const out = new Set<string>();
  const re = /(^|[^A-Za-z0-9_@.])@([A-Za-z0-9_]{3,30})(?![A-Za-z0-9_])/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) && out.size < LIMITS.mentionsMax) out.add(m[2].toLowerCase());
  return [...out];
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
