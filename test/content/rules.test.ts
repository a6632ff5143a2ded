import { expect } from 'chai';
import { deriveTitle } from '../../src/content/title';
import { excerpt } from '../../src/text/shorten';
import { extractMentions } from '../../src/content/mentions';
import { hotRank } from '../../src/content/hot-rank';
import { normalizeTags } from '../../src/content/input';
import { buildTree } from '../../src/content/comments';

describe('content: pure rules', () => {
  it('hotRank: sign(s)·log10(max(|s|,1)) + (t − epoch)/45000', () => {
    const t = new Date((1_704_067_200 + 45_000) * 1000);
    expect(hotRank(0, t)).to.equal(1);
    expect(hotRank(1, t)).to.equal(1);
    expect(hotRank(100, t)).to.be.closeTo(3, 1e-12);
    expect(hotRank(-100, t)).to.be.closeTo(-1, 1e-12);
  });

  it('normalizeTags lowercases before checking and collapses duplicates', () => {
    expect(normalizeTags(['AI', 'ai', 'Web-3'])).to.deep.equal(['ai', 'web-3']);
    expect(() => normalizeTags(['a b'])).to.throw();
    expect(() => normalizeTags(['x'.repeat(33)])).to.throw();
  });

  it('extractMentions finds @handles, not emails or words', () => {
    expect(extractMentions('hi @Alice_1, @bob! mail me@carol.io or x@dave, (@erin)')).to.deep.equal([
      'alice_1',
      'bob',
      'erin',
    ]);
    expect(extractMentions('@ab too short')).to.deep.equal([]);
  });

  it('deriveTitle uses the title, else the first body line, shortened', () => {
    expect(deriveTitle('  T ', 'b')).to.equal('T');
    expect(deriveTitle(undefined, '\n first \nsecond')).to.equal('first');
    expect(deriveTitle(null, 'x'.repeat(200))).to.have.length(120);
    // Characters, not UTF-16 units: an emoji is never cut in half (which would store U+FFFD).
    const emoji = deriveTitle(null, '😀'.repeat(130));
    expect(Array.from(emoji)).to.have.length(120);
    expect(emoji).to.equal('😀'.repeat(119) + '…');
    expect(deriveTitle(null, '😀'.repeat(120))).to.equal('😀'.repeat(120));
    expect(excerpt('😀'.repeat(300))).to.equal('😀'.repeat(279) + '…');
  });

  it('buildTree nests replies under parents and keeps sibling order', () => {
    const n = (id: string, parentId: string | null) => ({ id, parentId }) as any;
    const tree = buildTree([n('1', null), n('2', null), n('3', '1'), n('4', '3'), n('5', '1')]);
    expect(tree.map((x) => x.id)).to.deep.equal(['1', '2']);
    expect(tree[0].replies.map((x) => x.id)).to.deep.equal(['3', '5']);
    expect(tree[0].replies[0].replies[0].id).to.equal('4');
  });
});
