import crypto from 'crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../log';

/**
 * What a committed write changed, as far as the read caches care (src/caches.ts maps each kind to
 * the caches it empties). Whatever writes such data says so after its commit through
 * `deps.caches.changed(...)`: this process evicts at once and every other process hears it here.
 */
export type DataChange =
  /** A post created, deleted or edited: any feed page may change. */
  | { kind: 'posts' }
  /** Only these posts' counters (votes, reactions, comments): the feed pages that show them. */
  | { kind: 'post-counters'; postIds: readonly string[] }
  /** A community created or renamed. */
  | { kind: 'communities' }
  /** An agent's status, names or owner (feed authors, API-key principals, reputation). */
  | { kind: 'agents' }
  /** An API key revoked or its scopes changed. */
  | { kind: 'api-keys' }
  /**
   * Reputation scores written (scoring runs): those of `agentIds` only (their stored reputation or
   * the weights of what they received or authored), or of any agent when absent (a full
   * recompute, a run that cannot tell, a list past MAX_SCORED_AGENTS). A process of the previous
   * release reads it as the whole kind.
   */
  | { kind: 'scores'; agentIds?: readonly string[] }
  /** Leaderboard snapshots written or frozen (scoring runs). */
  | { kind: 'snapshots' };

/** The PostgreSQL channel every process publishes its changes on and every web process listens to. */
export const CHANGES_CHANNEL = 'svc_cache_changes';
/** NOTIFY payloads are limited to 8000 bytes: longer id lists are split over several notifications. */
const MAX_PAYLOAD = 7000;
/**
 * Notifications one flush sends at most (about 5,500 ids, 224 KB): past them, changes listing ids
 * become their whole kinds (counters of many posts a whole feed change, many agents' scores everyone's).
 */
const MAX_MESSAGES = 32;
/**
 * Agents a `scores` change lists at most (fits MAX_MESSAGES; the reputation cache holds 5,000
 * entries): a run that rescored more announces everyone's.
 */
export const MAX_SCORED_AGENTS = 5000;

/** The `scores` change of a run that rewrote the reputations of `agentIds` (null: of anyone). */
export function scoresChanged(agentIds: readonly string[] | null): DataChange[] {
  if (agentIds === null || agentIds.length > MAX_SCORED_AGENTS) return [{ kind: 'scores' }];
  return agentIds.length === 0 ? [] : [{ kind: 'scores', agentIds }];
}
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;

export interface Message {
  /** The publishing process: it evicted its own caches already. */
  o: string;
  c: DataChange[];
}

/**
 * Cross-process cache eviction over PostgreSQL LISTEN/NOTIFY, on one dedicated connection per
 * process (not a pool connection, so a request never waits for it and the pool's statements stay
 * the requests'). Changes published in the same tick go out as one NOTIFY; NOTIFY is delivered
 * only after it is committed, and to every listener, in order.
 *
 * A listening process (web) that loses its connection reconnects with backoff and, once listening
 * again, empties every cache (`onResync`): notifications sent meanwhile are lost. Should a
 * notification be lost anyway, each cache's TTL bounds how long a stale entry can live.
 */
export class ChangeBus {
  readonly origin = crypto.randomUUID();
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private queued: DataChange[] = [];
  private flushing: Promise<void> | null = null;
  private waiters: (() => void)[] = [];
  private listener: ((changes: DataChange[]) => void) | null = null;
  private onResync: (() => void) | null = null;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /** Listens from now on (web processes): `apply` gets other processes' changes, `resync` runs after every reconnection. */
  async listen(apply: (changes: DataChange[]) => void, resync: () => void): Promise<void> {
    this.listener = apply;
    this.onResync = resync;
    try {
      await this.connection();
    } catch (e) {
      // The database may be down at start: keep trying in the background.
      this.log.warn({ err: { message: (e as Error).message } }, 'cache change listener: not connected yet; retrying');
      this.scheduleReconnect();
    }
  }

  /**
   * True while this process listens (since its last resync): no notification committed meanwhile
   * has been missed.
   */
  get listening(): boolean {
    return this.listener !== null && this.client !== null;
  }

  /**
   * Sends `changes` to the other processes from inside the write's transaction (`trx`): the
   * notification is delivered when, and only if, it commits, so it cannot be lost as a publish
   * after the commit can (the process stopping first, its connection failing). A commit with a
   * NOTIFY waits for every other such commit, so only rare writes use it (a revoked key, a
   * suspended agent). This process's own caches are evicted after the commit, as with publish().
   */
  async announceIn(trx: Knex.Transaction, changes: readonly DataChange[]): Promise<void> {
    if (changes.length === 0) return;
    await trx.raw('select pg_notify(?, m) from unnest(?::text[]) m', [CHANGES_CHANNEL, encode(this.origin, changes)]);
  }

  /** Sends `changes` to the other processes; resolves once they are sent (or could not be: the TTL covers it). */
  publish(changes: readonly DataChange[]): Promise<void> {
    if (this.closed || changes.length === 0) return Promise.resolve();
    this.queued.push(...changes);
    const sent = new Promise<void>((r) => this.waiters.push(r));
    if (!this.flushing) this.flushing = new Promise<void>((r) => setImmediate(r)).then(() => this.flush());
    return sent;
  }

