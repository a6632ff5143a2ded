import crypto from 'crypto';
import Redis, { Cluster } from 'ioredis';
import { throttledWarning, type Logger } from '../log';
import { clientBackstopMs, withDeadline } from './deadline';
import {
  adoptionPrefixes,
  isFailOpen,
  limiterUnavailable,
  rateLimitHeaders,
  rejection,
  rulesFor,
  type RuleState,
} from './rules';
import {
  NOTHING_TAKEN,
  type LimitAction,
  type LimitHeaders,
  type Limiter,
  type LimitSubject,
  type Taken,
} from './types';

/**
 * One script decides one action: every rule of it (agent cap and gap, thread gap, owner cap)
 * is checked and, only when all pass, the attempt is recorded in all of them. Mirrors
 * evaluateRule() in rules.ts; the logs are sorted sets scored by milliseconds.
 *
 * KEYS[i]: the log of rule i (all share one hash tag). ARGV: now in ms ('' = Redis TIME),
 * unique member id, then (cap, gapMs, windowMs) per rule.
 * Returns {accepted 0|1, now, then per rule: count, oldest, last, capWait, gapWait}.
 */
export const LIMIT_SCRIPT = `
local function s(x) return string.format('%d', x) end
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local n = #KEYS
local st = {}
local ok = 1
for i = 1, n do
  local key = KEYS[i]
  local cap = tonumber(ARGV[3 * i])
  local gap = tonumber(ARGV[3 * i + 1])
  local W = tonumber(ARGV[3 * i + 2])
  local horizon = gap
  if cap > 0 and W > horizon then horizon = W end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. s(now - horizon))
  local count = redis.call('ZCOUNT', key, s(now - W), '+inf')
  local oldest = -1
  if count > 0 then
    oldest = tonumber(redis.call('ZRANGEBYSCORE', key, s(now - W), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)[2])
  end
  local last = -1
  local le = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #le > 0 then last = tonumber(le[2]) end
  local capWait, gapWait = 0, 0
  if cap > 0 and count >= cap then
    local e = redis.call('ZRANGEBYSCORE', key, s(now - W), '+inf', 'WITHSCORES', 'LIMIT', count - cap, 1)
    capWait = tonumber(e[2]) + W + 1 - now
  end
  if gap > 0 and last >= 0 then gapWait = last + gap - now end
  if capWait < 0 then capWait = 0 end
  if gapWait < 0 then gapWait = 0 end
  if capWait > 0 or gapWait > 0 then ok = 0 end
  st[i] = {count, oldest, last, capWait, gapWait, horizon}
end
if ok == 1 then
  local member = s(now) .. ':' .. ARGV[2]
  for i = 1, n do
    redis.call('ZADD', KEYS[i], now, member)
    redis.call('PEXPIRE', KEYS[i], st[i][6] + 1000)
    st[i][1] = st[i][1] + 1
    if st[i][2] < 0 then st[i][2] = now end
    if now > st[i][3] then st[i][3] = now end
  end
end
local out = {ok, now}
for i = 1, n do
  for j = 1, 5 do out[#out + 1] = st[i][j] end
end
return out
`;

export interface RedisLimiterOptions {
  /** One Redis server (REDIS_URL)... */
  url?: string;
  /** ...or the seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES). */
  clusterNodes?: { host: string; port: number }[];
  /** Prepended to every key (outside the hash tag): 'svc:' in production, random per test run. */
  keyPrefix?: string;
  /** Milliseconds clock passed to the script (tests move it); default: Redis server TIME. */
  clock?: () => number;
  /** Per-command timeout; past it the write fails closed. */
  commandTimeoutMs?: number;
  log?: Logger;
}

type LimitCommand = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/**
 * Distributed limiter. Fails closed: with the offline queue off and a command timeout, a dead
 * or stalled Redis answers an error at once, which becomes 429 RATE_LIMITER_UNAVAILABLE for
 * writes; reads (policies with failOpen) pass unlimited. The client reconnects forever with
 * capped backoff, so service resumes without a restart.
 */
export class RedisLimiter implements Limiter {
  readonly kind = 'redis';
  readonly redis: Redis | Cluster;
  private readonly prefix: string;
  private readonly clock?: () => number;
  private readonly log?: Logger;
  private readonly idBase = crypto.randomBytes(6).toString('hex');
  private seq = 0;
  private readonly noteError: (e: unknown) => void;
  private readonly timeoutMs: number;
  /** Longest wait for the first connection: one command timeout; a cluster's slot map first, a few. */
  private readonly firstWaitMs: number;
  /** Resolves at the first connection; until then commands wait for it (bounded), afterwards never. */
  private firstReady: Promise<void> | null;

