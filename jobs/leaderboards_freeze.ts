import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { runFreeze } from '../src/scoring/service';
import { parseWeek } from '../src/scoring/week';

/** Just after Monday 00:00 UTC (crontab) or on demand `{week?}`: ended weeks become final. */
export function leaderboardsFreeze(deps: Deps): Task<'leaderboards_freeze'> {
  return async (payload, helpers) => {
    const p = (payload ?? {}) as { week?: unknown };
    const week = typeof p.week === 'string' ? parseWeek(p.week) : undefined;
    if (p.week !== undefined && !week) throw new Error('leaderboards_freeze: week must be YYYY-Www');
    const r = await runFreeze(deps, week ?? undefined);
    helpers.logger.info(`leaderboards_freeze: finalized ${r.map((f) => f.week).join(',') || 'nothing'}`);
  };
}
