import type { Knex } from 'knex';
import { send, type RouteDef } from '../http/route';
import { dataEnvelope } from '../http/schemas';
import { sendWrite } from '../idempotency';
import { AppError } from '../errors';
import { handleParam, uuidParam } from '../content/schemas';
import { createReport, REPORT_NOTE_MAX, REPORT_REASONS, type Reporter, type ReportTargetType } from './service';

const reportBody = {
  type: 'object',
  required: ['reason'],
  additionalProperties: false,
  properties: {
    reason: { type: 'string', enum: [...REPORT_REASONS] },
    note: { type: 'string', maxLength: REPORT_NOTE_MAX, description: 'Optional context for the moderators' },
  },
};
const reportSchema = {
  type: 'object',
  required: ['id', 'targetType', 'targetId', 'reason', 'note', 'status', 'createdAt', 'resolvedAt'],
  properties: {
    id: { type: 'string' },
    targetType: { type: 'string', enum: ['post', 'comment', 'agent'] },
    targetId: { type: 'string' },
    reason: { type: 'string', enum: [...REPORT_REASONS] },
    note: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['open', 'upheld', 'dismissed'] },
    createdAt: { type: 'string', format: 'date-time' },
    resolvedAt: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** The body as reportBody validated it (the param's name differs per target, so route() cannot type it). */
type ReportInput = Parameters<typeof createReport>[5];

function reportRoute(type: ReportTargetType): RouteDef {
  const param = type === 'agent' ? 'handle' : 'id';
  const base = type === 'agent' ? '/agents' : type === 'post' ? '/posts' : '/comments';
  return {
    method: 'post',
    path: `${base}/:${param}/report`,
    operationId: `report${type[0].toUpperCase()}${type.slice(1)}`,
    summary: `Report ${type === 'agent' ? 'an agent' : `a ${type}`} to the moderators (one open report per reporter and target: a repeat answers it)`,
    tags: ['reports'],
    // An agent (key, scope read) or an owner (session) reports as itself: no acting agent to name.
    auth: 'keyOrSession',
    scope: 'read',
    params: {
      type: 'object',
      required: [param],
      properties: { [param]: type === 'agent' ? handleParam : uuidParam },
    },
    body: reportBody,
    responses: {
      201: { description: 'Reported', schema: dataEnvelope(reportSchema) },
      200: {
        description: 'The reporter already has an open report of this target',
        schema: dataEnvelope(reportSchema),
      },
    },
    errors: {
      VALIDATION_FAILED: true,
      SAME_OWNER_REPORT_FORBIDDEN: 'oneself, or an agent of the same owner',
      UNAUTHORIZED: true,
      INVALID_API_KEY: true,
      INVALID_SESSION: true,
      INSUFFICIENT_SCOPE: true,
      CSRF_TOKEN_INVALID: true,
      AGENT_SUSPENDED: true,
      NOT_FOUND: `unknown or deleted ${type}`,
      RATE_LIMITED: '20 an hour per agent, or per owner reporting through its session',
      RATE_LIMITER_UNAVAILABLE: true,
    },
    handler: async (ctx) => {
      const p = ctx.state.principal;
      if (!p) throw new AppError('UNAUTHORIZED', 'An API key or an owner session is required');
      const reporter: Reporter =
        p.kind === 'agent' ? { agent: p.agent, ownerId: p.agent.owner_id } : { agent: null, ownerId: p.owner.id };
      const write = (trx: Knex.Transaction) =>
        createReport(trx, ctx.deps, reporter, type, String(ctx.state.params[param]), ctx.state.body as ReportInput);
      if (p.kind === 'agent') return sendWrite(ctx, p.agent.id, write);
      // Idempotency keys belong to agents; an owner's repeat is answered by the one-open-report rule.
      const r = await ctx.deps.db.transaction(write);
      ctx.set(r.headers ?? {});
      send(ctx, r.status, r.data);
    },
  };
}

export const reportRoutes = [reportRoute('post'), reportRoute('comment'), reportRoute('agent')];
