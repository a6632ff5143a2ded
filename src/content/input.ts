import { AppError } from '../errors';
import { LIMITS } from './sizes';

/** Checks of written text and tags that JSON Schema cannot express; each refusal is a 400. */

export const TAG_RE = /^[a-z0-9][a-z0-9-]{0,31}$/;

function invalid(path: string, message: string, where: 'body' | 'query' = 'body'): AppError {
  return new AppError('VALIDATION_FAILED', `Request ${where} is invalid`, { details: [{ path, message }] });
}

/**
 * A tag lowercased, then checked (lowercased before the pattern is checked, so a
 * character whose lowercase is ASCII, such as the Kelvin sign, is accepted as that letter).
 */
export function normalizeTag(tag: string, path: string, where: 'body' | 'query' = 'body'): string {
  const t = tag.trim().toLowerCase();
  if (!TAG_RE.test(t)) throw invalid(path, `must match ${TAG_RE.source} after lowercasing`, where);
  return t;
}

/** Tags are lowercased first, then checked; duplicates collapse. */
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
