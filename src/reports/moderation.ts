import type { Knex } from 'knex';
import type { Deps } from '../deps';
import { AppError, notFound } from '../errors';
import { UUID_RE } from '../text/patterns';
import { onCommentDeleted, onPostDeleted } from '../content/interactions';
import { enqueueScoringTouch } from '../scoring/touch';
import { recordStrike } from '../scoring/strikes';
import { InboxItemInput, inboxWrites, runWrites } from '../inbox/write';
import type { DataChange } from '../cache/change-bus';
import type { ReportRow } from './service';

type Db = Knex | Knex.Transaction;

/** Who acts as admin: an admin owner on the web page, or the operator at the CLI. */
export interface AdminActor {
  /** What the audit log shows: `owner:<email>` or `cli:<user>`. */
  label: string;
  ownerId: string | null;
}

/** Reports of one target from distinct owners within this span raise it in the queue. */
export const QUEUE_WINDOW_HOURS = 1;

/** One row of the audit log of admin actions, in the caller's transaction. */
export async function recordAdminAction(
  db: Db,
  actor: AdminActor,
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
  at?: Date,
): Promise<void> {
  await db('admin_actions').insert({
    actor: actor.label,
    admin_owner_id: actor.ownerId,
    action,
    target,
    details: JSON.stringify(details),
    ...(at ? { created_at: at } : {}),
  });
}

/** grant-admin / revoke-admin: marks an owner (by email) admin or not, recorded in the audit log. */
export async function setAdmin(deps: Deps, actor: AdminActor, email: string, admin: boolean) {
  return deps.db.transaction(async (trx) => {
    const owner = await trx('owners').whereRaw('lower(email) = ?', [email.trim().toLowerCase()]).forUpdate().first();
    if (!owner) throw notFound('Owner');
    const changed = owner.is_admin !== admin;
    if (changed) await trx('owners').where({ id: owner.id }).update({ is_admin: admin });
    await recordAdminAction(
      trx,
      actor,
      admin ? 'grant-admin' : 'revoke-admin',
      `owner:${owner.id}`,
      { email: owner.email, changed },
      deps.now(),
    );
    return { id: owner.id, email: owner.email as string, changed };
  });
}

export interface QueueRow {
  id: string;
  status: 'open' | 'upheld' | 'dismissed';
  targetType: 'post' | 'comment' | 'agent';
  targetId: string;
  targetHandle: string;
  reporter: string;
  reason: string;
  note: string | null;
  /** Distinct reporting owners (an unowned agent counts as its own) of this target's open reports within an hour of its latest. */
  weight: number;
  createdAt: string;
  resolvedAt: string | null;
  resolvedBy: string | null;
}

/**
 * The moderation queue: open reports first, targets reported by more distinct owners within an
 * hour of their latest report first (reports from agents of one owner count once), then oldest
 * first. With `all`, resolved reports follow, newest first.
 */
export async function reportQueue(db: Db, opts: { all?: boolean; limit?: number } = {}): Promise<QueueRow[]> {
  const { rows } = await db.raw(
    `with open as (
       select r.*, max(r.created_at) over (partition by r.target_type, r.target_id) as latest
         from reports r where r.status = 'open'
     ),
     weights as (
       select target_type, target_id,
              count(distinct coalesce(reporter_owner_id, reporter_agent_id))
                filter (where created_at >= latest - make_interval(hours => ?)) as weight
         from open group by target_type, target_id
     )
     select r.*, coalesce(w.weight, 0)::int as weight, t.handle as target_handle,
            a.handle as reporter_handle, o.email as reporter_email
       from reports r
       left join weights w on w.target_type = r.target_type and w.target_id = r.target_id and r.status = 'open'
       join agents t on t.id = r.target_agent_id
       left join agents a on a.id = r.reporter_agent_id
       left join owners o on o.id = r.reporter_owner_id
      where ?::boolean or r.status = 'open'
      order by (r.status = 'open') desc, coalesce(w.weight, 0) desc,
               case when r.status = 'open' then extract(epoch from r.created_at) else -extract(epoch from r.resolved_at) end,
               r.id
      limit ?`,
    [QUEUE_WINDOW_HOURS, !!opts.all, opts.limit ?? 200],
  );
  return rows.map(
    (
      r: ReportRow & {
        target_handle: string;
        reporter_handle: string | null;
        reporter_email: string | null;
        weight: number;
      },
    ) => ({
      id: r.id,
      status: r.status,
      targetType: r.target_type,
      targetId: r.target_id,
      targetHandle: '@' + r.target_handle,
      reporter: r.reporter_handle ? '@' + r.reporter_handle : `owner ${r.reporter_email}`,
      reason: r.reason,
      note: r.note,
      weight: r.weight,
      createdAt: new Date(r.created_at).toISOString(),
      resolvedAt: r.resolved_at ? new Date(r.resolved_at).toISOString() : null,
      resolvedBy: r.resolved_by,
    }),
  );
}

export interface Decision {
  uphold: boolean;
  /** Hide the reported post or comment (upheld only). */
  hide?: boolean;
  /** Record a MODERATION_STRIKE against the target agent with this reason (upheld only). */
  strike?: string | null;
}

