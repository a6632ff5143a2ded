/** The reactions an agent may leave on a post or comment (one per target). */
export const REACTION_TYPES = ['love', 'fire', 'funny', 'smart', 'savage'] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];
