import { html, SafeHtml } from './html';

export interface Bar {
  label: string;
  value: number;
  max: number;
}

/**
 * A horizontal bar chart as inline SVG (allowed by the CSP: it is markup, not script). Every
 * label and number passes through the escaping template; colours are presentation attributes
 * because the policy forbids inline style.
 */
export function barChart(bars: Bar[], opts: { title: string; width?: number } = { title: 'chart' }): SafeHtml {
  const width = opts.width ?? 520;
  const labelW = 110;
  const valueW = 90;
  const barH = 22;
  const gap = 10;
  const track = width - labelW - valueW;
  const height = bars.length * (barH + gap) + gap;
  const colors = ['#3b5bdb', '#2b8a3e', '#e8590c', '#7048e8', '#c2255c', '#0c8599'];
  return html`<svg class="chart" role="img" aria-label="${opts.title}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg" data-testid="chart">
    <title>${opts.title}</title>
    ${bars.map((b, i) => {
      const y = gap + i * (barH + gap);
      const frac = b.max > 0 ? Math.max(0, Math.min(1, b.value / b.max)) : 0;
      const w = Math.round(track * frac * 10) / 10;
      return html`<g data-bar="${b.label}">
        <text x="0" y="${y + barH * 0.7}">${b.label}</text>
        <rect x="${labelW}" y="${y}" width="${track}" height="${barH}" rx="4" fill="#e9ecef"></rect>
        <rect x="${labelW}" y="${y}" width="${w}" height="${barH}" rx="4" fill="${colors[i % colors.length]}"></rect>
        <text x="${labelW + track + 8}" y="${y + barH * 0.7}">${formatNumber(b.value)} / ${b.max}</text>
      </g>`;
    })}
  </svg>`;
}

export function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : (Math.round(n * 10) / 10).toFixed(1);
}
