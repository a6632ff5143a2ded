import { expect } from 'chai';
import knexFactory, { Knex } from 'knex';
import { ADMIN_PG_URL } from '../helpers/context';
import { createDb } from '../../src/db/knex';
import { migrateAll } from '../../src/db/migrate';
import { generateNetwork, Network } from '../../bench/gen/network';

/**
 * The scoring benchmark's network generator is deterministic: the same seed and size give the
 * same rows (ids included) in two databases made from one migrated template, and so does the
 * activity it adds afterwards; another seed gives other rows. Its rows have the generated mix.
 */
describe('bench network generator: seeded and deterministic', function () {
  this.timeout(120_000);
  const base = `svc_test_gen_${Date.now().toString(36)}_${process.pid}`;
  const now = new Date('2026-11-20T12:00:00Z');
  const size = 5_000;
  let admin: Knex;
  const dbs: Knex[] = [];
  const names: string[] = [];

  const url = (name: string) => {
    const u = new URL(ADMIN_PG_URL);
    u.pathname = '/' + name;
    return u.toString();
  };

  async function fresh(): Promise<Knex> {
    const name = `${base}_${names.length}`;
    await admin.raw(`create database "${name}" template "${base}"`);
    names.push(name);
    const db = createDb(url(name), 2);
    dbs.push(db);
    return db;
  }

  /** One digest per table of every row and column (of `interactions`: all but updated_at, the write's clock). */
  async function digest(db: Knex): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [table, cols] of [
      ['owners', '*'],
      ['agents', '*'],
      ['posts', '*'],
      ['comments', '*'],
      [
        'interactions',
        'id, kind, actor_agent_id, target_agent_id, post_id, comment_id, reply_comment_id, value, reaction_type, occurred_at, active',
      ],
    ]) {
      const r = await db.raw(
        `select count(*)::int n, md5(string_agg(t::text, E'\\n' order by t::text)) h from (select ${cols} from ${table}) t`,
      );
      out[table] = `${r.rows[0].n}:${r.rows[0].h}`;
    }
    return out;
  }

  const activity = (net: Network, db: Knex) =>
    net.addActivity(db, 1_000, new Date(now.getTime()), new Date(now.getTime() + 30 * 60_000));

  before(async () => {
    admin = knexFactory({ client: 'pg', connection: ADMIN_PG_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`create database "${base}"`);
    const template = createDb(url(base), 1);
    await migrateAll(template, url(base));
    await template.destroy();
  });

  after(async () => {
    for (const db of dbs) await db.destroy();
    for (const name of [...names, base]) await admin.raw(`drop database if exists "${name}" with (force)`);
    await admin.destroy();
  });

  it('the same seed and size give identical rows, before and after added activity; another seed does not', async () => {
    const [a, b, c] = [await fresh(), await fresh(), await fresh()];
    const netA = await generateNetwork(a, { interactions: size }, now);
    const netB = await generateNetwork(b, { interactions: size }, now);
    await generateNetwork(c, { interactions: size, seed: 7 }, now);
    const [da, db, dc] = [await digest(a), await digest(b), await digest(c)];
    expect(da).to.deep.equal(db);
    for (const table of Object.keys(da)) expect(dc[table], table).to.not.equal(da[table]);
    expect(await activity(netA, a)).to.equal(1_000);
    expect(await activity(netB, b)).to.equal(1_000);
    const [aa, ab] = [await digest(a), await digest(b)];
    expect(aa).to.deep.equal(ab);
    expect(aa.interactions).to.not.equal(da.interactions);
  });

  it('writes the mix: every kind in its share, honest rows across the window, abuse on top', async () => {
    const [d] = [await fresh()];
    const net = await generateNetwork(d, { interactions: size }, now);
    const kinds = await d('interactions')
      .select('kind')
      .count<{ kind: string; n: number }[]>({ n: '*' })
      .groupBy('kind');
    const by = Object.fromEntries(kinds.map((k) => [k.kind, Number(k.n)]));
    // Honest shares (55 / 15 / 10 / 20 %) plus the planted abuse (votes and follows).
    expect(by.reply).to.equal(750);
    expect(by.reaction).to.equal(1_000);
    expect(by.vote).to.be.within(2_750, 2_750 * 1.1);
    expect(by.follow).to.be.within(500, 500 * 1.1);
    expect(net.interactions).to.equal(by.vote + by.reply + by.follow + by.reaction);
    expect(Number((await d('comments').count<{ n: number }[]>({ n: '*' }))[0].n)).to.equal(750);
    const span = await d.raw(
      `select min(occurred_at) lo, max(occurred_at) hi from interactions where kind = 'reaction'`,
    );
    expect((now.getTime() - new Date(span.rows[0].lo).getTime()) / 86_400_000).to.be.within(88, 90);
    expect(new Date(span.rows[0].hi).getTime()).to.be.at.most(now.getTime());
    const handles = await d.raw(
      `select count(*) filter (where handle like 'bench\\_farm\\_%')::int farms,
              count(*) filter (where handle like 'bench\\_fresh\\_%')::int fresh from agents`,
    );
    expect(handles.rows[0]).to.deep.equal({ farms: 7, fresh: 8 });
    expect(net.agents).to.equal(500 + 7 + 8);
    // Every row in its month's partition; every vote, reaction and follow keyed.
    expect(Number((await d('interactions_default').count<{ n: number }[]>({ n: '*' }))[0].n)).to.equal(0);
    const keys = Number((await d('interaction_keys').count<{ n: number }[]>({ n: '*' }))[0].n);
    expect(keys).to.equal(net.interactions - by.reply);
  });
});
