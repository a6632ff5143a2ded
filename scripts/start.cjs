'use strict';
/**
 * `npm start`: the start refusals (preflight.cjs), then a build only when a build input changed,
 * then the dev process (dist/src/dev.js) in this same node process. Plain JavaScript: it runs
 * before anything is built.
 *
 * "Changed" is decided from modification times, not by `tsc -b` (whose own up-to-date check
 * reads every source and costs most of a second): the newest file or directory (an added or
 * removed file changes its directory) among tsconfig.json's inputs, package.json and the
 * installed packages, against dist/.start-stamp, which records when the last build that
 * succeeded here began. Anything newer, or no stamp, runs `tsc -b` (incremental, build info in
 * dist/.tsbuildinfo); a failed build stops the start with tsc's errors.
 */
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { preflight } = require('./preflight.cjs');

const ROOT = path.resolve(__dirname, '..');
const STAMP = path.join('dist', '.start-stamp');
/** What tsconfig.json compiles (its "include"), and what decides how it compiles. */
const INPUT_DIRS = ['src', 'jobs', 'sql', 'test', 'bench'];
const INPUT_FILES = [
  'knexfile.ts',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
  'node_modules/.package-lock.json',
];

/** The newest modification time (ms) under `p`: files and directories alike; 0 if it does not exist. */
function newest(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch {
    return 0;
  }
  let t = st.mtimeMs;
  if (st.isDirectory()) for (const f of fs.readdirSync(p)) t = Math.max(t, newest(path.join(p, f)));
  return t;
}

/** Whether the checkout at `root` must be built before it starts. */
function needsBuild(root) {
  return !upToDate(root);
}

function upToDate(root) {
  let built;
  try {
    built = fs.statSync(path.join(root, STAMP)).mtimeMs;
  } catch {
    return false;
  }
  if (!fs.existsSync(path.join(root, 'dist', 'src', 'dev.js'))) return false;
  for (const p of [...INPUT_DIRS, ...INPUT_FILES]) if (newest(path.join(root, p)) >= built) return false;
  return true;
}

/** Builds the checkout at `root` (tsc -b) and stamps it; a failed build ends the process, `who` naming the command. */
function build(root, who = 'npm start') {
  const began = new Date();
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  const r = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`${who}: the build failed (tsc errors above)`);
    process.exit(r.status || 1);
  }
  // Stamped with the time the build began: a file saved during the build is newer, so it rebuilds next time.
  fs.writeFileSync(path.join(root, STAMP), '');
  fs.utimesSync(path.join(root, STAMP), began, began);
}

module.exports = { needsBuild, build };
if (require.main === module) {
  void preflight().then(() => {
    if (needsBuild(ROOT)) build(ROOT);
    require(path.join(ROOT, 'dist', 'src', 'dev.js'));
  });
}
