import { isJsonObject } from '@sightline/json-input';
import { parsePropertyFilters, PropertyFilterError, type PropertyGroup } from '@sightline/properties';
import { QueryFilterError } from './query-filter-error';

/** Absent, null, blank, or an empty list or object: a legacy filter field not given. */
export const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isJsonObject(v) && Object.keys(v).length === 0);

export function optionalString(body: Record<string, unknown>, key: string): string | null {
  const value = body[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new QueryFilterError(key, `${key} must be a string.`, 'invalid');
  return value;
}

export function optionalBoolean(body: Record<string, unknown>, key: string): boolean {
  const value = body[key];
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new QueryFilterError(key, `${key} must be a boolean.`, 'invalid');
}

/** An optional integer field within [min, max] (digit strings accepted, as GET sends them); null when absent. */
export function optionalInteger(body: Record<string, unknown>, key: string, min: number, max: number): number | null {
  const raw = body[key];
  if (raw === undefined || raw === null || raw === '') return null;
  const value = typeof raw === 'string' && /^-?\d{1,12}$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new QueryFilterError(key, `${key} must be an integer.`, 'invalid');
  if (value < min || value > max) throw new QueryFilterError(key, `${key} must be between ${min} and ${max}.`, value < min ? 'min_value' : 'max_value');
  return value;
}

/** Filter types a query applies (compat: the query-side property filter types). */
const FILTER_TYPES: ReadonlySet<string> = new Set(['event', 'person', 'cohort', 'group', 'session', 'hogql', 'element', 'event_metadata']);

/** A query's property filters as one group; a bad filter is a 400 naming it. */
export function propertyGroup(value: unknown, attr: string): PropertyGroup {
  try {
    return parsePropertyFilters(value, attr, { types: FILTER_TYPES });
  } catch (error) {
    if (error instanceof PropertyFilterError) throw new QueryFilterError(error.attr, error.message, error.code);
    throw error;
  }
}
