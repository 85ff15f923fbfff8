import type { GroupTypeRow } from './groups-types.repository';

/**
 * A group type as PostHog's GroupTypeSerializer answers it (GROUP_TYPE_MAPPING_SERIALIZER_FIELDS).
 * Sightline makes no detail dashboards, so `detail_dashboard` is always null.
 */
export function serializeGroupType(row: GroupTypeRow) {
  return {
    group_type_index: row.group_type_index,
    group_type: row.group_type,
    name_singular: row.name_singular,
    name_plural: row.name_plural,
    detail_dashboard: null,
    default_columns: row.default_columns,
    created_at: row.created_at === null ? null : new Date(row.created_at).toISOString(),
  };
}
