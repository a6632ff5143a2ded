import { expect } from 'chai';
import { sumReputation } from '../../src/scoring/reputation-sums';
import { UNIT, unitsToWeight } from '../../src/scoring/reputation-store';
import type { Facts } from '../../src/scoring/stage-sql';

/** Upvotes of one agent (0) by other owners, with weights `w` in row order. */
function upvotes(w: Float32Array): number {
  const n = w.length;
  const f = {
    kind: new Int16Array(n),
    value: new Int16Array(n).fill(1),
    tn: new Int32Array(n),
    an: new Int32Array(n).fill(1),
    aon: new Int32Array(n).fill(1),
    ton: new Int32Array(n),
  } as unknown as Facts;
  return sumReputation(f, n, w, 2).up[0];
}

describe('scoring: reputation sums are exact (pure)', () => {
  it('sums past 2^10 in any order to the correctly rounded exact sum, as the stored sums read', () => {
    // Stored weights: float4 of a multiple of 1e-6, so multiples of 2^-43. Past 2^10, a double's
    // running sum drops the low bits of the small ones (1e-6 to 3e-5), unevenly by order.
    let x = 12345;
    const w = new Float32Array(21_500);
    for (let i = 0; i < w.length; i++) {
      x = (x * 48271) % 2147483647;
      w[i] = i < 1500 ? 1 : Math.round((x / 2147483647) * 30) / 1e6;
    }
    let exact = 0n;
    for (const v of w) {
      expect(Number.isInteger(v * UNIT)).to.equal(true);
      exact += BigInt(v * UNIT);
    }
    expect(Number(exact) / UNIT).to.be.greaterThan(1024);
    const forward = upvotes(w);
    expect(upvotes(w.slice().reverse())).to.equal(forward);
    expect(forward).to.equal(unitsToWeight(exact));
    expect(unitsToWeight(exact.toString())).to.equal(forward);
  });
});
