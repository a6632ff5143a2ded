import { closeContext } from './helpers/context';
import { closeSharedRedisCluster } from './helpers/redis-cluster';
import { setPasswordHashCost } from '../src/identity/secrets';

/**
 * Tests create owners by the hundred: their password hashes use a cheap scrypt N. The hashing
 * test (test/identity/password-hash.test.ts) checks today's parameters and the rehash at login.
 */
export const TEST_PASSWORD_HASH_N = 2 ** 12;
setPasswordHashCost(TEST_PASSWORD_HASH_N);

/** Root hooks: the shared test database is dropped once the run ends. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30000);
    await closeContext();
    await closeSharedRedisCluster();
  },
};
