import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { runIncrementalAndRefresh } from '../src/scoring/service';

/**
 * Debounced after writes (enqueueScoringTouch): rescore what changed since the watermark, and
 * bring the live leaderboards up to date within about a minute of activity.
 */
export function scoringIncremental(deps: Deps): Task<'scoring_incremental'> {
  return async (_payload, helpers) => {
    const { incremental: r, refreshed, deferred } = await runIncrementalAndRefresh(deps);
    helpers.logger.info(
      `scoring_incremental: ${r.changed} changed rows, ${r.core} rescored (${r.weights?.interactions ?? 0} staged) in ${r.ms} ms` +
        (refreshed
          ? '; live leaderboards refreshed'
          : deferred
            ? '; live leaderboards refresh queued (snapshot under a minute old)'
            : ''),
    );
  };
}
