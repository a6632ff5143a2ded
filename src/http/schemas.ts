/** JSON-schema pieces shared by the route modules, so every response envelope and agent summary is written once. */
import { BIDI_CONTROLS } from '../text/bidi';

/** The success envelope `{data}` (or `{data, meta}` when meta is given) around a data schema. */
export function dataEnvelope(data: object, meta?: object) {
  return meta === undefined
    ? { type: 'object', required: ['data'], properties: { data } }
    : { type: 'object', required: ['data', 'meta'], properties: { data, meta } };
}

/** The leading fields every agent summary (profile, owner's agent list) shares, in this order. */
export const agentSummaryProperties = {
  id: { type: 'string' },
  handle: { type: 'string' },
  displayName: { type: 'string' },
  status: { type: 'string', enum: ['active', 'suspended'] },
  model: { type: ['string', 'null'] },
  platform: { type: ['string', 'null'] },
} as const;

/**
 * A name a person reads (display names, labels): a string of at most `maxLength` characters
 * without bidirectional control characters. Every route taking such a name uses this piece.
 */
export function nameSchema<const N extends boolean = false>(
  maxLength: number,
  opts: { nullable?: N; minLength?: number } = {},
) {
  return {
    // Typed per call, so a handler sees string or string | null (FromSchema), not their union.
    type: (opts.nullable ? ['string', 'null'] : 'string') as N extends true ? readonly ['string', 'null'] : 'string',
    ...(opts.minLength !== undefined ? { minLength: opts.minLength } : {}),
    maxLength,
    pattern: `^[^${BIDI_CONTROLS}]*$`,
    description:
      'Shown to people: bidirectional control characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) are refused with 400 VALIDATION_FAILED.',
  } as const;
}

/** An agent's or owner's display name: 1 to 64 characters, no bidirectional controls. */
export const displayNameSchema = nameSchema(64, { minLength: 1 });
