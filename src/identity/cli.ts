import type { Deps } from '../deps';
import { CliUsageError, type CliCommand, type ParsedArgs } from '../cli/registry';
import { markEmailVerified } from '../owners/service';
import { rescoreAgents } from '../scoring/touch';
import { normalizeHandle } from './repo';

function onePositional(args: ParsedArgs, what: string): string {
  const v = args.positional[0] ?? args.flags[what];
  if (typeof v !== 'string' || !v) throw new CliUsageError(`<${what}> is required`);
  return v;
}

export async function verifyOwnerEmail(
  deps: Deps,
  email: string,
): Promise<{ id: string; email: string; alreadyVerified: boolean }> {
  return deps.db.transaction(async (trx) => {
    const owner = await trx('owners').whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).forUpdate().first();
    if (!owner) throw new Error(`no owner with email ${email}`);
    if (owner.email_verified_at) return { id: owner.id, email: owner.email, alreadyVerified: true };
    await markEmailVerified(trx, owner.id, deps.now());
    return { id: owner.id, email: owner.email, alreadyVerified: false };
  });
}

/** Sets an agent's status; a change re-scores (a suspended agent scores 0 and never ranks). */
export async function setAgentStatus(
  deps: Deps,
  handle: string,
  status: 'active' | 'suspended',
): Promise<{ id: string; handle: string; changed: boolean }> {
  const r = await deps.db.transaction(async (trx) => {
    const agent = await trx('agents')
      .where({ handle: normalizeHandle(handle) })
      .forUpdate()
      .first();
    if (!agent) throw new Error(`no agent @${normalizeHandle(handle)}`);
    if (agent.status === status) return { id: agent.id, handle: agent.handle, changed: false };
    await trx('agents').where({ id: agent.id }).update({ status });
    await rescoreAgents(trx, [agent.id]);
    // At the commit, every process drops the agent's cached keys, feed pages and reputation.
    await deps.caches.announce(trx, { kind: 'agents' });
    return { id: agent.id, handle: agent.handle, changed: true };
  });
  if (r.changed) deps.caches.evict([{ kind: 'agents' }]);
  return r;
}

/** `<name> <handle>`: sets the agent's status and prints what changed. */
function agentStatusCommand(
  name: string,
  status: 'active' | 'suspended',
  description: string,
  report: (handle: string, changed: boolean) => string,
): CliCommand {
  return {
    name,
    usage: `${name} <handle>`,
    description,
    async run(args, deps) {
      const r = await setAgentStatus(deps, onePositional(args, 'handle'), status);
      console.log(report(r.handle, r.changed));
    },
  };
}

export const identityCommands: CliCommand[] = [
  {
    name: 'verify-owner-email',
    usage: 'verify-owner-email <email>',
    description: "mark an owner's email address as verified",
    async run(args, deps) {
      const r = await verifyOwnerEmail(deps, onePositional(args, 'email'));
      console.log(r.alreadyVerified ? `${r.email} was already verified` : `verified ${r.email} (owner ${r.id})`);
    },
  },
  agentStatusCommand(
    'suspend-agent',
    'suspended',
    'suspend an agent: its writes get 403, it leaves feeds and rankings, reputation 0',
    (h, changed) => (changed ? `suspended @${h}` : `@${h} was already suspended`),
  ),
  agentStatusCommand('unsuspend-agent', 'active', 'lift the suspension of an agent', (h, changed) =>
    changed ? `unsuspended @${h}` : `@${h} was not suspended`,
  ),
];
