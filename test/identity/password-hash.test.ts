import crypto from 'crypto';
import { expect } from 'chai';
import { api } from '../helpers/api';
import { getContext } from '../helpers/context';
import { newOwner } from '../helpers/factories';
import { hashPassword, MAX_PARALLEL_HASHES, setPasswordHashCost, verifyPassword } from '../../src/identity/secrets';
import { TEST_PASSWORD_HASH_N } from '../setup';

/** A hash as the service wrote it before (scrypt N=2^14, r=8, p=1). */
function oldHash(password: string): string {
  const salt = crypto.randomBytes(16);
  const key = crypto.scryptSync(password, salt, 64, { N: 16384, r: 8, p: 1 });
  return ['scrypt', 16384, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
}

describe('password hashes: scrypt N=2^17, r=8, p=1, older hashes replaced at login', function () {
  // A hash at today's cost takes about half a second of one core; far more on a loaded machine.
  this.timeout(120_000);
  before(() => setPasswordHashCost(null));
  after(() => setPasswordHashCost(TEST_PASSWORD_HASH_N));

  it('a new hash carries its parameters: scrypt$131072$8$1$salt$hash, and verifies', async () => {
    const h = await hashPassword('correct horse battery staple');
    expect(h).to.match(/^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
    expect(await verifyPassword('correct horse battery staple', h)).to.equal(true);
    expect(await verifyPassword('correct horse battery stapler', h)).to.equal(false);
  });

  it('an owner with an older hash logs in, the stored hash moves to the new parameters, and login still works', async () => {
    const { db } = await getContext();
    const { owner, password } = await newOwner();
    const before = oldHash(password);
    await db('owners').where({ id: owner.id }).update({ password_hash: before });
    // A wrong password leaves the old hash alone.
    const wrong = await api('POST', '/owner/login', { body: { email: owner.email, password: 'not the password' } });
    expect(wrong.status).to.equal(401);
    expect((await db('owners').where({ id: owner.id }).first()).password_hash).to.equal(before);

    const first = await api('POST', '/owner/login', { body: { email: owner.email, password } });
    expect(first.status, first.text).to.equal(200);
    const after = (await db('owners').where({ id: owner.id }).first()).password_hash as string;
    expect(after).to.not.equal(before);
    expect(after).to.match(/^scrypt\$131072\$8\$1\$/);
    expect(await verifyPassword(password, after)).to.equal(true);

    const second = await api('POST', '/owner/login', { body: { email: owner.email, password } });
    expect(second.status, second.text).to.equal(200);
    // Already current: not rewritten.
    expect((await db('owners').where({ id: owner.id }).first()).password_hash).to.equal(after);
  });

  it('parallel hashes run a few at a time in the thread pool; the event loop keeps turning meanwhile', async () => {
    let ticks = 0;
    let longest = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      ticks++;
      longest = Math.max(longest, Date.now() - last);
      last = Date.now();
    }, 5);
    const started = Date.now();
    try {
      await Promise.all(Array.from({ length: MAX_PARALLEL_HASHES + 1 }, () => hashPassword('x'.repeat(12))));
    } finally {
      clearInterval(timer);
    }
    const took = Date.now() - started;
    // The hashes took a while, and the loop ran throughout: no pause as long as one hash.
    expect(ticks).to.be.greaterThan(10);
    expect(longest).to.be.lessThan(took / 2);
  });

  it('a damaged stored hash never verifies and never asks for unbounded memory', async () => {
    for (const bad of [
      '',
      'bcrypt$x',
      'scrypt$1073741824$8$1$AAAA$AAAA',
      'scrypt$3$8$1$AAAA$AAAA',
      'scrypt$16384$8$1$$',
    ]) {
      expect(await verifyPassword('anything at all', bad), bad).to.equal(false);
    }
  });
});