  private async flush(): Promise<void> {
    while (this.queued.length > 0) {
      const changes = this.queued;
      const waiters = this.waiters;
      this.queued = [];
      this.waiters = [];
      try {
        const client = await this.connection();
        // One statement: its notifications are delivered together, once it commits.
        await client.query({
          name: 'cache_changes_notify',
          text: 'select pg_notify($1, m) from unnest($2::text[]) m',
          values: [CHANGES_CHANNEL, encode(this.origin, changes)],
        });
      } catch (e) {
        this.log.warn(
          { err: { message: (e as Error).message } },
          'cache changes not published; other processes see them within their TTL',
        );
      }
      for (const w of waiters) w();
    }
    this.flushing = null;
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client> {
    if (this.closed) throw new Error('cache change bus closed');
    const client = new pg.Client({ connectionString: this.connectionString, connectionTimeoutMillis: 3000 });
    client.on('error', (e) => this.lost(client, e));
    client.on('end', () => this.lost(client, null));
    await client.connect();
    if (this.listener) {
      client.on('notification', (n) => {
        if (n.channel !== CHANGES_CHANNEL || !n.payload) return;
        const m = decode(n.payload);
        if (m && m.o !== this.origin) this.listener?.(m.c);
      });
      await client.query(`listen ${CHANGES_CHANNEL}`);
      // Whatever was published while this process was not listening is lost: start from empty caches.
      this.onResync?.();
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('cache change bus closed');
    }
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    return client;
  }

  private lost(client: pg.Client, e: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    if (this.closed) return;
    if (e) this.log.warn({ err: { message: e.message } }, 'cache change connection lost');
    if (this.listener) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.retryTimer || this.closed) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connection().then(
        () => this.log.info('cache change listener connected'),
        () => this.scheduleReconnect(),
      );
    }, wait);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    await this.flushing;
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.client ?? (await this.connecting?.catch(() => null)) ?? null;
    this.client = null;
    await c?.end().catch(() => undefined);
  }
}

/** The id list of a change that narrows its kind, if any. */
function idsOf(c: DataChange): readonly string[] | undefined {
  return c.kind === 'post-counters' ? c.postIds : c.kind === 'scores' ? c.agentIds : undefined;
}

function withIds(c: DataChange, ids: readonly string[]): DataChange {
  return c.kind === 'post-counters' ? { kind: c.kind, postIds: ids } : { kind: 'scores', agentIds: ids };
}

/** The whole kind a change listing ids stands for. */
function whole(c: DataChange): DataChange {
  return c.kind === 'post-counters' ? { kind: 'posts' } : { kind: 'scores' };
}

/**
 * The NOTIFY payloads of `changes`: one when it fits, else the changes without ids in the first
 * and each id list split over as many as it takes; past MAX_MESSAGES, one with the whole kinds.
 */
export function encode(origin: string, changes: readonly DataChange[]): string[] {
  const message = (c: DataChange[]) => JSON.stringify({ o: origin, c } satisfies Message);
  const out = message([...changes]);
  if (out.length <= MAX_PAYLOAD) return [out];
  const plain = changes.filter((c) => idsOf(c) === undefined);
  const messages = plain.length > 0 ? [message(plain)] : [];
  for (const c of changes) {
    const ids = idsOf(c);
    if (ids === undefined) continue;
    let room = MAX_PAYLOAD - message([withIds(c, [])]).length;
    let chunk: string[] = [];
    for (const id of ids) {
      const size = JSON.stringify(id).length + 1;
      if (size > room && chunk.length > 0) {
        messages.push(message([withIds(c, chunk)]));
        room = MAX_PAYLOAD - message([withIds(c, [])]).length;
        chunk = [];
      }
      chunk.push(id);
      room -= size;
    }
    if (chunk.length > 0) messages.push(message([withIds(c, chunk)]));
  }
  if (messages.length <= MAX_MESSAGES) return messages;
  return [message(changes.map((c) => (idsOf(c) === undefined ? c : whole(c))))];
}

const KINDS = new Set(['posts', 'post-counters', 'communities', 'agents', 'api-keys', 'scores', 'snapshots']);

const isIdList = (x: unknown): x is string[] => Array.isArray(x) && x.every((id) => typeof id === 'string');

export function decode(payload: string): Message | null {
  try {
    const m = JSON.parse(payload) as Message;
    if (typeof m?.o !== 'string' || !Array.isArray(m.c)) return null;
    const c = m.c
      .filter((x) => x && KINDS.has(x.kind) && (x.kind !== 'post-counters' || isIdList(x.postIds)))
      // A scores change whose list is unreadable is everyone's.
      .map((x) =>
        x.kind === 'scores' && x.agentIds !== undefined && !isIdList(x.agentIds) ? { kind: 'scores' as const } : x,
      );
    return { o: m.o, c };
  } catch {
    return null;
  }
}
