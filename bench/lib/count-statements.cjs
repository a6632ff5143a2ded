/**
 * Counts what the server and worker processes send: requests by route, PostgreSQL statements by
 * name (or text) and Redis commands. Preloaded through NODE_OPTIONS, so any tree's
 * `bench/load.ts` can be measured with it (the load generator and the baseline routes ignore it):
 *
 *   NODE_OPTIONS="--require $PWD/bench/lib/count-statements.cjs" npx tsx bench/load.ts --seconds 8 --rounds 1 --only mixed
 *
 * Every 2 s each process writes `$TMPDIR/svc-statements-<pid>.txt`: totals first, then counts,
 * largest first; statements last, by the wall time they took in all (count, total, mean). Round trips are what a request's CPU goes to on this machine (BENCHMARKS.md,
 * Round trips); unlike CPU, their count does not depend on what else the machine runs.
 */
if (process.argv[1] && /(server|worker)\.js$/.test(process.argv[1])) {
  const fs = require('fs');
  const os = require('os');
  const path = require('path');
  const from = (m) => require(require.resolve(m, { paths: [process.cwd()] }));
  const statements = new Map();
  const routes = new Map();
  const redis = new Map();
  let total = 0;
  let requests = 0;
  const add = (m, k) => m.set(k, (m.get(k) || 0) + 1);

  const pg = from('pg');
  const query = pg.Client.prototype.query;
  /** Microseconds from sending each statement to its answer (wall time: the database's work and the waits). */
  const micros = new Map();
  pg.Client.prototype.query = function (cfg, ...rest) {
    const text = typeof cfg === 'string' ? cfg : cfg && cfg.text;
    const key = (cfg && cfg.name ? `[${cfg.name}] ` : '') + String(text).replace(/\s+/g, ' ').slice(0, 100);
    add(statements, key);
    total++;
    const t0 = process.hrtime.bigint();
    const took = () => micros.set(key, (micros.get(key) || 0) + Number(process.hrtime.bigint() - t0) / 1000);
    const cb = rest.length && typeof rest[rest.length - 1] === 'function' ? rest.length - 1 : -1;
    if (cb >= 0) {
      const f = rest[cb];
      rest[cb] = function () {
        took();
        return f.apply(this, arguments);
      };
    } else if (cfg && typeof cfg.callback === 'function') {
      const f = cfg.callback;
      cfg.callback = function () {
        took();
        return f.apply(this, arguments);
      };
    }
    const r = query.call(this, cfg, ...rest);
    if (cb < 0 && r && typeof r.then === 'function') r.then(took, took);
    return r;
  };
  const Redis = from('ioredis');
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (c) {
    add(redis, c.name);
    return send.apply(this, arguments);
  };
  const http = require('http');
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (ev, req) {
    if (ev === 'request') {
      requests++;
      add(
        routes,
        `${req.method} ${req.url
          .replace(/[0-9a-f-]{36}/g, ':id')
          .replace(/\/agents\/[^/?]+/, '/agents/:handle')
          .replace(/\?.*/, '')}`,
      );
    }
    return emit.apply(this, arguments);
  };
  const sorted = (m, prefix) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${prefix}${v} ${k}`);
  setInterval(() => {
    const redisTotal = [...redis.values()].reduce((a, b) => a + b, 0);
    const lines = [
      `requests ${requests} statements ${total} redis ${redisTotal}`,
      ...sorted(routes, 'request '),
      ...sorted(redis, 'redis '),
      ...[...statements]
        .sort((a, b) => (micros.get(b[0]) || 0) - (micros.get(a[0]) || 0))
        .map(
          ([k, n]) =>
            `${n} ${Math.round((micros.get(k) || 0) / 1000)} ms ${Math.round((micros.get(k) || 0) / n)} µs ${k}`,
        ),
    ];
    fs.writeFileSync(path.join(os.tmpdir(), `svc-statements-${process.pid}.txt`), lines.join('\n') + '\n');
  }, 2000).unref();
}
