import { storedPropertyFilters, type CohortDefinition, type FlagDefinition, type FlagFilters, type PropertyGroup } from '@sightline/flags';
import type { Sql } from '@sightline/postgres';

/** Everything flag evaluation needs about one project, read in one go and cached. */
export interface ProjectFlagDefinitions {
  teamId: number;
  /** Live (not deleted) flags, active or not, by id. */
  flags: FlagDefinition[];
  cohorts: Map<number, CohortDefinition>;
  /** Group type index → name. */
  groupTypeNames: Map<number, string>;
  /** Group type name → index. */
  groupTypeIndexes: Map<string, number>;
  /** Any flag needs stored cohort membership (static cohorts). */
  usesStaticCohorts: boolean;
}

interface FlagRow {
  id: number;
  team_id: number;
  key: string;
  name: string;
  filters: FlagFilters | null;
  active: boolean;
  ensure_experience_continuity: boolean;
  version: number;
  evaluation_runtime: string;
}

interface CohortRow {
  id: number;
  filters: { properties?: PropertyGroup } | null;
  is_static: boolean;
}

interface GroupTypeRow {
  group_type: string;
  group_type_index: number;
}

function cohortProperties(filters: CohortRow['filters']): PropertyGroup | null {
  const properties = filters?.properties;
  return properties && Array.isArray(properties.values) ? properties : null;
}

export async function loadProjectFlagDefinitions(db: Sql, teamId: number): Promise<ProjectFlagDefinitions> {
  const [flagRows, cohortRows, groupTypeRows] = await Promise.all([
    db.query<FlagRow>(
      `SELECT id, team_id, key, name, filters, active, ensure_experience_continuity, version, evaluation_runtime
         FROM feature_flags WHERE team_id = $1 AND NOT deleted ORDER BY id`,
      [teamId],
    ),
    db.query<CohortRow>('SELECT id, filters, is_static FROM cohorts WHERE team_id = $1 AND NOT deleted', [teamId]),
    db.query<GroupTypeRow>('SELECT group_type, group_type_index FROM group_type_mappings WHERE team_id = $1', [teamId]),
  ]);
  const flags: FlagDefinition[] = flagRows.map((row) => ({
    id: row.id,
    team_id: row.team_id,
    key: row.key,
    name: row.name,
    filters: row.filters ?? {},
    active: row.active,
    ensure_experience_continuity: row.ensure_experience_continuity,
    version: row.version,
    evaluation_runtime: row.evaluation_runtime,
    bucketing_identifier: 'distinct_id',
  }));
  const cohorts = new Map<number, CohortDefinition>(
    cohortRows.map((row) => [row.id, { id: row.id, is_static: row.is_static, properties: row.is_static ? null : cohortProperties(row.filters) }]),
  );
  const groupTypeNames = new Map(groupTypeRows.map((row) => [Number(row.group_type_index), row.group_type]));
  const groupTypeIndexes = new Map(groupTypeRows.map((row) => [row.group_type, Number(row.group_type_index)]));
  const staticIds = new Set([...cohorts.values()].filter((c) => c.is_static).map((c) => c.id));
  const usesStaticCohorts =
    staticIds.size > 0 && flags.some((flag) => storedPropertyFilters(flag.filters, ['groups', 'super_groups']).some((p) => p.type === 'cohort'));
  return { teamId, flags, cohorts, groupTypeNames, groupTypeIndexes, usesStaticCohorts };
}
