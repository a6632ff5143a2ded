import type { Config } from '../config';
import type { Logger } from '../log';
import { MemoryLimiter } from './memory';
import type { Limiter } from './types';

/** Redis limiter when REDIS_URL is set; otherwise the single-process in-memory one (dev only). */
export function createLimiter(config: Config, log: Logger): Limiter {
  if (!config.redisUrl) {
    log.warn('REDIS_URL is not set: using the in-memory rate limiter, correct for a single process only');
    return new MemoryLimiter();
  }
  throw new Error('Redis limiter not built yet');
}
