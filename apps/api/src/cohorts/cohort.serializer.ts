import type { CohortRow } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { loadBasicUsers } from '@sightline/accounts';

/**
 * PostHog's CohortSerializer fields (posthog/api/cohort.py). `filters` is shown as PostHog's
 * to_representation shows it: the stored filters, or an empty group for a cohort without any
 * (static ones). Legacy `groups` are stored converted into `filters`, so `groups` is always [].
 * `count` is the stored count: static cohorts' member count, and dynamic cohorts' count as of
 * their last write (`last_calculation`); queries evaluate membership afresh every time.
 */
export async function serializeCohorts(db: Sql, rows: CohortRow[]) {
  const users = await loadBasicUsers(
    db,
    rows.map((r) => r.created_by_id),
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    groups: [],
    deleted: row.deleted,
    filters: row.filters ?? { properties: { type: 'AND', values: [] } },
    query: null,
    version: row.version,
    pending_version: null,
    is_calculating: row.is_calculating,
    created_by: row.created_by_id === null ? null : (users.get(row.created_by_id) ?? null),
    created_at: new Date(row.created_at).toISOString(),
    last_calculation: row.last_calculation ? new Date(row.last_calculation).toISOString() : null,
    errors_calculating: 0,
    last_error_at: null,
    last_error_message: null,
    count: row.count,
    is_static: row.is_static,
    cohort_type: row.is_static ? 'static' : 'person_property',
    experiment_set: [],
  }));
}
