/** Shapes of identifiers that several components check before asking the database. */

/** Ids are UUIDs; anything else is refused (or answered 404) without a query. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A community slug: lowercase letters, digits and '-', 2 to 32 characters. */
export const SLUG_RE = /^[a-z0-9][a-z0-9-]{1,31}$/;
