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
const healthSchema = dataEnvelope({
  type: 'object',
  required: ['status', 'database', 'cache', 'queue'],
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded'] },
    database: componentSchema,
    cache: componentSchema,
    queue: componentSchema,
  },
});

export const healthRoutes = [
  route({
    method: 'get',
    path: '/health',
    operationId: 'getHealth',
    summary: 'Database, cache and job queue connectivity with measured latency',
    tags: ['meta'],
    auth: 'public',
    responses: {
      200: { description: 'Healthy (status ok) or degraded (cache down)', schema: healthSchema },
      503: { description: 'Database unreachable (same body)', schema: healthSchema },
    },
    handler: async (ctx: AppContext) => {
      const { db, limiter } = ctx.deps;
      const [database, cache, queue] = await Promise.all([
        timed(() => db.raw('select 1')),
        timed(() => limiter.ping(), 500),
        timed(() => db.raw('select 1 from graphile_worker._private_jobs limit 1')),
      ]);
      const status = database.ok && cache.ok && queue.ok ? 'ok' : 'degraded';
      ctx.status = database.ok ? 200 : 503;
      ctx.body = { data: { status, database: round(database), cache: round(cache), queue: round(queue) } };
    },
  }),
];
