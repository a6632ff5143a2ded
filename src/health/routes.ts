import { route } from '../http/route';
import type { AppContext } from '../http/route';
import { dataEnvelope } from '../http/schemas';

async function timed(fn: () => Promise<unknown>, timeoutMs = 1000): Promise<{ ok: boolean; latencyMs: number }> {
  const t0 = process.hrtime.bigint();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
      }),
    ]);
    return { ok: true, latencyMs: Number(process.hrtime.bigint() - t0) / 1e6 };
  } catch {
    return { ok: false, latencyMs: Number(process.hrtime.bigint() - t0) / 1e6 };
  } finally {
    clearTimeout(timer);
  }
}

const round = (c: { ok: boolean; latencyMs: number }) => ({ ok: c.ok, latencyMs: Math.round(c.latencyMs * 100) / 100 });

const componentSchema = {
  type: 'object',
  required: ['ok', 'latencyMs'],
  properties: { ok: { type: 'boolean' }, latencyMs: { type: 'number' } },
} as const;
const replicaSchema = {
  type: 'object',
  required: ['name', 'ok', 'lagMs', 'latencyMs', 'inUse'],
  properties: {
    name: { type: 'string', description: 'host:port/database of the replica' },
    ok: { type: 'boolean', description: 'Answered its check' },
    lagMs: { type: ['number', 'null'], description: 'Replay lag in ms (null: unreachable)' },
    latencyMs: { type: 'number' },
    inUse: { type: 'boolean', description: 'Reachable and within DATABASE_READ_MAX_LAG_MS: serves lag-tolerant reads' },
  },
} as const;
const healthSchema = dataEnvelope({
  type: 'object',
  required: ['status', 'database', 'cache', 'queue'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'] },
    database: componentSchema,
    cache: componentSchema,
    queue: componentSchema,
    replicas: {
      type: 'array',
      description: 'Read replicas (DATABASE_READ_URL), when configured; one not in use sends its reads to the primary',
      items: replicaSchema,
    },
  },
});

export const healthRoutes = [
  route({
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Database, cache and job queue connectivity with measured latency; read replicas with their replay lag',
    tags: ['meta'],
    auth: 'public',
    responses: {
      200: { description: 'Healthy (status ok) or degraded (cache down)', schema: healthSchema },
      503: { description: 'Database unreachable (same body)', schema: healthSchema },
    },
    handler: async (ctx: AppContext) => {
      const { db, limiter, reads } = ctx.deps;
      const [database, cache, queue, replicas] = await Promise.all([
        timed(() => db.raw('select 1')),
        timed(() => limiter.ping(), 500),
        timed(() => db.raw('select 1 from graphile_worker._private_jobs limit 1')),
        reads?.replicas.check(),
      ]);
      const replicasOk = (replicas ?? []).every((r) => r.inUse);
      const status = database.ok && cache.ok && queue.ok && replicasOk ? 'ok' : 'degraded';
      ctx.status = database.ok ? 200 : 503;
      ctx.body = {
        data: {
          status,
          database: round(database),
          cache: round(cache),
          queue: round(queue),
          ...(replicas ? { replicas } : {}),
        },
      };
    },
  }),
];