  constructor(opts: RedisLimiterOptions) {
    this.prefix = opts.keyPrefix ?? 'svc:';
    this.clock = opts.clock;
    this.log = opts.log;
    this.noteError = throttledWarning(opts.log, 'rate limiter: Redis unavailable (writes fail closed, reads pass)');
    const timeout = opts.commandTimeoutMs ?? 250;
    this.timeoutMs = timeout;
    this.firstWaitMs = opts.clusterNodes?.length ? Math.max(1000, timeout * 4) : timeout;
    this.redis = connectRedis(opts, timeout);
    this.redis.defineCommand('svcLimit', { lua: LIMIT_SCRIPT });
    this.redis.on('error', (e) => this.noteError(e));
    this.redis.on('ready', () => this.log?.info('rate limiter: Redis connected'));
    const cluster = this.redis instanceof Cluster ? this.redis : null;
    // A cluster's node connections open lazily, on their first command: a burst meeting one still
    // opening waits on it past the command timeout. Each master is connected as soon as it is known.
    cluster?.on('+node', (node: Redis) => void node.ping().catch(() => undefined));
    this.firstReady = new Promise<void>((resolve) =>
      this.redis.once('ready', () => {
        if (!cluster) return resolve();
        // Bounded: a ping queued on a connection that is replaced meanwhile may never answer.
        const timer = setTimeout(resolve, this.firstWaitMs);
        void Promise.all(cluster.nodes('master').map((n) => n.ping().catch(() => undefined))).then(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
    );
    void this.firstReady.then(() => {
      this.firstReady = null;
    });
  }

  /**
   * Right after start the connection is still being made and, with the offline queue off, a
   * command would fail at once: wait for the first connection, at most one command timeout.
   * Once connected, an outage fails immediately (no waiting).
   */
  private async connected(): Promise<void> {
    if (!this.firstReady) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.firstReady, new Promise<void>((r) => (timer = setTimeout(r, this.firstWaitMs)))]);
    clearTimeout(timer);
  }

  async consume(action: LimitAction, subject: LimitSubject): Promise<LimitHeaders> {
    return (await this.take(action, subject)).headers;
  }

  async take(action: LimitAction, subject: LimitSubject): Promise<Taken> {
    const rules = rulesFor(action, subject, this.prefix);
    if (!rules) return NOTHING_TAKEN;
    const id = `${this.idBase}-${++this.seq}`;
    const args: (string | number)[] = [this.clock ? String(Math.floor(this.clock())) : '', id];
    for (const r of rules) args.push(r.cap, r.gapMs, r.windowMs);
    let reply: number[];
    try {
      await this.connected();
      const sent = (this.redis as unknown as { svcLimit: LimitCommand }).svcLimit(
        rules.length,
        ...rules.map((r) => r.key),
        ...args,
      );
      // Bounded as a whole (a cluster command may first wait on a node connection being made),
      // by a deadline that an event loop lagging past it does not trip (withDeadline).
      reply = await withDeadline(sent, this.timeoutMs, 'Redis command timed out');
    } catch (e) {
      this.noteError(e);
      if (isFailOpen(action)) return NOTHING_TAKEN;
      throw limiterUnavailable();
    }
    const [ok, now] = reply;
    const states: RuleState[] = rules.map((_, i) => {
      const o = 2 + i * 5;
      return {
        count: reply[o],
        oldest: reply[o + 1],
        last: reply[o + 2],
        capWaitMs: reply[o + 3],
        gapWaitMs: reply[o + 4],
      };
    });
    if (ok !== 1) throw rejection(rules, states, now);
    // The member the script added to every log (LIMIT_SCRIPT: now .. ':' .. id).
    const member = `${now}:${id}`;
    const refund = async () => {
      try {
        await Promise.all(rules.map((r) => this.redis.zrem(r.key, member)));
      } catch (e) {
        this.noteError(e);
      }
    };
    return { headers: rateLimitHeaders(rules, states, now), refund, settle: NOTHING_TAKEN.settle };
  }

  /**
   * Copies each log of the agent's old tag into the same log under the owner's tag (members are
   * unique, so a copy made twice counts once) and drops the old one. Not one script: in a Redis
   * Cluster the two tags live in different slots, so each command names one key. Keys of one
   * agent are few; SCAN finds them, on every master of a cluster (SCAN sees one node's keys).
   */
  async adopt(agentId: string, ownerId: string): Promise<void> {
    const { from, to } = adoptionPrefixes(this.prefix, agentId, ownerId);
    await this.connected();
    const nodes = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    const keys = new Set<string>();
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', `${from}*`, 'COUNT', 1000);
        cursor = next;
        for (const k of found) keys.add(k);
      } while (cursor !== '0');
    }
    for (const key of keys) {
      const [entries, ttl] = await Promise.all([this.redis.zrange(key, '0', '-1', 'WITHSCORES'), this.redis.pttl(key)]);
      const target = to + key.slice(from.length);
      if (entries.length) {
        const pairs: string[] = [];
        for (let i = 0; i < entries.length; i += 2) pairs.push(entries[i + 1], entries[i]);
        const targetTtl = await this.redis.pttl(target);
        await this.redis.zadd(target, ...pairs);
        await this.redis.pexpire(target, Math.max(ttl, targetTtl, 1000));
      }
      await this.redis.del(key);
    }
  }

  /**
   * Round trip for /health; rejects at once while Redis is unreachable. On a cluster every
   * master that serves slots must answer: one stopped master is an outage for its slots' writes.
   */
  async ping(): Promise<number> {
    await this.connected();
    const t0 = process.hrtime.bigint();
    if (this.redis instanceof Cluster) {
      const masters = this.redis.nodes('master');
      const connected = new Set(masters.map((n) => `${n.options.host}:${n.options.port}`));
      const serving = new Set(this.redis.slots.map((owners) => owners?.[0]).filter(Boolean));
      for (const key of serving)
        if (!connected.has(key)) throw new Error(`Redis Cluster master ${key} is not connected`);
      await withDeadline(Promise.all(masters.map((n) => n.ping())), this.timeoutMs, 'Redis command timed out');
    } else {
      await withDeadline(this.redis.ping(), this.timeoutMs, 'Redis command timed out');
    }
    return Number(process.hrtime.bigint() - t0) / 1e6;
  }

  async close(): Promise<void> {
    if (this.redis.status === 'ready') {
      try {
        await this.redis.quit();
        return;
      } catch {}
    }
    this.redis.disconnect();
  }
}

