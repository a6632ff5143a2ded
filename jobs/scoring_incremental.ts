import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { runIncremental } from '../src/scoring/service';

/** Debounced after writes (enqueueScoringTouch): rescore what changed since the watermark. */
export function scoringIncremental(deps: Deps): Task {
  return async (_payload, helpers) => {
    const r = await runIncremental(deps);
    helpers.logger.info(`scoring_incremental: ${r.changed} changed rows, ${r.targets} agents, ${r.weights?.interactions ?? 0} interactions in ${r.ms} ms`);
  };
}
