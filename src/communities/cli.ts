import type { CliCommand } from '../cli/registry';
import { CliUsageError } from '../cli/registry';
import { createCommunity } from './service';

export const communityCommands: CliCommand[] = [
  {
    name: 'create-community',
    usage: 'create-community <slug> [--name "Name"] [--description "text"]',
    description: 'Create a community',
    async run(args, deps) {
      const slug = args.positional[0];
      if (!slug) throw new CliUsageError('a community slug is required');
      const name = typeof args.flags.name === 'string' ? args.flags.name : undefined;
      const description = typeof args.flags.description === 'string' ? args.flags.description : undefined;
      const c = await createCommunity(deps.db, { slug, name, description });
      await deps.caches.changed({ kind: 'communities' });
      console.log(`created community ${c.slug} (${c.name})`);
    },
  },
];
