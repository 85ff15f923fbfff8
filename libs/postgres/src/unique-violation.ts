/**
 * Whether `error` is PostgreSQL's unique_violation (SQLSTATE 23505) of the named index or
 * constraint: the database's answer when two concurrent writes race past a check made before
 * them. Read from `constraint` (pg), else from the message, which names it (PGlite's thread).
 */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint: named, message } = error as { code?: unknown; constraint?: unknown; message?: unknown };
  if (code !== '23505') return false;
  return typeof named === 'string' ? named === constraint : String(message).includes(`"${constraint}"`);
}