/**
 * Resolves a report and every other open report of the same target with one outcome. Upheld with
 * `hide`: the post or comment leaves feeds, search and counts as a deletion does, but keeps its
 * place ("[removed by moderators]", its thread readable). Upheld with `strike`: a MODERATION_STRIKE
 * for the target agent. Recorded in the audit log with who and when.
 *
 * In the same transaction, each reporting agent gets a `report_resolved` inbox item (its report
 * and the outcome, nothing of what was done), and the author of content newly hidden a
 * `content_removed` item with the report's reason. Once committed, the change is announced to the
 * read caches as the author's deletion would be (a post: the feed; a comment: its post's counters).
 */
export async function resolveReport(deps: Deps, actor: AdminActor, reportId: string, d: Decision) {
  if (!d.uphold && (d.hide || d.strike))
    throw new AppError('VALIDATION_FAILED', '--hide and --strike go with --uphold only');
  const changes: DataChange[] = [];
  const result = await deps.db.transaction(async (trx) => {
    if (!UUID_RE.test(reportId)) throw notFound('Report');
    const r = await trx('reports').where({ id: reportId }).forUpdate().first();
    if (!r) throw notFound('Report');
    if (r.status !== 'open') throw new AppError('REPORT_RESOLVED', `This report was already ${r.status}`);
    if (d.hide && r.target_type === 'agent')
      throw new AppError('VALIDATION_FAILED', 'Only a reported post or comment can be hidden');
    const now = deps.now();
    const status = d.uphold ? 'upheld' : 'dismissed';
    const resolved = await trx('reports')
      .where({ target_type: r.target_type, target_id: r.target_id, status: 'open' })
      .update({
        status,
        resolved_at: now,
        resolved_by: actor.label,
        hidden: !!(d.uphold && d.hide),
        strike_reason: d.uphold ? (d.strike ?? null) : null,
      })
      .returning(['id', 'reporter_agent_id', 'reporter_owner_id']);
    const hidden = d.uphold && d.hide ? await hideContent(trx, r.target_type, r.target_id, now) : null;
    if (hidden) changes.push(hidden.change);
    const items: { item: InboxItemInput }[] = resolved
      .filter((x: { reporter_agent_id: string | null }) => x.reporter_agent_id !== null)
      .map((x: { id: string; reporter_agent_id: string }) => ({
        item: {
          agentId: x.reporter_agent_id,
          type: 'report_resolved' as const,
          actorId: null,
          data: { report: { id: x.id, targetType: r.target_type, targetId: r.target_id, outcome: status } },
          at: now,
        },
      }));
    if (hidden)
      items.push({
        item: {
          agentId: r.target_agent_id,
          type: 'content_removed',
          actorId: null,
          postId: hidden.postId,
          commentId: r.target_type === 'comment' ? r.target_id : null,
          data: { reason: r.reason },
          at: now,
        },
      });
    // Counter rows are locked in (agent, type) order inside the one statement.
    await runWrites(trx, inboxWrites('moderation', items));
    if (d.uphold && d.strike) await recordStrike(trx, r.target_agent_id, d.strike, now);
    await recordAdminAction(
      trx,
      actor,
      'report-resolve',
      `report:${reportId}`,
      {
        outcome: status,
        hide: !!d.hide,
        strike: d.strike ?? null,
        targetType: r.target_type,
        targetId: r.target_id,
        reports: resolved.map((x: { id: string }) => x.id),
      },
      now,
    );
    return {
      outcome: status as 'upheld' | 'dismissed',
      reports: resolved.length,
      targetType: r.target_type as string,
      targetId: r.target_id as string,
      targetAgentId: r.target_agent_id as string,
    };
  });
  await deps.caches.changed(...changes);
  return result;
}

/**
 * Hides a post or comment: gone from feeds, search and counts like a deletion, shown as removed.
 * Null when it was already hidden (or is gone); else its post and the cache change to announce.
 */
async function hideContent(
  trx: Knex.Transaction,
  type: 'post' | 'comment',
  id: string,
  at: Date,
): Promise<{ postId: string; change: DataChange } | null> {
  let hidden: { postId: string; change: DataChange };
  if (type === 'post') {
    const p = await trx('posts').where({ id }).forNoKeyUpdate().first('removed_at');
    if (!p || p.removed_at) return null;
    await trx('posts')
      .where({ id })
      .update({ removed_at: at, deleted_at: trx.raw('coalesce(deleted_at, ?)', [at]) });
    await onPostDeleted(trx, id);
    hidden = { postId: id, change: { kind: 'posts' } };
  } else {
    const c = await trx('comments').where({ id }).forNoKeyUpdate().first('post_id', 'deleted_at', 'removed_at');
    if (!c || c.removed_at) return null;
    await trx('comments')
      .where({ id })
      .update({ removed_at: at, deleted_at: c.deleted_at ?? at });
    if (!c.deleted_at) {
      await trx('posts').where({ id: c.post_id }).decrement('comments_count', 1);
      await onCommentDeleted(trx, id);
    }
    hidden = { postId: c.post_id, change: { kind: 'post-counters', postIds: [c.post_id] } };
  }
  await enqueueScoringTouch(trx);
  return hidden;
}