/**
 * A client that fails closed (the limiter's; read-your-writes marks use one too): the cluster
 * client when `clusterNodes` are given, else the one server at `url`. Callers bound each command
 * with withDeadline at `timeoutMs`.
 */
export function connectRedis(
  opts: { url?: string; clusterNodes?: { host: string; port: number }[] },
  timeoutMs: number,
): Redis | Cluster {
  return opts.clusterNodes?.length ? connectCluster(opts.clusterNodes, timeoutMs) : connectOne(opts.url, timeoutMs);
}

/**
 * The single-server client: no offline queue, reconnecting forever with capped backoff. Its own
 * command timeout is only a backstop (clientBackstopMs): callers bound each command with withDeadline.
 */
function connectOne(url: string | undefined, timeout: number): Redis {
  if (!url) throw new Error('RedisLimiter needs a url or clusterNodes');
  return new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: clientBackstopMs(timeout),
    maxRetriesPerRequest: 1,
    // A timed-out command must not be replayed after a reconnect: it was already answered 429.
    autoResendUnfulfilledCommands: false,
    connectTimeout: Math.max(1000, timeout * 4),
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
    lazyConnect: false,
  });
}

/**
 * The cluster client, failing closed the same way: no offline queue (a command while the slot map
 * is unknown fails at once), the command timeout on every node, and no delayed retries on
 * CLUSTERDOWN or TRYAGAIN. A command that meets a node connection being (re)made is retried
 * after 20 ms (without that, a burst on a fresh connection to a master fails but for its first
 * command); take() still answers within the command timeout. A stopped master's slots fail; the
 * others' keep working. The slot map is refreshed on MOVED and every few seconds, and the cluster
 * connection retries forever, so a master that returns is used again without a restart. As on one
 * server, the nodes' command timeout is a backstop and withDeadline bounds each call.
 */
function connectCluster(nodes: { host: string; port: number }[], timeout: number): Cluster {
  return new Cluster(nodes, {
    enableOfflineQueue: false,
    scaleReads: 'master',
    retryDelayOnClusterDown: 0,
    retryDelayOnFailover: 20,
    retryDelayOnTryAgain: 0,
    slotsRefreshTimeout: Math.max(1000, timeout * 4),
    slotsRefreshInterval: 5000,
    clusterRetryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 2000),
    redisOptions: {
      commandTimeout: clientBackstopMs(timeout),
      maxRetriesPerRequest: 1,
      autoResendUnfulfilledCommands: false,
      connectTimeout: Math.max(1000, timeout * 4),
    },
  });
}
