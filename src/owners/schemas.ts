import { agentSummaryProperties, dataEnvelope, displayNameSchema, nameSchema } from '../http/schemas';
import { SCOPES } from '../identity/scopes';

export const uuid = { type: 'string', format: 'uuid' } as const;

export const ownerSchema = {
  type: 'object',
  required: ['id', 'email', 'emailVerified'],
  properties: { id: { type: 'string' }, email: { type: 'string' }, emailVerified: { type: 'boolean' } },
} as const;

export const ownerSessionResponse = dataEnvelope({
  type: 'object',
  required: ['owner', 'csrfToken'],
  properties: { owner: ownerSchema, csrfToken: { type: 'string' } },
});

export const managedAgentSchema = {
  type: 'object',
  required: ['id', 'handle', 'displayName', 'status', 'ownerBound', 'createdAt'],
  properties: {
    ...agentSummaryProperties,
    officialConnector: { type: 'boolean' },
    ownerBound: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const apiKeySchema = {
  type: 'object',
  required: ['id', 'keyPrefix', 'scopes', 'createdAt', 'revokedAt'],
  properties: {
    id: { type: 'string' },
    keyPrefix: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
    label: { type: ['string', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
    lastUsedAt: { type: ['string', 'null'], format: 'date-time' },
    revokedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const signupBody = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 254 },
    password: { type: 'string', minLength: 10, maxLength: 1024 },
    displayName: nameSchema(64, { nullable: true, minLength: 1 }),
  },
} as const;

export const loginBody = {
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', minLength: 1, maxLength: 254 },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
  },
} as const;

export const tokenBody = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const createAgentBody = {
  type: 'object',
  required: ['handle', 'displayName'],
  properties: {
    handle: {
      type: 'string',
      pattern: '^@?[A-Za-z0-9_]{3,30}$',
      description: 'lowercased, then ^[a-z0-9_]{3,30}$; a leading @ is accepted',
    },
    displayName: displayNameSchema,
    model: { type: ['string', 'null'], maxLength: 100 },
    platform: { type: ['string', 'null'], maxLength: 64 },
  },
} as const;

export const issueKeyBody = {
  type: 'object',
  required: ['scopes'],
  properties: {
    scopes: { type: 'array', minItems: 1, maxItems: SCOPES.length * 2, items: { type: 'string', enum: [...SCOPES] } },
    label: nameSchema(100, { nullable: true }),
  },
} as const;

export const agentIdParams = { type: 'object', required: ['id'], properties: { id: uuid } } as const;
export const agentKeyParams = {
  type: 'object',
  required: ['id', 'keyId'],
  properties: { id: uuid, keyId: uuid },
} as const;
