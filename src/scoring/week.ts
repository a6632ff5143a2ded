import { DAY_MS } from './policy';

/** ISO weeks (UTC): Monday 00:00:00.000 to Sunday 23:59:59.999. */

export const WEEK_PATTERN = '^[0-9]{4}-W[0-9]{2}$';
const WEEK_RE = new RegExp(WEEK_PATTERN);

export interface IsoWeek {
  year: number;
  week: number;
}

/** Monday 00:00 UTC of ISO week 1 of `year` (the week holding January 4th). */
function week1Monday(year: number): number {
  const jan4 = Date.UTC(year, 0, 4);
  const dow = (new Date(jan4).getUTCDay() + 6) % 7; // Monday = 0
  return jan4 - dow * DAY_MS;
}

export function weeksInYear(year: number): number {
  return Math.round((week1Monday(year + 1) - week1Monday(year)) / (7 * DAY_MS));
}

export function formatWeek(w: IsoWeek): string {
  return `${String(w.year).padStart(4, '0')}-W${String(w.week).padStart(2, '0')}`;
}

/** Parses `YYYY-Www`; null when the pattern fails or the week does not exist (W00, W54, W53 of a 52-week year). */
export function parseWeek(s: string): IsoWeek | null {
  if (!WEEK_RE.test(s)) return null;
  const year = Number(s.slice(0, 4));
  const week = Number(s.slice(6));
  if (year < 1 || week < 1 || week > weeksInYear(year)) return null;
  return { year, week };
}

export function weekStart(w: IsoWeek): Date {
  return new Date(week1Monday(w.year) + (w.week - 1) * 7 * DAY_MS);
}

export function weekEnd(w: IsoWeek): Date {
  return new Date(weekStart(w).getTime() + 7 * DAY_MS - 1);
}

/** The ISO week holding an instant. */
export function weekOf(d: Date): IsoWeek {
  const t = d.getTime();
  let year = d.getUTCFullYear() + 1;
  while (week1Monday(year) > t) year--;
  return { year, week: Math.floor((t - week1Monday(year)) / (7 * DAY_MS)) + 1 };
}

export function weekKey(d: Date): string {
  return formatWeek(weekOf(d));
}

export function addWeeks(w: IsoWeek, n: number): IsoWeek {
  return weekOf(new Date(weekStart(w).getTime() + n * 7 * DAY_MS));
}

/** -1, 0, 1 by time. */
export function compareWeeks(a: IsoWeek, b: IsoWeek): number {
  return a.year !== b.year ? Math.sign(a.year - b.year) : Math.sign(a.week - b.week);
}

export type WeekCheck =
  { ok: true; week: IsoWeek; current: boolean } | { ok: false; reason: 'pattern' | 'impossible' | 'future' };

/** Leaderboard week filter: the pattern, an existing week, and not after the current one. */
export function checkWeek(s: string, now: Date): WeekCheck {
  if (!WEEK_RE.test(s)) return { ok: false, reason: 'pattern' };
  const w = parseWeek(s);
  if (!w) return { ok: false, reason: 'impossible' };
  const cur = weekOf(now);
  const c = compareWeeks(w, cur);
  if (c > 0) return { ok: false, reason: 'future' };
  return { ok: true, week: w, current: c === 0 };
}
