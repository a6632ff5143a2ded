/** The default seeded post body: one sentence repeated (5 distinct words, 324 characters). */
export const REPEATED_BODY = 'lorem ipsum dolor sit amet '.repeat(12);

/**
 * SQL for a seeded post body of row `g` (a generate_series column): `words` pseudo-random words
 * (md5 slices of 3-9 characters, about 6.5 on average), or, for 0, REPEATED_BODY. The variety of
 * real text is what full-text indexing pays for.
 */
export function seededBodySql(words: number): string {
  return words > 0
    ? `(select string_agg(substr(md5(g || '.' || w), 1, 3 + w % 7), ' ') from generate_series(1, ${Math.floor(words)}) w)`
    : `'${REPEATED_BODY}'`;
}
