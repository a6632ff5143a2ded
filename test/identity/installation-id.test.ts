import knexFactory, { Knex } from 'knex';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { ADMIN_PG_URL, dbUrl, getContext } from '../helpers/context';
import { uniq } from '../helpers/factories';
import { createDb } from '../../src/db/knex';
import { knexMigrations, migrateAll } from '../../src/db/migrate';
import { createAgent } from '../../src/identity/service';
import { installationIdHash } from '../../src/identity/secrets';
import { connectIdentity, createConnectKey } from '../../src/connect/service';

describe('installation ids: only a keyed hash at rest', () => {
  it('an agent made before the ids were hashed is found by an exchange naming its installation, and moved to the keyed identity', async () => {
    const { db, deps, config } = await getContext();
    const inst = uniq('inst');
    const local = 'bot1';
    // The identity as exchanges wrote it before: from the installation id itself.
    const legacy = connectIdentity({ ownerId: null, installationId: inst, connectKeyId: 'unused' }, 'mcp', local);
    const old = await createAgent(db, {
      handle: uniq('legacy'),
      displayName: 'Legacy',
      ownerId: null,
      connectIdentity: legacy,
    });
    const k = await createConnectKey(deps, { ownerId: null });
    const r = await api('POST', '/connect/exchange', {
      body: { connectKey: k.connectKey, framework: 'mcp', localAgentId: local, installationId: inst },
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data.agent.id).to.equal(old.id);
    const keyed = connectIdentity(
      { ownerId: null, installationId: installationIdHash(config.sessionSecret, inst), connectKeyId: 'unused' },
      'mcp',
      local,
    );
    expect((await db('agents').where({ id: old.id }).first()).connect_identity).to.equal(keyed);
    // From then on a key that carries the installation finds it too, and no second agent appears.
    const k2 = await createConnectKey(deps, { ownerId: null, installationId: inst });
    const r2 = await api('POST', '/connect/exchange', {
      body: { connectKey: k2.connectKey, framework: 'mcp', localAgentId: local },
    });
    expect(r2.status, r2.text).to.equal(200);
    expect(r2.body.data.agent.id).to.equal(old.id);
    expect(await db('agents').whereIn('connect_identity', [legacy, keyed])).to.have.length(1);
  });

  describe('migration 081 hashes the ids already stored', function () {
    this.timeout(120_000);
    const name = `svc_inst_${Date.now().toString(36)}_${process.pid}`;
    const url = dbUrl(name);
    const secret = 'migration-test-secret-0123456789abcdef';
    let admin: Knex;
    let db: Knex;
    before(async () => {
      admin = knexFactory({ client: 'pg', connection: ADMIN_PG_URL, pool: { min: 0, max: 1 } });
      await admin.raw(`create database "${name}"`);
      db = createDb(url, 2);
      // Every migration before 081, one at a time.
      const config = knexMigrations();
      for (;;) {
        const [, pending] = (await db.migrate.list(config)) as [unknown[], { file: string }[]];
        if (pending.length === 0 || pending[0].file.startsWith('081_')) break;
        await db.migrate.up(config);
      }
    });
    after(async () => {
      await db?.destroy();
      await admin.raw(`drop database if exists "${name}" with (force)`);
      await admin.destroy();
    });

    it('without the key it refuses to run (rows to hash); with it, each row holds the HMAC and the clear column is gone', async () => {
      const row = (installation_id: string | null) => ({
        key_hash: Buffer.from(uniq('h')),
        key_prefix: 'svc_connect_x',
        max_uses: 5,
        installation_id,
        expires_at: new Date(Date.now() + 60_000),
      });
      await db('connect_keys').insert([row('inst-a'), row('inst-a'), row('inst-b'), row(null)]);
      let err: Error | undefined;
      try {
        await db.migrate.latest(knexMigrations());
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).to.match(/needs SESSION_SECRET/);
      await migrateAll(db, url, { sessionSecret: secret });
      const cols = (
        await db.raw(`select column_name from information_schema.columns where table_name = 'connect_keys'`)
      ).rows.map((r: any) => r.column_name);
      expect(cols).to.include('installation_id_hash');
      expect(cols).to.not.include('installation_id');
      const hashes = (await db('connect_keys').orderBy('installation_id_hash').pluck('installation_id_hash')) as (
        string | null
      )[];
      const a = installationIdHash(secret, 'inst-a');
      const b = installationIdHash(secret, 'inst-b');
      expect(hashes.filter((h) => h === a)).to.have.length(2);
      expect(hashes.filter((h) => h === b)).to.have.length(1);
      expect(hashes.filter((h) => h === null)).to.have.length(1);
    });
  });
});
