import type { Task } from 'graphile-worker';
import type { Deps } from '../src/deps';
import { runFull, runIncremental } from '../src/scoring/service';

/**
 * Every 30 minutes (crontab): the periodic run, which brings weights and reputations up to date
 * in time proportional to what changed, rows leaving the 90-day window and agents the clock moves
 * included (runIncremental). On demand: `{full: true}` recomputes everything, `{agentId}` one
 * agent (its facts, what it received, its reputation, and what those reach).
 */
export function reputationRecompute(deps: Deps): Task<'reputation_recompute'> {
  return async (payload, helpers) => {
    const p = (payload ?? {}) as { agentId?: unknown; full?: unknown };
    if (p.agentId !== undefined && typeof p.agentId !== 'string')
      throw new Error('reputation_recompute: agentId must be a string');
    if (p.full !== undefined && typeof p.full !== 'boolean')
      throw new Error('reputation_recompute: full must be a boolean');
    if (p.agentId === undefined && !p.full) {
      const r = await runIncremental(deps);
      helpers.logger.info(
        `reputation_recompute: ${r.changed} changed rows (${r.removed} removed), ${r.core} rows rescored (${r.facts} agents' facts changed), ${r.reputations} reputations in ${r.ms} ms`,
      );
      return;
    }
    const r = await runFull(deps, { agentId: p.agentId as string | undefined });
    helpers.logger.info(
      `reputation_recompute: ${r.weights.interactions} interactions, ${r.reputations} agents in ${r.ms} ms`,
    );
  };
}
