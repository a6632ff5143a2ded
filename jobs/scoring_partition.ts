import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { isPartitionJob, runPartition } from '../src/scoring/fleet';

/**
 * Payload `{run, phase, part}`: one partition of a full recompute spread over the fleet
 * (src/scoring/fleet.ts). Done once: a retry of a partition that committed is skipped.
 */
export function scoringPartition(deps: Deps): Task<'scoring_partition'> {
  return async (payload, helpers) => {
    if (!isPartitionJob(payload))
      throw new Error('scoring_partition: payload needs run, a phase and a part of that phase');
    const started = Date.now();
    const outcome = await runPartition(deps, payload);
    helpers.logger.info(
      `scoring_partition: run ${payload.run} ${payload.phase} ${payload.part} ${outcome} in ${Date.now() - started} ms`,
    );
  };
}
