import crypto from 'crypto';
import type { Config } from '../config';
import type { Logger } from '../log';
import { MemoryLimiter } from './memory';
import { RedisLimiter } from './redis';
import { SettlingLimiter } from './settling';
import type { Limiter } from './types';

export interface CreateLimiterOptions {
  /** Key prefix; default 'svc:', and a random one per process under NODE_ENV=test (isolated runs). */
  keyPrefix?: string;
  /** Milliseconds clock (tests tie it to deps.now()); default: Redis server TIME / Date.now. */
  clock?: () => number;
}

/**
 * Redis limiter when REDIS_URL (one server) or REDIS_CLUSTER_NODES (a Redis Cluster) is set; otherwise the single-process in-memory one (dev only).
 * Either way refused attempts wait for this process's in-flight ones to settle (settling.ts).
 */
export function createLimiter(config: Config, log: Logger, opts: CreateLimiterOptions = {}): Limiter {
  const keyPrefix =
    opts.keyPrefix ?? (config.nodeEnv === 'test' ? `svc:test:${crypto.randomBytes(6).toString('hex')}:` : 'svc:');
  if (!config.redisUrl && !config.redisClusterNodes) {
    log.warn('REDIS_URL is not set: using the in-memory rate limiter, correct for a single process only');
    return new SettlingLimiter(new MemoryLimiter({ clock: opts.clock, keyPrefix }));
  }
  return new SettlingLimiter(
    new RedisLimiter({
      url: config.redisUrl ?? undefined,
      clusterNodes: config.redisClusterNodes ?? undefined,
      keyPrefix,
      clock: opts.clock,
      commandTimeoutMs: config.redisCommandTimeoutMs,
      log,
    }),
  );
}
