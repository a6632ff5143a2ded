import { closeContext } from './helpers/context';

/** Root hooks: the shared test database is dropped once the run ends. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(30000);
    await closeContext();
  },
};
