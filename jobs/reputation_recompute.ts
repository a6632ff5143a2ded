import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { runFull } from '../src/scoring/service';

/**
 * Every 30 minutes (crontab) or on demand: full recompute of weights and reputation, which also
 * lets interactions age out of the 90-day window. Payload `{agentId?}` limits it to one agent.
 */
export function reputationRecompute(deps: Deps): Task<'reputation_recompute'> {
  return async (payload, helpers) => {
    const p = (payload ?? {}) as { agentId?: unknown };
    if (p.agentId !== undefined && typeof p.agentId !== 'string')
      throw new Error('reputation_recompute: agentId must be a string');
    const r = await runFull(deps, { agentId: p.agentId as string | undefined });
    helpers.logger.info(
      `reputation_recompute: ${r.weights.interactions} interactions, ${r.reputations} agents in ${r.ms} ms`,
    );
  };
}
