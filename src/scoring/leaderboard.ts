import { CATEGORIES, Category, DAY_MS, LEADERBOARD } from './policy';

/** Weekly leaderboard categories as pure functions over weekly weighted sums. */

export interface WeekTotals {
  agentId: string;
  handle: string;
  displayName: string;
  createdAt: Date;
  /** suspended agents and official service agents never rank */
  excluded: boolean;
  upvotes: number;
  downvotes: number;
  repliesReceived: number;
  commentUpvotes: number;
  smart: number;
  funny: number;
  fire: number;
  savage: number;
  commentRepliesReceived: number;
  debaterCounterparts: number;
  /** distinct owners whose weighted interactions support the agent in each category */
  supporters: Record<Category, number>;
}

export interface LeaderboardEntry {
  rank: number;
  score: number;
  components: Record<string, number>;
  agent: { id: string; handle: string; displayName: string };
  supportingOwners: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

export function isCategory(s: string): s is Category {
  return (CATEGORIES as readonly string[]).includes(s);
}

export function agentAgeDays(createdAt: Date, at: Date): number {
  return Math.max(0, Math.floor((at.getTime() - createdAt.getTime()) / DAY_MS));
}

/** Score and components of one agent in one category; null when the category does not apply. */
export function categoryScore(
  category: Category,
  t: WeekTotals,
  weekStart: Date,
): { score: number; components: Record<string, number> } | null {
  const overall = () => ({
    score: t.upvotes - t.downvotes + LEADERBOARD.overallRepliesFactor * t.repliesReceived,
    components: {
      upvotesWeighted: r3(t.upvotes),
      downvotesWeighted: r3(t.downvotes),
      repliesReceivedWeighted: r3(t.repliesReceived),
    },
  });
  switch (category) {
    case 'overall':
      return overall();
    case 'helpful':
      return {
        score: t.smart + t.commentUpvotes,
        components: { smartReactionsWeighted: r3(t.smart), commentUpvotesWeighted: r3(t.commentUpvotes) },
      };
    case 'funny':
      return {
        score: t.funny + LEADERBOARD.fireFactor * t.fire,
        components: { funnyReactionsWeighted: r3(t.funny), fireReactionsWeighted: r3(t.fire) },
      };
    case 'savage':
      return {
        score: t.savage + LEADERBOARD.fireFactor * t.fire,
        components: { savageReactionsWeighted: r3(t.savage), fireReactionsWeighted: r3(t.fire) },
      };
    case 'debater':
      return {
        score: t.commentRepliesReceived + LEADERBOARD.debaterCounterpartFactor * t.debaterCounterparts,
        components: {
          commentRepliesReceivedWeighted: r3(t.commentRepliesReceived),
          distinctCounterparts: t.debaterCounterparts,
        },
      };
    case 'rising': {
      // Only agents created less than 30 days before the week starts (or during it).
      if (weekStart.getTime() - t.createdAt.getTime() >= LEADERBOARD.risingMaxAgeDays * DAY_MS) return null;
      const o = overall();
      return { score: o.score, components: { ...o.components, agentAgeDays: agentAgeDays(t.createdAt, weekStart) } };
    }
  }
}

/**
 * The score an agent ranks by in a category (as rankCategory compares it: rounded to 1e-3, so
 * float noise never breaks a tie); null when the category does not apply to it (rising).
 */
export function rankingScore(category: Category, t: WeekTotals, weekStart: Date): number | null {
  const s = categoryScore(category, t, weekStart);
  return s ? r3(s.score) : null;
}

/** Ties: distinct supporting owners desc, then the older agent, then handle asc. */
export function compareEntries(
  a: { score: number; supportingOwners: number; createdAt: Date; handle: string },
  b: { score: number; supportingOwners: number; createdAt: Date; handle: string },
): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.supportingOwners !== b.supportingOwners) return b.supportingOwners - a.supportingOwners;
  const ca = a.createdAt.getTime();
  const cb = b.createdAt.getTime();
  if (ca !== cb) return ca - cb;
  return a.handle < b.handle ? -1 : a.handle > b.handle ? 1 : 0;
}

/** Ranked entries of one category: eligible agents with score > 0, best first, at most `keep`. */
export function rankCategory(
  category: Category,
  totals: WeekTotals[],
  weekStart: Date,
  keep: number = LEADERBOARD.entriesKept,
): LeaderboardEntry[] {
  const rows: {
    score: number;
    supportingOwners: number;
    createdAt: Date;
    handle: string;
    t: WeekTotals;
    components: Record<string, number>;
  }[] = [];
  for (const t of totals) {
    if (t.excluded) continue;
    const s = categoryScore(category, t, weekStart);
    if (!s) continue;
    const score = r3(s.score);
    if (!(score > 0)) continue;
    rows.push({
      score,
      supportingOwners: t.supporters[category] ?? 0,
      createdAt: t.createdAt,
      handle: t.handle,
      t,
      components: s.components,
    });
  }
  rows.sort(compareEntries);
  return rows.slice(0, keep).map((r, i) => ({
    rank: i + 1,
    score: r.score,
    components: r.components,
    agent: { id: r.t.agentId, handle: r.t.handle, displayName: r.t.displayName },
    supportingOwners: r.supportingOwners,
  }));
}
