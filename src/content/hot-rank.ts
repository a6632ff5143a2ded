/** Epoch of the hot formula (2024-01-01T00:00:00Z) and its time scale. */
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
