import { expect } from 'chai';
import { GroupCommit } from '../../src/db/group-commit';

/** A write whose calls the test sees and finishes one by one. */
function controlledWrite(fail: (items: string[]) => boolean = () => false) {
  const calls: { items: string[]; finish: () => void }[] = [];
  const write = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({
        items,
        finish: () =>
          fail(items) ? reject(new Error('bad item in ' + items.join(','))) : resolve(items.map((i) => i + '!')),
      });
    });
  return { calls, write };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('GroupCommit (src/db/group-commit.ts)', () => {
  it('writes a lone caller at once, and the callers arriving meanwhile together in the next write', async () => {
    const w = controlledWrite();
    const g = new GroupCommit(w.write);
    const first = g.run(['a']);
    await tick();
    expect(w.calls.map((c) => c.items)).to.deep.equal([['a']]);
    const second = g.run(['b', 'c']);
    const third = g.run(['d']);
    await tick();
    expect(w.calls, 'nothing more while a write runs').to.have.length(1);
    w.calls[0].finish();
    expect(await first).to.deep.equal(['a!']);
    await tick();
    expect(w.calls.map((c) => c.items)).to.deep.equal([['a'], ['b', 'c', 'd']]);
    w.calls[1].finish();
    expect(await second).to.deep.equal(['b!', 'c!']);
    expect(await third).to.deep.equal(['d!']);
  });

  it('a failed batch is written again caller by caller: only the caller with the bad item fails', async () => {
    const w = controlledWrite((items) => items.includes('bad'));
    const g = new GroupCommit(w.write);
    const first = g.run(['a']);
    const ok = g.run(['b']);
    const bad = g.run(['bad', 'c']);
    await tick();
    w.calls[0].finish();
    await first;
    await tick();
    expect(w.calls[1].items).to.deep.equal(['b', 'bad', 'c']);
    w.calls[1].finish();
    await tick();
    expect(w.calls.slice(2).map((c) => c.items)).to.deep.equal([['b'], ['bad', 'c']]);
    for (const c of w.calls.slice(2)) c.finish();
    expect(await ok).to.deep.equal(['b!']);
    let err: Error | null = null;
    await bad.catch((e) => (err = e));
    expect(String(err)).to.match(/bad item in bad,c/);
  });

  it('a lone caller whose write fails gets the error; the next callers still get written', async () => {
    const w = controlledWrite((items) => items.includes('bad'));
    const g = new GroupCommit(w.write);
    const bad = g.run(['bad']);
    const later = g.run(['x']);
    await tick();
    w.calls[0].finish();
    let err: Error | null = null;
    await bad.catch((e) => (err = e));
    expect(String(err)).to.match(/bad item/);
    await tick();
    w.calls[1].finish();
    expect(await later).to.deep.equal(['x!']);
  });

  it('keeps a batch within maxItems, whole callers only', async () => {
    const w = controlledWrite();
    const g = new GroupCommit(w.write, { maxItems: 3 });
    const all = [g.run(['a']), g.run(['b', 'c']), g.run(['d', 'e']), g.run(['f'])];
    await tick();
    w.calls[0].finish();
    await tick();
    w.calls[1].finish();
    await tick();
    w.calls[2].finish();
    expect(await Promise.all(all)).to.deep.equal([['a!'], ['b!', 'c!'], ['d!', 'e!'], ['f!']]);
    expect(w.calls.map((c) => c.items)).to.deep.equal([['a'], ['b', 'c'], ['d', 'e', 'f']]);
    expect(await g.run([])).to.deep.equal([]);
  });

  it('runs up to maxInFlight writes at once', async () => {
    const w = controlledWrite();
    const g = new GroupCommit(w.write, { maxInFlight: 2 });
    const all = [g.run(['a']), g.run(['b']), g.run(['c']), g.run(['d'])];
    await tick();
    expect(w.calls.map((c) => c.items)).to.deep.equal([['a'], ['b']]);
    w.calls[1].finish();
    await tick();
    expect(w.calls.map((c) => c.items)).to.deep.equal([['a'], ['b'], ['c', 'd']]);
    w.calls[0].finish();
    w.calls[2].finish();
    expect(await Promise.all(all)).to.deep.equal([['a!'], ['b!'], ['c!'], ['d!']]);
  });
});
