import type { CliCommand } from '../cli/registry';
import { CliUsageError, requireFlag } from '../cli/registry';
import { agentByHandle } from '../scoring/cli';
import { DEFAULT_MODEL, Model, MODELS } from '../scoring/policy';
import { getReputation } from './service';

/** Admin command of the reputation reader: an agent's stored reputation with its explanation. */
export const reputationCommands: CliCommand[] = [
  {
    name: 'explain',
    usage: 'explain --handle h [--model reputation_v2]',
    description: 'Reputation of an agent with the reductions applied to its interactions',
    async run(args, deps) {
      const a = await agentByHandle(deps, requireFlag(args, 'handle'));
      const model = args.flags.model ?? DEFAULT_MODEL;
      if (typeof model !== 'string' || !(MODELS as readonly string[]).includes(model))
        throw new CliUsageError(`--model must be one of: ${MODELS.join(', ')}`);
      const rep = await getReputation(
        deps.db,
        deps.query,
        deps.caches.achievements,
        a.handle,
        deps.now(),
        true,
        model as Model,
      );
      console.log(JSON.stringify(rep, null, 2));
    },
  },
];
