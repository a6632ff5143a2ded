import fs from 'fs';
import os from 'os';
import path from 'path';
import { expect } from 'chai';

// Plain JavaScript run by `npm start` before anything is built.
const { needsBuild } = require('../../scripts/start.cjs') as { needsBuild: (root: string) => boolean };

/** Sets the modification time of `p` (relative to `root`) to `t` seconds since the epoch. */
function at(root: string, p: string, t: number): void {
  fs.utimesSync(path.join(root, p), t, t);
}

describe('npm start builds only when a build input changed (scripts/start.cjs)', () => {
  let root: string;
  const BUILT = 2_000_000;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-start-build-'));
    for (const d of ['src/http', 'sql', 'dist/src']) fs.mkdirSync(path.join(root, d), { recursive: true });
    for (const f of ['src/app.ts', 'src/http/route.ts', 'sql/001_init.ts', 'tsconfig.json', 'package.json']) {
      fs.writeFileSync(path.join(root, f), '');
    }
    fs.writeFileSync(path.join(root, 'dist/src/dev.js'), '');
    fs.writeFileSync(path.join(root, 'dist/.start-stamp'), '');
    for (const p of ['src/app.ts', 'src/http/route.ts', 'sql/001_init.ts', 'tsconfig.json', 'package.json']) {
      at(root, p, BUILT - 10);
    }
    for (const d of ['src/http', 'src', 'sql']) at(root, d, BUILT - 10);
    at(root, 'dist/.start-stamp', BUILT);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('an unchanged checkout starts without a build', () => {
    expect(needsBuild(root)).to.equal(false);
  });

  it('a source edited after the last build is rebuilt, however deep', () => {
    at(root, 'src/http/route.ts', BUILT + 1);
    expect(needsBuild(root)).to.equal(true);
  });

  it('a removed source is rebuilt (its directory changed)', () => {
    fs.rmSync(path.join(root, 'src/app.ts'));
    expect(needsBuild(root)).to.equal(true);
  });

  it('a changed tsconfig.json or package.json is rebuilt', () => {
    at(root, 'tsconfig.json', BUILT + 1);
    expect(needsBuild(root)).to.equal(true);
    at(root, 'tsconfig.json', BUILT - 10);
    at(root, 'package.json', BUILT + 1);
    expect(needsBuild(root)).to.equal(true);
  });

  it('no record of a build, or no compiled program, is built', () => {
    fs.rmSync(path.join(root, 'dist/.start-stamp'));
    expect(needsBuild(root)).to.equal(true);
    fs.writeFileSync(path.join(root, 'dist/.start-stamp'), '');
    at(root, 'dist/.start-stamp', BUILT);
    expect(needsBuild(root)).to.equal(false);
    fs.rmSync(path.join(root, 'dist/src/dev.js'));
    expect(needsBuild(root)).to.equal(true);
  });
});
