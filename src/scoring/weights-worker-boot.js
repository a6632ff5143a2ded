/* global require, module */
// Worker-thread entry when the code runs from TypeScript sources (tests, tsx scripts):
// registers tsx in this thread, then exposes the same task as the compiled weights-worker.js.
require('tsx/cjs');
module.exports = require('./weights-worker.ts');
