import crypto from 'crypto';
import type { Knex } from 'knex';
import type { Config } from '../config';
import { connectRedis } from '../limits/redis';
import type { Logger } from '../log';
import { createDb } from './knex';
import { createQuery, type Query } from './query';
import { RecentWrites } from './recent-writes';

/** How often replicas are checked (reachability and replay lag) in the background. */
export const REPLICA_CHECK_MS = 1000;
/** A check that takes longer than this counts as unreachable. */
const CHECK_TIMEOUT_MS = 1000;

export interface ReplicaStatus {
  /** host:port/database, never the credentials. */
  name: string;
  ok: boolean;
  /** Replay lag in ms at the last check (null: unreachable). */
  lagMs: number | null;
  latencyMs: number;
  /** Reachable and within the lag bound: lag-tolerant reads may go there. */
  inUse: boolean;
}

/** A URL as it may be logged or shown: host, port and database, no user or password. */
export function replicaName(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
}

/**
 * What a standby has replayed, and a fallback lag: 0 when it has replayed all it received, else
 * the age of the last transaction it replayed (used when the primary cannot be sampled). A server
 * not in recovery (a promoted replica) has no lag.
 */
const REPLICA_SQL = `select pg_last_wal_replay_lsn()::text as replay, case
    when not pg_is_in_recovery() then 0
    when pg_last_wal_receive_lsn() is not distinct from pg_last_wal_replay_lsn() then 0
    else coalesce(extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000, 0)
  end::float8 as lag_ms, pg_is_in_recovery() as standby`;

/** 'X/Y' (pg_lsn as text) as a number. */
function lsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt('0x' + hi) << 32n) | BigInt('0x' + lo);
}

/**
 * Replay lag from the primary's WAL positions sampled at each check: how long ago the primary
 * had written the first WAL the replica has not replayed (0: it replayed all the primary had at
 * the last sample). Unlike the age of the last replayed transaction, it does not grow while the
 * primary is idle or writes only background WAL (autovacuum). Null: no sample to compare with.
 */
export function lagFromSamples(
  samples: readonly { at: number; lsn: bigint }[],
  replay: bigint,
  now: number,
): number | null {
  if (!samples.length) return null;
  if (replay >= samples[samples.length - 1].lsn) return 0;
  let i = samples.length - 1;
  while (i > 0 && samples[i - 1].lsn > replay) i--;
  return Math.max(0, now - samples[i].at);
}

class Replica {
  readonly name: string;
  readonly db: Knex;
  /** The named statements (deps.query) run on this replica's pool. */
  readonly query: Query;
  status: ReplicaStatus;
  /** False until the first check: its outcome is logged whatever it is. */
  checked = false;

  constructor(url: string, poolMax: number, log: Logger) {
    this.name = replicaName(url);
    // Errors only from the pool itself: ReadReplicas says once each way when this replica goes
    // out of use and back, and the pool would repeat its connection warnings every few seconds.
    this.db = createDb(url, poolMax, log.child({ replica: this.name }, { level: 'error' }), true);
    this.query = createQuery(this.db);
    // Unused until its first check says it is reachable and close enough.
    this.status = { name: this.name, ok: false, lagMs: null, latencyMs: 0, inUse: false };
  }
}

/**
 * PostgreSQL read replicas (DATABASE_READ_URL) for lag-tolerant reads. Each replica is checked
 * every second (reachability and replay lag); a replica that does not answer or lags more than
 * `maxLagMs` is skipped until a check finds it fit again, each change said once in the log. `pick()`
 * answers a replica in use (round robin) or null: the primary then serves the read.
 */
export class ReadReplicas {
  private readonly replicas: Replica[];
  private next = 0;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<ReplicaStatus[]> | null = null;
  /** The primary's WAL position at each check, oldest first (bounded). */
  private samples: { at: number; lsn: bigint }[] = [];

  constructor(
    urls: string[],
    readonly maxLagMs: number,
    private readonly log: Logger,
    poolMax = 10,
    /** The primary, whose WAL position each check samples to measure the replicas' lag. */
    private readonly primary?: Knex,
  ) {
    this.replicas = urls.map((u) => new Replica(u, poolMax, log));
  }

