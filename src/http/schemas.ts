/** JSON-schema pieces shared by the route modules, so every response envelope and agent summary is written once. */

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
};
