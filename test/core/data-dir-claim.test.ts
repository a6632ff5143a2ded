import { spawn } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import { expect } from 'chai';
import { claimDataDir } from '../../src/db/embedded';

describe('embedded database: one npm start per data directory', () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-claim-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
  const pidFile = () => path.join(root, 'svc.pid');

  it('a live node process holding the directory: refused with its pid; once it is gone, taken over', async () => {
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(pidFile(), String(other.pid));
      expect(() => claimDataDir(root)).to.throw(`another npm start (pid ${other.pid}) is using ${root}`);
      expect(fs.readFileSync(pidFile(), 'utf8')).to.equal(String(other.pid));
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.once('exit', r));
    }
    // Killed without cleaning up: its record is stale.
    const release = claimDataDir(root);
    expect(fs.readFileSync(pidFile(), 'utf8')).to.equal(String(process.pid));
    release();
    expect(fs.existsSync(pidFile())).to.equal(false);
  });

  it('a recycled pid of another program does not hold it; this process may claim again after releasing', () => {
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(pidFile(), String(sleeper.pid));
      claimDataDir(root)();
      claimDataDir(root)();
      expect(fs.existsSync(pidFile())).to.equal(false);
    } finally {
      sleeper.kill('SIGKILL');
    }
  });
});
