/**
 * Every setting comes from the environment, read and validated once. A bad or missing
 * variable stops the process with a message that names it. Dev defaults exist only where
 * they are safe (a random-looking but fixed SESSION_SECRET is refused in production).
 */
export type NodeEnv = 'development' | 'test' | 'production';

export interface Config {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  publicUrl: string;
  /** null: no DATABASE_URL given, the dev launcher starts an embedded PostgreSQL. */
  databaseUrl: string | null;
  /**
   * DATABASE_READ_URL: PostgreSQL read replicas (comma-separated URLs) for lag-tolerant reads;
   * empty: every read goes to DATABASE_URL.
   */
  databaseReadUrls: string[];
  /**
   * A replica lagging more than this is skipped; a principal's reads within this (plus one health
   * check) after its own write go to the primary (read-your-writes).
   */
  databaseReadMaxLagMs: number;
  /** null: no REDIS_URL, the single-process in-memory limiter is used. */
  redisUrl: string | null;
  /**
   * REDIS_CLUSTER_NODES: seed nodes of a Redis Cluster ('host:port', comma-separated); the limiter
   * then uses the cluster client (null: a single Redis at REDIS_URL, or none). Never both.
   */
  redisClusterNodes: { host: string; port: number }[] | null;
  sessionSecret: string;
  webhookAllowPrivate: boolean;
  logLevel: string;
  workerConcurrency: number;
  scoringPoolSize: number;
  /** A worker silent this long is presumed dead and its job locks are released. */
  workerStaleSeconds: number;
  dataDir: string;
  embeddedPgPort: number;
  redisCommandTimeoutMs: number;
  dbPoolMax: number;
  /**
   * Reverse proxies in front of the web process that append the client address to
   * X-Forwarded-For. 0: the header is ignored (a client could write any address into it and
   * escape the per-IP limits); N: the client is the Nth address from the right.
   */
  trustProxyHops: number;
  /**
   * Longest time a client may take to send one whole request (headers and body): a client that
   * trickles bytes holds a connection no longer than this (408). Headers get 2/3 of it.
   */
  requestTimeoutMs: number;
}

export class ConfigError extends Error {}

const DEV_SESSION_SECRET = 'dev-only-session-secret-change-me-in-production-0000';

function intVar(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

function boolVar(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function urlVar(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${u.protocol}`);
  }
  return raw;
}

/** 'host:port,host:port' (a bare host means port 6379). */
function nodesVar(env: NodeJS.ProcessEnv, name: string): { host: string; port: number }[] | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  return raw.split(',').map((item) => {
    const m = /^\s*([A-Za-z0-9_.-]+|\[[0-9a-fA-F:.]+\])(?::(\d{1,5}))?\s*$/.exec(item);
    const port = m?.[2] === undefined ? 6379 : Number(m[2]);
    if (!m || port < 1 || port > 65535)
      throw new ConfigError(`${name} must be host:port entries separated by commas, got "${item.trim()}"`);
    return { host: m[1].replace(/^\[|\]$/g, ''), port };
  });
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const nodeEnvRaw = env.NODE_ENV || 'development';
  if (!['development', 'test', 'production'].includes(nodeEnvRaw)) {
    throw new ConfigError(`NODE_ENV must be development, test or production, got "${nodeEnvRaw}"`);
  }
  const nodeEnv = nodeEnvRaw as NodeEnv;
  const prod = nodeEnv === 'production';
  const port = intVar(env, 'PORT', 3000, 0, 65535);
  const databaseUrl = urlVar(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = urlVar(env, 'REDIS_URL', ['redis:', 'rediss:']);
  if (prod && !databaseUrl) throw new ConfigError('DATABASE_URL is required in production');
  const databaseReadUrls = (env.DATABASE_READ_URL ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u) => urlVar({ DATABASE_READ_URL: u }, 'DATABASE_READ_URL', ['postgres:', 'postgresql:'])!);
  if (databaseReadUrls.length && !databaseUrl)
    throw new ConfigError('DATABASE_READ_URL needs DATABASE_URL (the primary)');
  const redisClusterNodes = nodesVar(env, 'REDIS_CLUSTER_NODES');
  if (redisUrl && redisClusterNodes) throw new ConfigError('set REDIS_URL or REDIS_CLUSTER_NODES, not both');
  if (prod && !redisUrl && !redisClusterNodes)
    throw new ConfigError(
      'REDIS_URL (or REDIS_CLUSTER_NODES) is required in production (the in-memory limiter is single-process only)',
    );

  let sessionSecret = env.SESSION_SECRET || '';
  if (!sessionSecret) {
    if (prod) throw new ConfigError('SESSION_SECRET is required in production (at least 32 characters)');
    sessionSecret = DEV_SESSION_SECRET;
  } else if (sessionSecret.length < 32) {
    throw new ConfigError('SESSION_SECRET must be at least 32 characters');
  }

  const publicUrlRaw = urlVar(env, 'PUBLIC_URL', ['http:', 'https:']);
  const publicUrl = (publicUrlRaw ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const webhookAllowPrivate = boolVar(env, 'WEBHOOK_ALLOW_PRIVATE', false);
  if (prod && webhookAllowPrivate) throw new ConfigError('WEBHOOK_ALLOW_PRIVATE must not be set in production');

  const logLevel = env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${logLevel}"`);
  }

  return Object.freeze({
    nodeEnv,
    port,
    host: env.HOST || '0.0.0.0',
    publicUrl,
    databaseUrl,
    databaseReadUrls,
    databaseReadMaxLagMs: intVar(env, 'DATABASE_READ_MAX_LAG_MS', 5000, 0, 3_600_000),
    redisUrl,
    redisClusterNodes,
    sessionSecret,
    webhookAllowPrivate,
    logLevel,
    workerConcurrency: intVar(env, 'WORKER_CONCURRENCY', 4, 1, 64),
    scoringPoolSize: intVar(env, 'SCORING_POOL_SIZE', 2, 1, 32),
    workerStaleSeconds: intVar(env, 'WORKER_STALE_SECONDS', 30, 2, 3600),
    dataDir: env.DATA_DIR || '.data',
    embeddedPgPort: intVar(env, 'EMBEDDED_PG_PORT', 54329, 1024, 65535),
    redisCommandTimeoutMs: intVar(env, 'REDIS_COMMAND_TIMEOUT_MS', 250, 10, 10000),
    dbPoolMax: intVar(env, 'DB_POOL_MAX', 10, 1, 200),
    trustProxyHops: intVar(env, 'TRUST_PROXY_HOPS', 0, 0, 10),
    requestTimeoutMs: intVar(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 300_000),
  });
}

/** The configuration, or the process stops with one line naming what is wrong. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`configuration error: ${e.message}`);
      process.exit(1);
    }
    throw e;
  }
}
