'use strict';
/**
 * Restart time of `npm start` without changes: spawns it N times (default 5) with its own DATA_DIR,
 * PORT and EMBEDDED_PG_PORT (no DATABASE_URL / REDIS_URL: embedded PostgreSQL, in-memory limiter),
 * polls /api/v1/health every 50 ms, records the time to the first 200, then stops it with SIGINT.
 * Prints each run with the load average, then the median and range (docs/operations.md).
 *   node bench/restart.cjs [runs]
 * The first start of a new DATA_DIR initialises the database, and a first start after a change
 * builds: run it twice, or ignore the first run.
 */
const { spawn } = require('child_process');
const http = require('http');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..');
const runs = Number(process.argv[2] || 5);
const port = Number(process.env.PORT || 3731);
const env = {
  ...process.env,
  PORT: String(port),
  DATA_DIR: process.env.DATA_DIR || path.join(os.tmpdir(), 'svc-restart-bench'),
  EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT || '54731',
};
delete env.DATABASE_URL;
delete env.REDIS_URL;

function healthy() {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/health' }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.setTimeout(1000, () => req.destroy());
  });
}

async function once() {
  const t0 = Date.now();
  const child = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  let exited = false;
  const gone = new Promise((resolve) => child.on('exit', resolve)).then(() => (exited = true));
  while (!(await healthy())) {
    if (exited) throw new Error(`npm start exited before it was healthy:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const ms = Date.now() - t0;
  process.kill(-child.pid, 'SIGINT');
  await gone;
  return ms;
}

(async () => {
  const times = [];
  for (let i = 1; i <= runs; i++) {
    const ms = await once();
    times.push(ms);
    const load = os.loadavg().map((x) => x.toFixed(1));
    console.log(`run ${i}: healthy after ${ms} ms (load average ${load.join(' ')}, ${os.cpus().length} cores)`);
  }
  times.sort((a, b) => a - b);
  console.log(`median ${times[Math.floor(times.length / 2)]} ms, range ${times[0]}-${times[times.length - 1]} ms`);
})().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
