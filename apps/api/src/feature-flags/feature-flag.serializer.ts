import { atLeast } from '../access-control';
import type { FlagRow } from './feature-flags.repository';
import type { FlagRelations } from './flag-relations';
import { flagStatus } from './flag-status';

/**
 * PostHog's get_filters: flags stored before condition groups existed are shown as
 * one group; flags created without filters are stored as {} and shown that way too.
 */
function displayFilters(filters: Record<string, unknown>): Record<string, unknown> {
  if (filters && typeof filters === 'object' && 'groups' in filters) return structuredClone(filters);
  return { groups: [{ properties: (filters?.['properties'] as unknown[]) ?? [], rollout_percentage: null }] };
}

type Condition = { properties?: unknown[]; rollout_percentage?: number | null };

const conditionsOf = (filters: Record<string, unknown>): Condition[] => (Array.isArray(filters['groups']) ? (filters['groups'] as Condition[]) : []);

/** One condition, no properties, not a group flag (PostHog's FeatureFlag.is_simple_flag). */
function isSimpleFlag(filters: Record<string, unknown>): boolean {
  const conditions = conditionsOf(filters);
  return (
    conditions.length === 1 &&
    (!Array.isArray(conditions[0]!.properties) || conditions[0]!.properties.length === 0) &&
    (filters['aggregation_group_type_index'] ?? null) === null
  );
}

export function serializeFlags(flags: readonly FlagRow[], related: FlagRelations, nowMs: number) {
  return flags.map((flag) => {
    const filters = displayFilters(flag.filters);
    for (const condition of conditionsOf(filters)) {
      for (const property of Array.isArray(condition.properties) ? condition.properties : []) {
        const p = property as Record<string, unknown>;
        if (p['type'] === 'cohort') p['cohort_name'] = related.cohortNames.get(String(p['value'])) ?? null;
      }
    }
    const simple = isSimpleFlag(filters);
    const level = related.levels.get(flag.id) ?? 'editor';
    const status = flagStatus(flag, nowMs).status.toUpperCase();
    return {
      id: flag.id,
      name: flag.name,
      key: flag.key,
      filters,
      deleted: flag.deleted,
      active: flag.active,
      created_by: (flag.created_by_id !== null && related.users.get(flag.created_by_id)) || null,
      created_at: new Date(flag.created_at).toISOString(),
      updated_at: new Date(flag.updated_at).toISOString(),
      version: flag.version,
      last_modified_by: (flag.last_modified_by_id !== null && related.users.get(flag.last_modified_by_id)) || null,
      is_simple_flag: simple,
      rollout_percentage: simple ? (conditionsOf(filters)[0]!.rollout_percentage ?? null) : null,
      ensure_experience_continuity: flag.ensure_experience_continuity,
      experiment_set: related.experimentIds.get(flag.id) ?? [],
      // Sightline has no surveys or early access features that could link to a flag.
      surveys: [],
      features: [],
      rollback_conditions: flag.rollback_conditions ?? null,
      performed_rollback: flag.performed_rollback,
      can_edit: atLeast(level, 'editor'),
      tags: flag.tags,
      evaluation_tags: [],
      usage_dashboard: flag.usage_dashboard_id,
      analytics_dashboards: related.dashboardIds.get(flag.id) ?? [],
      has_enriched_analytics: flag.has_enriched_analytics,
      user_access_level: level,
      creation_context: flag.creation_context,
      is_remote_configuration: false,
      has_encrypted_payloads: false,
      status,
      evaluation_runtime: flag.evaluation_runtime,
      bucketing_identifier: 'distinct_id',
      last_called_at: null,
    };
  });
}

export function serializeFlag(flag: FlagRow, related: FlagRelations, nowMs: number) {
  return serializeFlags([flag], related, nowMs)[0]!;
}
