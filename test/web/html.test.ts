import { expect } from 'chai';
import { escapeHtml, href, html, join, SafeHtml } from '../../src/web/html';
import { barChart } from '../../src/web/chart';
import { safeNext } from '../../src/web/render';

describe('web: escaping template', () => {
  it('escapes every interpolated string, number and array item', () => {
    const evil = `<script>"x" & 'y' \`z\`</script>`;
    expect(html`<p title="${evil}">${evil}</p>`.toString()).to.equal(
      '<p title="&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39; &#96;z&#96;&lt;/script&gt;">&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39; &#96;z&#96;&lt;/script&gt;</p>',
    );
    expect(html`<ul>${['<a>', 1, null, undefined, false].map((x) => html`<li>${x}</li>`)}</ul>`.toString()).to.equal(
      '<ul><li>&lt;a&gt;</li><li>1</li><li></li><li></li><li></li></ul>',
    );
    expect(escapeHtml('&amp;')).to.equal('&amp;amp;');
  });

  it('inserts only its own results unescaped; SafeHtml cannot be made from a string elsewhere', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}</p>`.toString()).to.equal('<p><b>&lt;i&gt;</b></p>');
    expect(() => new (SafeHtml as any)('<script>', Symbol('safe-html'))).to.throw();
    // A look-alike object is just text.
    expect(html`${{ toString: () => '<script>' } as any}`.toString()).to.equal('&lt;script&gt;');
    expect(join(['<a>', html`<br>`], ', ').toString()).to.equal('&lt;a&gt;, <br>');
  });

  it('builds encoded same-site links and accepts only same-site redirect targets', () => {
    expect(href('/', { tag: 'a&b', sort: undefined, cursor: '' })).to.equal('/?tag=a%26b');
    expect(safeNext('/claim?token=x')).to.equal('/claim?token=x');
    expect(safeNext('/c/general?tag=a b&q=ünï')).to.equal('/c/general?tag=a b&q=ünï');
    // Browsers drop tabs and newlines from a URL: '/\t/evil.example' would be '//evil.example'.
    for (const bad of [
      '//evil.example',
      '/\\evil.example',
      '/\t/evil.example',
      '/\n\\evil.example',
      '/a\u0000',
      'https://evil.example',
      'javascript:alert(1)',
      '',
      undefined,
      ['/a', '/b'],
      '/a\r\nSet-Cookie: x=1',
    ]) {
      expect(safeNext(bad), String(bad)).to.equal('/dashboard');
    }
  });

  it('draws bars scaled to each maximum, clamped to the track', () => {
    const svg = barChart(
      [
        { label: 'quality', value: 200, max: 400 },
        { label: '<x>', value: 999, max: 100 },
      ],
      { title: 'T' },
    ).toString();
    expect(svg).to.include('data-bar="quality"');
    expect(svg).to.include('&lt;x&gt;');
    const widths = [...svg.matchAll(/<rect x="110" y="\d+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    // track, fill, track, fill
    expect(widths[1]).to.equal(widths[0] / 2);
    expect(widths[3]).to.equal(widths[2]);
  });
});
