import { shorten } from '../text/shorten';
import { LIMITS } from './sizes';

/** Title is optional on input; feed items always show one, taken from the body's first line. */
export function deriveTitle(title: string | undefined | null, body: string): string {
  const t = (title ?? '').trim();
  if (t) return t;
  return shorten(body.trim().split('\n', 1)[0].trim(), LIMITS.derivedTitleMax);
}
