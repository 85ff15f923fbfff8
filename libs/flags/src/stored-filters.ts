import { isJsonObject as isObject } from '@sightline/json-input';
import type { FlagFilters, PropertyFilter } from './types';

/**
 * The property filters of a stored definition's condition lists (`groups`, `super_groups`),
 * reading only what has the shape PostHog writes and skipping the rest. Rows written before
 * validation refused malformed filters may hold anything (`"groups": {}`, `"properties": "x"`);
 * code that looks across every flag of a project (the definitions loader, the local-evaluation
 * body) must not fail the whole project on one such flag. Evaluation itself fails that flag alone.
 */
export function storedPropertyFilters(filters: FlagFilters | null | undefined, lists: ReadonlyArray<'groups' | 'super_groups'> = ['groups']): PropertyFilter[] {
  if (!isObject(filters)) return [];
  const found: PropertyFilter[] = [];
  for (const list of lists) {
    const conditions: unknown = filters[list];
    if (!Array.isArray(conditions)) continue;
    for (const condition of conditions) {
      const properties: unknown = isObject(condition) ? condition['properties'] : null;
      if (!Array.isArray(properties)) continue;
      for (const property of properties) if (isObject(property)) found.push(property as unknown as PropertyFilter);
    }
  }
  return found;
}

/**
 * `filters` with every well-formed property filter of `groups` passed through `rewrite`; conditions
 * that are not shaped as PostHog writes them are kept as stored (see storedPropertyFilters).
 */
export function mapStoredGroupProperties(filters: FlagFilters, rewrite: (property: PropertyFilter) => PropertyFilter): FlagFilters {
  const stored: unknown = isObject(filters) ? (filters.groups ?? []) : null;
  if (!Array.isArray(stored)) return filters;
  const groups = stored.map((condition: unknown) => {
    if (!isObject(condition)) return condition;
    const properties: unknown = condition['properties'] ?? [];
    if (!Array.isArray(properties)) return condition;
    return { ...condition, properties: properties.map((p: unknown) => (isObject(p) ? rewrite(p as unknown as PropertyFilter) : p)) };
  });
  return { ...filters, groups: groups as FlagFilters['groups'] };
}
