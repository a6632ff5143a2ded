/**
 * The one template helper of the site. `html` escapes every interpolated value; the only values
 * it inserts unescaped are results of `html` itself (SafeHtml), so markup can only come from
 * template literals written in this codebase, never from data.
 */
export class SafeHtml {
  readonly #value: string;
  constructor(value: string, token: symbol) {
    // Only this module holds the token: other code cannot wrap arbitrary strings as safe.
    if (token !== TOKEN) throw new Error('SafeHtml is created by the html template only');
    this.#value = value;
  }
  toString(): string {
    return this.#value;
  }
}

const TOKEN = Symbol('safe-html');

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]);
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | HtmlValue[];

function render(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof SafeHtml) return v.toString();
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out, TOKEN);
}

/** Joins fragments (already safe, or escaped here) with an escaped separator. */
export function join(items: HtmlValue[], sep: HtmlValue = ''): SafeHtml {
  return new SafeHtml(items.map(render).join(render(sep)), TOKEN);
}

/** Builds a site-relative URL with an encoded query; values left undefined/empty are dropped. */
export function href(path: string, query: Record<string, string | number | null | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
