import { expect } from 'chai';
import fs from 'fs';
import path from 'path';
import knexFactory from 'knex';
import { getContext } from '../helpers/context';
import config from '../../knexfile';

describe('knexfile.ts (knex CLI)', () => {
  it('sees the migrations the service ran at start: every file of sql/ completed, none pending', async () => {
    const ctx = await getContext();
    const db = knexFactory({ ...config, connection: ctx.databaseUrl, pool: { min: 0, max: 1 } });
    try {
      const [done, pending] = (await db.migrate.list()) as [{ name: string }[], { file: string }[]];
      const files = fs
        .readdirSync(path.join(__dirname, '../../sql'))
        .filter((f) => /^\d{3}_.*\.ts$/.test(f))
        .map((f) => f.replace(/\.ts$/, ''));
      expect(pending).to.deep.equal([]);
      expect(done.map((m) => m.name)).to.deep.equal(files);
      expect(await db.migrate.status()).to.equal(0);
    } finally {
      await db.destroy();
    }
  });
});
