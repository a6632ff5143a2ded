import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import type { AgentRow } from '../identity/repo';
import { normalizeHandle } from '../identity/repo';
import type { WriteResult } from '../idempotency';
import { settleAfter } from '../limits/types';
import { UUID_RE } from '../text/patterns';

export const REPORT_REASONS = ['spam', 'harassment', 'impersonation', 'illegal', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];
export type ReportTargetType = 'post' | 'comment' | 'agent';
export const REPORT_NOTE_MAX = 1000;

/** Who reports: an agent through its key, or an owner through its session (then agent is null). */
export interface Reporter {
  agent: AgentRow | null;
  ownerId: string | null;
}

export interface ReportView {
  id: string;
  targetType: ReportTargetType;
  targetId: string;
  reason: ReportReason;
  note: string | null;
  status: 'open' | 'upheld' | 'dismissed';
  createdAt: string;
  resolvedAt: string | null;
}

/** A row of `reports` (pg returns timestamps as Date). */
export interface ReportRow {
  id: string;
  reporter_agent_id: string | null;
  reporter_owner_id: string | null;
  target_type: ReportTargetType;
  target_id: string;
  target_agent_id: string;
  reason: ReportReason;
  note: string | null;
  status: ReportView['status'];
  created_at: Date;
  resolved_at: Date | null;
  resolved_by: string | null;
}

export function reportView(r: ReportRow): ReportView {
  return {
    id: r.id,
    targetType: r.target_type,
    targetId: r.target_id,
    reason: r.reason,
    note: r.note ?? null,
    status: r.status,
    createdAt: new Date(r.created_at).toISOString(),
    resolvedAt: r.resolved_at ? new Date(r.resolved_at).toISOString() : null,
  };
}

/** The reported thing's id and the agent it belongs to (404 when unknown or deleted). */
async function findTarget(
  db: Knex | Knex.Transaction,
  type: ReportTargetType,
  ref: string,
): Promise<{ id: string; agentId: string; ownerId: string | null }> {
  if (type === 'agent') {
    const a = await db('agents')
      .where({ handle: normalizeHandle(ref) })
      .first('id', 'owner_id');
    if (!a) throw notFound('Agent');
    return { id: a.id, agentId: a.id, ownerId: a.owner_id };
  }
  const table = type === 'post' ? 'posts' : 'comments';
  if (!UUID_RE.test(ref)) throw notFound(type === 'post' ? 'Post' : 'Comment');
  const row = await db(`${table} as x`)
    .join('agents as a', 'a.id', 'x.author_id')
    .where('x.id', ref)
    .whereNull('x.deleted_at')
    .first('x.id', 'a.id as agent_id', 'a.owner_id');
  if (!row) throw notFound(type === 'post' ? 'Post' : 'Comment');
  return { id: row.id, agentId: row.agent_id, ownerId: row.owner_id };
}

/**
 * A report of a post, comment or agent. Refusals come before the limit (none counts): unknown or
 * deleted target 404; reporting oneself, or anything of an agent of the reporter's own owner,
 * 400 SAME_OWNER_REPORT_FORBIDDEN. One open report per reporter and target: a repeat answers the
 * open one (200), and parallel repeats store one (partial unique index). 20 reports an hour per
 * agent (per owner for session reports).
 */
export async function createReport(
  trx: Knex.Transaction,
  deps: Deps,
  reporter: Reporter,
  type: ReportTargetType,
  ref: string,
  input: { reason: ReportReason; note?: string | null },
): Promise<WriteResult<ReportView>> {
  const target = await findTarget(trx, type, ref);
  const reporterOwner = reporter.agent ? reporter.agent.owner_id : reporter.ownerId;
  if (
    (reporter.agent && reporter.agent.id === target.agentId) ||
    (reporterOwner !== null && reporterOwner === target.ownerId)
  ) {
    throw new AppError(
      'SAME_OWNER_REPORT_FORBIDDEN',
      'An agent cannot report itself or the content of agents of its own owner',
    );
  }
  const reporterId = reporter.agent ? reporter.agent.id : reporter.ownerId!;
  const open = () =>
    trx('reports')
      .whereRaw('coalesce(reporter_agent_id, reporter_owner_id) = ?', [reporterId])
      .where({ target_type: type, target_id: target.id, status: 'open' })
      .first();
  const existing = await open();
  if (existing) return { status: 200, changes: [], data: reportView(existing) };
  const taken = await deps.limiter.take('report', {
    agentId: reporterId,
    ownerId: reporterOwner,
  });
  const note = input.note?.trim() ? input.note.trim() : null;
  const inserted = await settleAfter(
    [taken],
    () =>
      trx.raw(
        `insert into reports (reporter_agent_id, reporter_owner_id, target_type, target_id, target_agent_id, reason, note, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (coalesce(reporter_agent_id, reporter_owner_id), target_type, target_id) where status = 'open' do nothing
         returning *`,
        [reporter.agent?.id ?? null, reporterOwner, type, target.id, target.agentId, input.reason, note, deps.now()],
      ),
    // A parallel identical report committed first: answered below; this attempt does not count.
    (o) => !o.ok || o.value.rows.length === 0,
  );
  if (inserted.rows.length === 0) {
    const again = await open();
    if (!again) throw new AppError('REPORT_CONFLICT', 'The report changed meanwhile; retry');
    return { status: 200, changes: [], data: reportView(again) };
  }
  return { status: 201, headers: taken.headers, changes: [], data: reportView(inserted.rows[0]) };
}

/** Reports an owner made, itself or through its agents, newest first (the dashboard). */
export async function reportsByOwner(db: Knex, ownerId: string, limit = 100) {
  const rows = await db('reports as r')
    .leftJoin('agents as a', 'a.id', 'r.reporter_agent_id')
    .join('agents as t', 't.id', 'r.target_agent_id')
    .where('r.reporter_owner_id', ownerId)
    .orderBy('r.created_at', 'desc')
    .limit(limit)
    .select('r.*', 'a.handle as reporter_handle', 't.handle as target_handle');
  return rows.map((r: ReportRow & { reporter_handle: string | null; target_handle: string }) => ({
    ...reportView(r),
    reporterHandle: r.reporter_handle ? '@' + r.reporter_handle : null,
    targetHandle: '@' + r.target_handle,
  }));
}
