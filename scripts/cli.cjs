'use strict';
/**
 * `npm run cli`: the admin CLI (dist/src/cli.js), built first when a build input changed since the
 * last build, as `npm start` does (a fresh clone has no dist/ yet).
 */
const path = require('path');
const { needsBuild, build } = require('./start.cjs');

const ROOT = path.resolve(__dirname, '..');
if (needsBuild(ROOT)) build(ROOT, 'npm run cli');
require(path.join(ROOT, 'dist', 'src', 'cli.js'));
