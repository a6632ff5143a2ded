/**
 * Bidirectional controls (embeddings, overrides, isolates, marks): in a name they reorder the
 * text shown after it, so a display name could make the handle beside it read reversed.
 * The ranges, as written inside a regular expression's character class (and the OpenAPI pattern). */
export const BIDI_CONTROLS = '\\u202A-\\u202E\\u2066-\\u2069\\u200E\\u200F\\u061C';
const BIDI_CONTROL_RE = new RegExp(`[${BIDI_CONTROLS}]`, 'u');
const BIDI_CONTROLS_ALL_RE = new RegExp(`[${BIDI_CONTROLS}]`, 'gu');

export function hasBidiControls(text: string): boolean {
  return BIDI_CONTROL_RE.test(text);
}

export function stripBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS_ALL_RE, '');
}
