import knexFactory, { Knex } from 'knex';
import { expect } from 'chai';
import { createDb } from '../../src/db/knex';
import { migrateAll, pendingMigrations } from '../../src/db/migrate';
import { ADMIN_PG_URL, dbUrl, TEST_REDIS_URL } from '../helpers/context';
import { freePort, outputOf, runToEnd, spawnEntry, stopChild, waitHttp } from '../faults/harness';

/** The web process started on a database the release step never migrated. */
describe('web process: refuses a database whose schema is behind the code', function () {
  this.timeout(90_000);
  const name = `svc_schema_${Date.now().toString(36)}`;
  const url = dbUrl(name);
  let admin: Knex;
  let db: Knex;

  before(async () => {
    admin = knexFactory({ client: 'pg', connection: ADMIN_PG_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`create database "${name}"`);
    db = createDb(url, 2);
  });
  after(async () => {
    await db?.destroy();
    await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  });

  const env = (port: number) => ({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: url,
    REDIS_URL: TEST_REDIS_URL,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
  });

  it('unmigrated: exits 1 naming the release step, having written nothing; migrated: serves', async () => {
    expect((await pendingMigrations(db)).length, 'an empty database has every migration pending').to.be.greaterThan(5);
    const port = await freePort();
    const child = spawnEntry('server', env(port));
    const code = await runToEnd(child, 60_000);
    expect(code, outputOf(child)).to.equal(1);
    expect(outputOf(child)).to.match(
      /schema is behind this code \(\d+ migrations not run\): run the release step first \(npm run release\)/,
    );
    // The check only reads: knex's list would have created its table.
    expect((await db.raw(`select to_regclass('knex_migrations') as t`)).rows[0].t).to.equal(null);

    await migrateAll(db, url);
    expect(await pendingMigrations(db)).to.deep.equal([]);
    const server = spawnEntry('server', env(port));
    try {
      await waitHttp(`http://127.0.0.1:${port}/api/v1/health`, 60_000);
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      expect(r.status).to.equal(200);
    } finally {
      await stopChild(server);
    }
  });
});
