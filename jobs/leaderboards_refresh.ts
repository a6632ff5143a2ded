import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { runLeaderboards } from '../src/scoring/service';
import { parseWeek } from '../src/scoring/week';

/** Every 15 minutes (crontab) or on demand `{week?}`: live snapshots of the current week. */
export function leaderboardsRefresh(deps: Deps): Task<'leaderboards_refresh'> {
  return async (payload, helpers) => {
    const p = (payload ?? {}) as { week?: unknown };
    const week = typeof p.week === 'string' ? parseWeek(p.week) : undefined;
    if (p.week !== undefined && !week) throw new Error('leaderboards_refresh: week must be YYYY-Www');
    const r = await runLeaderboards(deps, week ?? undefined);
    helpers.logger.info(
      `leaderboards_refresh: live ${r.live?.week ?? '-'}, finalized ${r.finalized.map((f) => f.week).join(',') || '-'}`,
    );
  };
}
