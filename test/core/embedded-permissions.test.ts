import fs from 'fs';
import os from 'os';
import path from 'path';
import { expect } from 'chai';
import { dirsLackingSearch, grantSearch } from '../../src/db/embedded';
import { createLogger } from '../../src/log';

/**
 * As root the embedded PostgreSQL runs as `postgres`: a checkout under a private directory (such
 * as mktemp's 0700) must become searchable for that user, or initdb fails without a word.
 */
describe('embedded PostgreSQL: directories the postgres user must enter', () => {
  const me = { uid: process.getuid!(), gid: process.getgid!() };
  // Someone else: neither the owner nor in the group of the test's directories.
  const other = { uid: me.uid + 4242, gid: me.gid + 4242 };
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-perm-'));
    fs.chmodSync(root, 0o700);
    fs.mkdirSync(path.join(root, 'repo', '.data'), { recursive: true });
    fs.chmodSync(path.join(root, 'repo'), 0o750);
    fs.chmodSync(path.join(root, 'repo', '.data'), 0o755);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('lists every directory on the way that the user cannot search, by the bits that apply to it', () => {
    const target = path.join(root, 'repo', '.data');
    expect(dirsLackingSearch(target, other.uid, other.gid)).to.deep.equal([root, path.join(root, 'repo')]);
    // The owner may enter all of them; the group may enter repo (0750) but not root (0700).
    expect(dirsLackingSearch(target, me.uid, me.gid)).to.deep.equal([]);
    expect(dirsLackingSearch(target, other.uid, me.gid)).to.deep.equal([root]);
  });

  it('grantSearch adds only the search bit, for others, and leaves reachable paths alone', () => {
    const target = path.join(root, 'repo', '.data');
    grantSearch([target], other, createLogger('silent'));
    expect(fs.statSync(root).mode & 0o777).to.equal(0o701);
    expect(fs.statSync(path.join(root, 'repo')).mode & 0o777).to.equal(0o751);
    expect(fs.statSync(target).mode & 0o777).to.equal(0o755);
    expect(dirsLackingSearch(target, other.uid, other.gid)).to.deep.equal([]);
    // Not root (no postgres user to run as): nothing changes.
    fs.chmodSync(root, 0o700);
    grantSearch([target], {}, createLogger('silent'));
    expect(fs.statSync(root).mode & 0o777).to.equal(0o700);
  });
});
