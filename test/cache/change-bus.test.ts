import { expect } from 'chai';
import pg from 'pg';
import { getContext } from '../helpers/context';
import { createLogger } from '../../src/log';
import {
  CHANGES_CHANNEL,
  ChangeBus,
  DataChange,
  LISTENER_SETTLE_MS,
  LISTENERS_FRESH_MS,
  registerListener,
} from '../../src/cache/change-bus';

/**
 * Each ChangeBus here stands for one process (its own connection). A publisher tells only
 * registered listeners; alone, it skips the NOTIFY round trip, and a listener that registers
 * later empties its caches again once every publisher has seen it.
 */
describe('cache change bus: publishers tell only registered listeners', () => {
  const log = createLogger('silent');
  const buses: ChangeBus[] = [];
  const clients: pg.Client[] = [];
  const bus = () => {
    const b = new ChangeBus(databaseUrl, log);
    buses.push(b);
    return b;
  };
  let databaseUrl = '';
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** A plain LISTEN connection (registered or not) and the changes it hears. */
  async function rawListener(register: boolean): Promise<DataChange[][]> {
    const c = new pg.Client({ connectionString: databaseUrl });
    clients.push(c);
    await c.connect();
    const heard: DataChange[][] = [];
    c.on('notification', (n) => heard.push(JSON.parse(n.payload ?? '{}').c));
    await c.query(`listen ${CHANGES_CHANNEL}`);
    if (register) await registerListener(c);
    return heard;
  }
  /** Waits until `c` has had the time to receive what was committed before (NOTIFY is asynchronous). */
  const drained = async (heard: unknown[], expected: number) => {
    for (let i = 0; i < 100 && heard.length < expected; i++) await sleep(10);
  };

  // A database of its own: the test context's web app listens (registered) on the test database.
  let admin: pg.Client;
  const dbName = `svc_bus_${process.pid}_${Date.now().toString(36)}`;
  before(async () => {
    const u = new URL((await getContext()).databaseUrl);
    u.pathname = '/postgres';
    admin = new pg.Client({ connectionString: u.toString() });
    await admin.connect();
    await admin.query(`create database ${dbName}`);
    u.pathname = '/' + dbName;
    databaseUrl = u.toString();
  });
  after(async () => {
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  });
  afterEach(async () => {
    for (const b of buses.splice(0)) await b.close();
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
    // Later tests start with no finding of any publisher in force.
    await sleep(LISTENERS_FRESH_MS);
  });

  it('a registered listener in another process hears every change (any LISTEN then hears it too)', async () => {
    const heard: DataChange[][] = [];
    const listener = bus();
    await listener.listen(
      (c) => heard.push(c),
      () => undefined,
    );
    const unregistered = await rawListener(false);
    const publisher = bus();
    await publisher.publish([{ kind: 'posts' }]);
    await publisher.publish([{ kind: 'post-counters', postIds: ['p1'] }]);
    await drained(heard, 2);
    expect(heard).to.deep.equal([[{ kind: 'posts' }], [{ kind: 'post-counters', postIds: ['p1'] }]]);
    // The NOTIFY went out for the registered listener; any connection listening hears it.
    expect(unregistered.length).to.equal(2);
  });

  it('a publisher with no other registered listener sends no NOTIFY; one registered since is told once the finding is stale', async () => {
    const watcher = await rawListener(false);
    // The publisher listens itself (as a web process does): its own registration does not count.
    const publisher = bus();
    await publisher.listen(
      () => undefined,
      () => undefined,
    );
    await publisher.publish([{ kind: 'posts' }]);
    await publisher.publish([{ kind: 'communities' }]);
    const late = await rawListener(true);
    await sleep(LISTENERS_FRESH_MS);
    await publisher.publish([{ kind: 'agents' }]);
    await drained(late, 1);
    expect(late).to.deep.equal([[{ kind: 'agents' }]]);
    expect(watcher).to.deep.equal([[{ kind: 'agents' }]]);
  });

  it('a listener empties its caches when it registers and again after the settle time, covering a publisher that had not seen it', async () => {
    let resyncs = 0;
    const listener = bus();
    await listener.listen(
      () => undefined,
      () => resyncs++,
    );
    expect(resyncs).to.equal(1);
    await sleep(LISTENER_SETTLE_MS + 200);
    expect(resyncs).to.equal(2);
    expect(LISTENER_SETTLE_MS).to.be.greaterThan(LISTENERS_FRESH_MS);
  });
});
