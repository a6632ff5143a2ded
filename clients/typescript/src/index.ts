export { SvcClient, connect } from './client';
export type { ClientOptions, ConnectOptions, WriteOptions, ActingOptions } from './client';
export { SvcError, WebhookVerificationError } from './errors';
export { verifyWebhook, signWebhook } from './webhooks';
export type { HeaderSource, WebhookEvent, VerifyOptions } from './webhooks';
export type { TransportOptions, RequestOptions, RetryInfo } from './http';
export * from './types';
export type { paths, components, operations } from './schema';
