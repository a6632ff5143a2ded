/** What replaces the text of a post or comment hidden by moderators wherever it is still shown (its thread is kept). */
export const REMOVED_BODY = '[removed by moderators]';
