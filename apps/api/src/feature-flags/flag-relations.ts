import { cohortNamesByIds } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import type { AccessLevel } from '../access-control';
import { loadBasicUsers, type BasicUser } from '@sightline/accounts';
import { flagAccessLevels } from './flag-access-levels';
import type { FlagRow } from './feature-flags.repository';
import { dashboardsOfFlags, experimentsOfFlags } from './flag-relations.repository';

/** What a flag's answer shows besides its own row, loaded for a page of flags at once. */
export interface FlagRelations {
  users: Map<number, BasicUser>;
  experimentIds: Map<number, number[]>;
  dashboardIds: Map<number, number[]>;
  /** Cohort names by the id as the flag's filters write it. */
  cohortNames: Map<string, string>;
  /** The viewer's access level per flag. */
  levels: Map<number, AccessLevel>;
}

/** The cohort ids a flag's conditions name. */
export function flagCohortIds(filters: Record<string, unknown>): number[] {
  const conditions = Array.isArray(filters['groups']) ? (filters['groups'] as { properties?: unknown }[]) : [];
  return conditions
    .flatMap((c) => (Array.isArray(c?.properties) ? (c.properties as unknown[]) : []))
    .filter((p): p is { type: string; value: unknown } => typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'cohort')
    .map((p) => Number(p.value))
    .filter(Number.isInteger);
}

function groupByFlag<T extends { feature_flag_id: number }>(rows: readonly T[], value: (row: T) => number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const row of rows) out.set(row.feature_flag_id, [...(out.get(row.feature_flag_id) ?? []), value(row)]);
  return out;
}

/** Loads the users, experiments, dashboards, cohort names and access levels `flags` are shown with. */
export async function loadFlagRelations(db: Sql, flags: readonly FlagRow[], viewer: { userId: number; teamId: number }): Promise<FlagRelations> {
  const ids = flags.map((f) => f.id);
  const cohortIds = [...new Set(flags.flatMap((f) => flagCohortIds(f.filters)))];
  const [users, experiments, dashboards, cohorts, levels] = await Promise.all([
    loadBasicUsers(
      db,
      flags.flatMap((f) => [f.created_by_id, f.last_modified_by_id]),
    ),
    ids.length === 0 ? [] : experimentsOfFlags(db, ids),
    ids.length === 0 ? [] : dashboardsOfFlags(db, ids),
    cohortNamesByIds(db, viewer.teamId, cohortIds),
    flagAccessLevels(db, viewer.teamId, viewer.userId, flags),
  ]);
  return {
    users,
    experimentIds: groupByFlag(experiments, (e) => e.id),
    dashboardIds: groupByFlag(dashboards, (d) => d.dashboard_id),
    cohortNames: new Map(cohorts.map((c) => [String(c.id), c.name])),
    levels,
  };
}
