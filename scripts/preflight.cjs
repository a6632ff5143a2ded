'use strict';
/**
 * `npm start` (scripts/start.cjs) runs these checks before compiling, so a start that cannot work is refused in one line
 * within a fraction of a second instead of after the build: the data directory held by another
 * `npm start` (the same check as src/db/embedded.ts claimDataDir, which still takes it later), or
 * a PORT another program listens on. Plain JavaScript: it must run before anything is built.
 */
const fs = require('fs');
const net = require('net');
const path = require('path');

function refuse(message) {
  console.error(`npm start refused: ${message}`);
  process.exit(1);
}

/** The live node process recorded in `file`, or null (none, gone, or a recycled pid of another program). */
function liveHolder(file) {
  let pid;
  try {
    pid = Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return null;
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e && e.code !== 'EPERM') return null;
  }
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node')) return null;
  } catch {}
  return pid;
}

const env = process.env;

function checkDataDir() {
  if (env.DATABASE_URL) return;
  const root = path.resolve(env.DATA_DIR || '.data');
  const holder = liveHolder(path.join(root, 'svc.pid'));
  if (holder) {
    refuse(
      `another npm start (pid ${holder}) is using ${root}: stop it first, or give this one its own DATA_DIR, EMBEDDED_PG_PORT and PORT`,
    );
  }
}

/** Resolves once PORT is known free (or not a number: the configuration check reports that later). */
function checkPort() {
  const port = Number(env.PORT || 3000);
  const host = env.HOST || '0.0.0.0';
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return Promise.resolve();
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (e) => {
      if (e.code === 'EADDRINUSE')
        refuse(`PORT ${port} is already in use on ${host}: stop what listens there, or set PORT`);
      if (e.code === 'EACCES') refuse(`PORT ${port} needs privileges this user lacks: set PORT to 1024 or above`);
      refuse(`PORT ${port} on ${host} cannot be used: ${e.message}`);
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** Both checks; a refusal exits the process with its one line. */
function preflight() {
  checkDataDir();
  return checkPort();
}

module.exports = { preflight };
if (require.main === module) void preflight();
