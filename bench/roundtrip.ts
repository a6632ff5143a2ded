/**
 * What one round trip between two processes costs on this machine: a client sends a small
 * message, an echo server in its own process answers, and the client waits for the answer before
 * sending the next (as the server does with Redis and PostgreSQL for every request). Over TCP on
 * 127.0.0.1 and over a Unix socket, with 1 and 16 conversations in flight. Prints the CPU both
 * processes spent per round trip (from /proc, so Linux only) and the round trips per second.
 *
 *   npx tsx bench/roundtrip.ts [--seconds 3]
 *
 * Each request to the real server makes several such round trips (the load generator, Redis,
 * one to three PostgreSQL statements) where the bare Koa route makes one; BENCHMARKS.md, Load.
 */
import { fork, ChildProcess } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import { procAvailable, readCpu, spent } from './lib/proc-cpu';

const SECONDS = (() => {
  const i = process.argv.indexOf('--seconds');
  return i > 0 ? Number(process.argv[i + 1]) : 3;
})();
const PAYLOAD = Buffer.alloc(200, 0x61); // about a small query or a small HTTP answer

if (process.argv[2] === '--echo') {
  // The echo server: answers every chunk with a chunk of the same size.
  const where = process.argv[3];
  const server = net.createServer((s) => {
    s.setNoDelay(true);
    s.on('data', (d) => s.write(d));
  });
  const addr = where === 'tcp' ? { host: '127.0.0.1', port: 0 } : { path: where };
  server.listen(addr, () => {
    const a = server.address();
    process.send!(typeof a === 'string' ? a : (a as net.AddressInfo).port);
  });
} else {
  void main();
}

function startEcho(where: string): Promise<{ child: ChildProcess; connect: () => net.Socket }> {
  return new Promise((resolve) => {
    const child = fork(__filename, ['--echo', where], { execArgv: process.execArgv });
    child.once('message', (m) => {
      const connect = () =>
        typeof m === 'number' ? net.connect({ host: '127.0.0.1', port: m }) : net.connect({ path: String(m) });
      resolve({ child, connect });
    });
  });
}

/** `inFlight` conversations, each waiting for its answer before its next message, for SECONDS. */
async function measure(connect: () => net.Socket, childPid: number, inFlight: number) {
  const sockets = await Promise.all(
    Array.from(
      { length: inFlight },
      () =>
        new Promise<net.Socket>((res) => {
          const s = connect();
          s.setNoDelay(true);
          s.once('connect', () => res(s));
        }),
    ),
  );
  let trips = 0;
  let running = true;
  const classify = (pid: number) => (pid === process.pid ? 'client' : pid === childPid ? 'echo' : null);
  const before = { cpu: readCpu(classify), t: process.hrtime.bigint() };
  await Promise.all(
    sockets
      .map(
        (s) =>
          new Promise<void>((done) => {
            let got = 0;
            s.on('data', (d) => {
              got += d.length;
              if (got < PAYLOAD.length) return;
              got = 0;
              trips++;
              if (running) s.write(PAYLOAD);
              else done();
            });
            s.write(PAYLOAD);
          }),
      )
      .concat(
        new Promise<void>((r) =>
          setTimeout(() => {
            running = false;
            r();
          }, SECONDS * 1000),
        ),
      ),
  );
  const wallUs = Number(process.hrtime.bigint() - before.t) / 1000;
  const used = spent(before.cpu, readCpu(classify));
  const cpuUs = [...used.byRole.values()].reduce((a, r) => a + r.user + r.sys, 0) * 1000;
  sockets.forEach((s) => s.destroy());
  return { perSecond: Math.round((trips / wallUs) * 1e6), cpuPerTrip: cpuUs / trips, idle: used.idleShare };
}

async function main() {
  if (!procAvailable) {
    console.log('needs /proc (Linux) to read the echo process CPU');
    return;
  }
  const sock = path.join(os.tmpdir(), `svc-roundtrip-${process.pid}.sock`);
  const results: { label: string; inFlight: number; perSecond: number; cpuPerTrip: number; idle: number }[] = [];
  for (const [label, where] of [
    ['TCP 127.0.0.1', 'tcp'],
    ['Unix socket', sock],
  ] as const) {
    const { child, connect } = await startEcho(where);
    for (const inFlight of [1, 16]) {
      const r = await measure(connect, child.pid!, inFlight);
      results.push({ label, inFlight, ...r });
    }
    child.kill();
    if (where !== 'tcp') fs.rmSync(sock, { force: true });
  }
  console.log(
    `\nround trips of ${PAYLOAD.length} bytes between two processes, ${SECONDS} s each, ${os.cpus().length} cores\n`,
  );
  // Baseline: TCP with 16 in flight, where neither side waits idle (the bare route's regime).
  const base = results.find((r) => r.label.startsWith('TCP') && r.inFlight === 16)!;
  console.log(
    '| transport | in flight | round trips/s | CPU µs per round trip (both processes) | CPU ratio to TCP, 16 in flight | machine idle |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of results)
    console.log(
      `| ${r.label} | ${r.inFlight} | ${r.perSecond} | ${r.cpuPerTrip.toFixed(1)} | ${(r.cpuPerTrip / base.cpuPerTrip).toFixed(2)} | ${Math.round(r.idle * 100)} % |`,
    );
}
