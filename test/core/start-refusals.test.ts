import { execFile, spawn } from 'child_process';
import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import { expect } from 'chai';
import { getContext } from '../helpers/context';

/** Runs `file` with node and these variables; resolves with its exit code and output. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number; stderr: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (e, _out, stderr) => resolve({ code: e ? ((e as any).code ?? 1) : 0, stderr, ms: Date.now() - t0 }),
    );
  });
}

describe('npm start refusals: one line naming what to change, before any build work', function () {
  this.timeout(60_000);
  let taken: net.Server;
  let port: number;
  let dataDir: string;
  before(async () => {
    taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    port = (taken.address() as net.AddressInfo).port;
  });
  after(() => taken.close());
  beforeEach(() => (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-preflight-'))));
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('preflight: a PORT another program listens on is refused in one line naming PORT', async () => {
    const r = await run(['scripts/preflight.cjs'], { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
    expect(r.code).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.deep.equal([
      `npm start refused: PORT ${port} is already in use on 127.0.0.1: stop what listens there, or set PORT`,
    ]);
  });

  it('npm start (scripts/start.cjs) refuses a taken PORT in one line, before building or loading anything', async () => {
    const stamp = path.join(__dirname, '../../dist/.start-stamp');
    const before = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : null;
    const r = await run(['scripts/start.cjs'], { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
    expect(r.code).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.deep.equal([
      `npm start refused: PORT ${port} is already in use on 127.0.0.1: stop what listens there, or set PORT`,
    ]);
    expect(fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : null).to.equal(before);
    expect(fs.readdirSync(dataDir)).to.deep.equal([]);
  });

  it('preflight: a data directory held by a running npm start is refused in one line with its pid', async () => {
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(path.join(dataDir, 'svc.pid'), String(other.pid));
      const r = await run(['scripts/preflight.cjs'], { PORT: '0', DATA_DIR: dataDir });
      expect(r.code).to.equal(1);
      expect(r.stderr.trim().split('\n')).to.have.length(1);
      expect(r.stderr).to.contain(`npm start refused: another npm start (pid ${other.pid}) is using ${dataDir}`);
      // With DATABASE_URL set the embedded database (and its directory) is not used.
      const external = await run(['scripts/preflight.cjs'], {
        PORT: '0',
        DATA_DIR: dataDir,
        DATABASE_URL: 'postgres://x@127.0.0.1/x',
      });
      expect(external.code).to.equal(0);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('preflight: a free PORT and an unheld data directory pass silently', async () => {
    fs.writeFileSync(path.join(dataDir, 'svc.pid'), '999999999');
    const r = await run(['scripts/preflight.cjs'], { PORT: '0', DATA_DIR: dataDir });
    expect(r).to.include({ code: 0, stderr: '' });
  });

  it('the web process on a taken PORT stops with one line naming PORT (no EADDRINUSE stack)', async () => {
    const ctx = await getContext();
    const r = await run(['--import', 'tsx', 'src/server.ts'], {
      NODE_ENV: 'test',
      DATABASE_URL: ctx.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    expect(r.code).to.equal(1);
    expect(r.stderr.trim().split('\n')).to.deep.equal([
      `failed to start: PORT ${port} is already in use on 127.0.0.1: stop what listens there, or set PORT`,
    ]);
  });
});
