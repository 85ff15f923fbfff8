import type { Sql } from '@sightline/postgres';
import { loadBasicUsers } from '../organization/users';
import { atLeast } from '../access-control/access-levels';
import { flagAccessLevels } from './flag-access-levels';
import type { FlagRow } from './feature-flags.repository';
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

function cohortIds(filters: Record<string, unknown>): number[] {
  return conditionsOf(filters)
    .flatMap((c) => (Array.isArray(c.properties) ? c.properties : []))
    .filter((p): p is { type: string; value: unknown } => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'cohort')
    .map((p) => Number(p.value))
    .filter(Number.isInteger);
}

/**
 * Feature flags in the response shape of PostHog's FeatureFlagSerializer (posthog/api/feature_flag.py; every field of
 * PostHog's FeatureFlagSerializer), loading related rows for all flags at once.
 */
export async function serializeFlags(db: Sql, flags: readonly FlagRow[], viewer: { userId: number; teamId: number }, nowMs: number) {
  if (flags.length === 0) return [];
  const ids = flags.map((f) => f.id);
  const allCohortIds = [...new Set(flags.flatMap((f) => cohortIds(f.filters)))];
  const [users, experiments, dashboards, cohorts, levels] = await Promise.all([
    loadBasicUsers(
      db,
      flags.flatMap((f) => [f.created_by_id, f.last_modified_by_id]),
    ),
    db.query<{ id: number; feature_flag_id: number }>(
      'SELECT id, feature_flag_id FROM experiments WHERE feature_flag_id = ANY($1::int[]) AND NOT deleted ORDER BY id',
      [ids],
    ),
    db.query<{ feature_flag_id: number; dashboard_id: number }>(
      'SELECT feature_flag_id, dashboard_id FROM feature_flag_dashboards WHERE feature_flag_id = ANY($1::int[]) ORDER BY dashboard_id',
      [ids],
    ),
    allCohortIds.length === 0
      ? Promise.resolve([])
      : db.query<{ id: number; name: string }>('SELECT id, name FROM cohorts WHERE team_id = $1 AND id = ANY($2::int[])', [viewer.teamId, allCohortIds]),
    flagAccessLevels(db, viewer.teamId, viewer.userId, flags),
  ]);
  const cohortNames = new Map(cohorts.map((c) => [String(c.id), c.name]));

  return flags.map((flag) => {
    const filters = displayFilters(flag.filters);
    for (const condition of conditionsOf(filters)) {
      for (const property of Array.isArray(condition.properties) ? condition.properties : []) {
        const p = property as Record<string, unknown>;
        if (p['type'] === 'cohort') p['cohort_name'] = cohortNames.get(String(p['value'])) ?? null;
      }
    }
    const simple = isSimpleFlag(filters);
    const level = levels.get(flag.id) ?? 'editor';
    const status = flagStatus(flag, nowMs).status.toUpperCase();
    return {
      id: flag.id,
      name: flag.name,
      key: flag.key,
      filters,
      deleted: flag.deleted,
      active: flag.active,
      created_by: (flag.created_by_id !== null && users.get(flag.created_by_id)) || null,
      created_at: new Date(flag.created_at).toISOString(),
      updated_at: new Date(flag.updated_at).toISOString(),
      version: flag.version,
      last_modified_by: (flag.last_modified_by_id !== null && users.get(flag.last_modified_by_id)) || null,
      is_simple_flag: simple,
      rollout_percentage: simple ? (conditionsOf(filters)[0]!.rollout_percentage ?? null) : null,
      ensure_experience_continuity: flag.ensure_experience_continuity,
      experiment_set: experiments.filter((e) => e.feature_flag_id === flag.id).map((e) => e.id),
      // Sightline has no surveys or early access features that could link to a flag.
      surveys: [],
      features: [],
      rollback_conditions: flag.rollback_conditions ?? null,
      performed_rollback: flag.performed_rollback,
      can_edit: atLeast(level, 'editor'),
      tags: flag.tags,
      evaluation_tags: [],
      usage_dashboard: flag.usage_dashboard_id,
      analytics_dashboards: dashboards.filter((d) => d.feature_flag_id === flag.id).map((d) => d.dashboard_id),
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

export async function serializeFlag(db: Sql, flag: FlagRow, viewer: { userId: number; teamId: number }, nowMs: number) {
  return (await serializeFlags(db, [flag], viewer, nowMs))[0]!;
}
