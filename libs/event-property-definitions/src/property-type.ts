export type PropertyType = 'String' | 'Numeric' | 'Boolean' | 'DateTime';

/** ISO 8601 dates and date-times (`2026-03-02`, `2026-03-02T10:00:00Z`, `2026-03-02 10:00:00.123+01:00`). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A property's type from one value, as PostHog's ingestion infers it: numbers are Numeric,
 * booleans and the strings "true"/"false" Boolean, ISO dates DateTime, other strings String;
 * objects, lists and null say nothing (null).
 */
export function inferPropertyType(value: unknown): PropertyType | null {
  if (typeof value === 'number') return Number.isFinite(value) ? 'Numeric' : null;
  if (typeof value === 'boolean') return 'Boolean';
  if (typeof value !== 'string') return null;
  const lower = value.trim().toLowerCase();
  if (lower === 'true' || lower === 'false') return 'Boolean';
  if (ISO_DATE.test(value.trim())) return 'DateTime';
  return 'String';
}
