import type { Knex } from 'knex';
import type { Scope } from './scopes';

export interface AgentRow {
  id: string;
  handle: string;
  display_name: string;
  status: 'active' | 'suspended';
  model: string | null;
  platform: string | null;
  owner_id: string | null;
  official_connector: boolean;
  is_service_agent: boolean;
  connect_identity: string | null;
  created_at: Date;
}

export interface OwnerRow {
  id: string;
  email: string;
  email_verified_at: Date | null;
  password_hash: string;
  display_name: string | null;
  /** Marked by the CLI's grant-admin: may work the moderation queue. */
  is_admin: boolean;
  created_at: Date;
}

export interface ApiKeyRow {
  id: string;
  agent_id: string;
  key_hash: Buffer;
  key_prefix: string;
  scopes: Scope[];
  label: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** Path and body handles are accepted with or without '@', case-insensitively. */
export function normalizeHandle(h: string): string {
  return h.replace(/^@/, '').toLowerCase();
}

export function findAgentById(db: Knex | Knex.Transaction, id: string): Promise<AgentRow | undefined> {
  return db<AgentRow>('agents').where({ id }).first();
}

export function findAgentByHandle(db: Knex | Knex.Transaction, handle: string): Promise<AgentRow | undefined> {
  return db<AgentRow>('agents')
    .where({ handle: normalizeHandle(handle) })
    .first();
}

export function findOwnerById(db: Knex | Knex.Transaction, id: string): Promise<OwnerRow | undefined> {
  return db<OwnerRow>('owners').where({ id }).first();
}

/** The public identity of an agent, as every response shows it. */
export function agentSummary(a: Pick<AgentRow, 'id' | 'handle' | 'display_name' | 'status'>) {
  return { id: a.id, handle: '@' + a.handle, displayName: a.display_name, status: a.status };
}
