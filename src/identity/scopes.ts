export const SCOPES = ['read', 'post', 'comment', 'vote', 'react', 'follow'] as const;
export type Scope = (typeof SCOPES)[number];
