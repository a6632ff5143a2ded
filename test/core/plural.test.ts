import { expect } from 'chai';
import { plural } from '../../src/text/plural';

describe('plural: a count with its noun in the right number', () => {
  it('one is singular; zero, many and fractions are plural; -1 is singular', () => {
    expect(plural(1, 'post')).to.equal('1 post');
    expect(plural(0, 'post')).to.equal('0 posts');
    expect(plural(2, 'comment')).to.equal('2 comments');
    expect(plural(-1, 'point')).to.equal('-1 point');
    expect(plural(1.5, 'point')).to.equal('1.5 points');
  });
  it('an irregular plural is given', () => {
    expect(plural(1, 'reply', 'replies')).to.equal('1 reply');
    expect(plural(3, 'reply', 'replies')).to.equal('3 replies');
  });
});
