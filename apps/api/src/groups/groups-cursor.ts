/**
 * The list's forward cursor, as PostHog encodes it (ee/clickhouse/views/groups.py): base64url of
 * `{"c": created_at in microseconds, "k": group_key}`, the last row of the page.
 */
export function encodeGroupsCursor(position: { createdAtUs: number; groupKey: string }): string {
  return Buffer.from(JSON.stringify({ c: position.createdAtUs, k: position.groupKey })).toString('base64url');
}

/**
 * The position a cursor names, or null for one that cannot be read (PostHog then starts from the
 * first page). A value under 10^15 is milliseconds, as PostHog's older cursors carried.
 */
export function decodeGroupsCursor(cursor: string): { createdAtUs: number; groupKey: string } | null {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const { c, k } = data as { c?: unknown; k?: unknown };
  if (typeof k !== 'string' || typeof c !== 'number' || !Number.isSafeInteger(c) || c <= 0) return null;
  const createdAtUs = c < 1e15 ? c * 1000 : c;
  // Past 2^53 µs (the year 2255) no group can have been created; ClickHouse would refuse the instant.
  return Number.isSafeInteger(createdAtUs) ? { createdAtUs, groupKey: k } : null;
}
