/**
 * Distinct ids that SDKs send by mistake (docs/data-model.md#distinct-ids). Events with them are stored, but
 * they never take part in a merge: merging on "anonymous" would fuse unrelated people.
 */
const CASE_INSENSITIVE = new Set(['anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false']);
const CASE_SENSITIVE = new Set(['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']);

const unquote = (value: string) => (/^(['"]).*\1$/.test(value) && value.length >= 2 ? value.slice(1, -1) : value);

export function isIllegalDistinctId(distinctId: string): boolean {
  const trimmed = distinctId.trim();
  if (trimmed === '') return true;
  for (const candidate of [trimmed, unquote(trimmed)]) {
    if (CASE_SENSITIVE.has(candidate) || CASE_INSENSITIVE.has(candidate.toLowerCase())) return true;
  }
  return false;
}
