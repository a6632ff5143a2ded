// Tests run from TypeScript sources through tsx; `npm test` builds dist/ first so worker
// threads (piscina) and the type-check see the same code.
module.exports = {
  require: ['tsx/cjs', 'test/setup.ts'],
  extension: ['ts'],
  spec: ['test/**/*.test.ts'],
  timeout: 20000,
  exit: true,
  recursive: true,
};