  /** Checks now, then every REPLICA_CHECK_MS in the background (web processes). */
  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), REPLICA_CHECK_MS);
    this.timer.unref();
  }

  /** A replica for a lag-tolerant read, or null (none configured, none fit): use the primary. */
  pick(): { name: string; db: Knex; query: Query } | null {
    const n = this.replicas.length;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.next + i) % n];
      if (r.status.inUse) {
        this.next = (this.next + i + 1) % n;
        return r;
      }
    }
    return null;
  }

  /** A read on this replica failed as if it were down: skip it until the next check finds it fit. */
  failed(name: string, err: unknown): void {
    const r = this.replicas.find((x) => x.name === name);
    if (!r || !r.status.inUse) return;
    this.update(r, { ...r.status, ok: false, lagMs: null, inUse: false }, (err as Error)?.message);
    void this.check();
  }

  /** Checks every replica now (one check at a time) and answers their status (/health). */
  check(): Promise<ReplicaStatus[]> {
    this.checking ??= (async () => {
      await this.samplePrimary();
      return Promise.all(this.replicas.map((r) => this.checkOne(r)));
    })().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  statuses(): ReplicaStatus[] {
    return this.replicas.map((r) => r.status);
  }

  private async samplePrimary(): Promise<void> {
    if (!this.primary) return;
    try {
      const { rows } = await bounded(this.primary.raw('select pg_current_wal_lsn()::text as lsn'));
      this.samples.push({ at: Date.now(), lsn: lsn(rows[0].lsn) });
      // Enough to measure lags well past the bound; older samples tell nothing new.
      const horizon = Date.now() - this.maxLagMs - 60_000;
      while (this.samples.length > 1 && (this.samples[0].at < horizon || this.samples.length > 5000))
        this.samples.shift();
    } catch {
      // The primary's own outage is /health's database line; the fallback lag applies meanwhile.
    }
  }

  private async checkOne(r: Replica): Promise<ReplicaStatus> {
    const t0 = performance.now();
    let timer: NodeJS.Timeout | undefined;
    let next: ReplicaStatus;
    let why: string | undefined;
    try {
      const { rows } = await Promise.race([
        r.db.raw(REPLICA_SQL),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('check timed out')), CHECK_TIMEOUT_MS);
        }),
      ]);
      const row = rows[0];
      const sampled = row.standby && row.replay ? lagFromSamples(this.samples, lsn(row.replay), Date.now()) : null;
      const lagMs = Math.round(sampled ?? Number(row.lag_ms));
      next = { name: r.name, ok: true, lagMs, latencyMs: 0, inUse: lagMs <= this.maxLagMs };
    } catch (e) {
      why = (e as Error)?.message;
      next = { name: r.name, ok: false, lagMs: null, latencyMs: 0, inUse: false };
    } finally {
      clearTimeout(timer);
    }
    next.latencyMs = Math.round((performance.now() - t0) * 100) / 100;
    this.update(r, next, why);
    return next;
  }

  /** Records a status, logging once when the replica leaves or rejoins service. */
  private update(r: Replica, next: ReplicaStatus, why?: string): void {
    const before = r.status;
    const first = !r.checked;
    r.checked = true;
    r.status = next;
    if (!first && before.inUse === next.inUse && before.ok === next.ok) return;
    if (next.inUse) this.log.info({ replica: r.name, lagMs: next.lagMs }, 'read replica in use');
    else if (!next.ok)
      this.log.warn(
        { replica: r.name, err: { message: why } },
        'read replica unreachable: its reads go to the primary',
      );
    else
      this.log.warn(
        { replica: r.name, lagMs: next.lagMs, maxLagMs: this.maxLagMs },
        'read replica lags beyond DATABASE_READ_MAX_LAG_MS: its reads go to the primary',
      );
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking?.catch(() => undefined);
    await Promise.all(this.replicas.map((r) => r.db.destroy()));
  }
}

/**
 * Where a lag-tolerant read goes: a replica in use, unless the principal wrote within the
 * read-your-writes window (then, like every other read and every write, the primary).
 */
export class ReadRouting {
  constructor(
    readonly replicas: ReadReplicas,
    readonly writes: RecentWrites,
  ) {}

  /**
   * Where this read by these principals (none: anonymous) runs: a replica, or the primary
   * (replica null). `ownWrite`: the primary because the caller wrote within the window, so the
   * read must not be answered from a per-process cache a replica read may have filled.
   */
  async forRead(
    principalIds: readonly string[],
  ): Promise<{ replica: { name: string; db: Knex; query: Query } | null; ownWrite: boolean }> {
    const r = this.replicas.pick();
    if (!r) return { replica: null, ownWrite: false };
    return (await this.writes.recent(principalIds))
      ? { replica: null, ownWrite: true }
      : { replica: r, ownWrite: false };
  }

  noteWrite(principalIds: readonly string[]): Promise<void> {
    return this.writes.note(principalIds);
  }

  async close(): Promise<void> {
    await this.replicas.close();
    await this.writes.close();
  }
}

/**
 * The read routing of a process from its configuration: undefined without DATABASE_READ_URL
 * (every read on the primary, nothing else changes). The read-your-writes window is the lag
 * bound plus one check: a replica in use is never further behind than that.
 */
export function createReadRouting(
  config: Config,
  log: Logger,
  opts: { keyPrefix?: string; primary?: Knex } = {},
): ReadRouting | undefined {
  if (!config.databaseReadUrls.length) return undefined;
  const windowMs = config.databaseReadMaxLagMs + REPLICA_CHECK_MS;
  const redis =
    config.redisUrl || config.redisClusterNodes
      ? connectRedis(
          { url: config.redisUrl ?? undefined, clusterNodes: config.redisClusterNodes ?? undefined },
          config.redisCommandTimeoutMs,
        )
      : null;
  redis?.on('error', () => undefined); // RecentWrites logs its own failures, once per 5 s
  const prefix =
    opts.keyPrefix ?? (config.nodeEnv === 'test' ? `svc:test:${crypto.randomBytes(6).toString('hex')}:` : 'svc:');
  return new ReadRouting(
    new ReadReplicas(config.databaseReadUrls, config.databaseReadMaxLagMs, log, config.dbPoolMax, opts.primary),
    new RecentWrites(windowMs, redis, prefix, config.redisCommandTimeoutMs, log),
  );
}

/** Rejects after CHECK_TIMEOUT_MS. */
async function bounded<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('check timed out')), CHECK_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
