import { parsePropertyFilters, PropertyFilterError, type PropertyGroup } from '@sightline/properties';

/** The project settings a query reads. */
export interface QueryProject {
  id: number;
  timezone: string;
  /** 0: weeks start on Sunday; 1: on Monday. */
  weekStartDay: 0 | 1;
  testAccountFilters: PropertyGroup;
  /** The person properties a display name is read from, first present wins; absent: PostHog's defaults. */
  personDisplayNameProperties?: readonly string[];
}

/** The project columns a query reads (a `projects` row). */
export interface QueryProjectRow {
  id: number;
  timezone: string;
  week_start_day?: number | null;
  test_account_filters?: unknown;
  person_display_name_properties?: readonly string[] | null;
  /** The project's own bound on one query's run time (max_execution_time), in seconds; null: the server's. */
  query_timeout_seconds?: number | null;
}

/** A project row as queries read it; unusable test-account filters are kept as the reason, for the queries that apply them. */
export function queryProject(row: QueryProjectRow): QueryProject & { testAccountFiltersProblem?: string } {
  let testAccountFilters: PropertyGroup = { type: 'AND', values: [] };
  let testAccountFiltersProblem: string | undefined;
  try {
    testAccountFilters = parsePropertyFilters(row.test_account_filters ?? [], 'test_account_filters', {
      types: new Set(['event', 'person', 'cohort', 'group', 'element', 'hogql']),
    });
  } catch (error) {
    // Settings are checked when saved; a row written before a check refuses the queries that
    // apply it (filter_test_accounts) with the reason, rather than quietly applying no filter.
    if (!(error instanceof PropertyFilterError)) throw error;
    testAccountFiltersProblem = error.message;
  }
  return {
    id: row.id,
    timezone: row.timezone || 'UTC',
    weekStartDay: row.week_start_day === 1 ? 1 : 0,
    testAccountFilters,
    // Only when set: a project without its own list keeps the answer cache's keys it had.
    ...(row.person_display_name_properties?.length ? { personDisplayNameProperties: [...row.person_display_name_properties] } : {}),
    ...(testAccountFiltersProblem === undefined ? {} : { testAccountFiltersProblem }),
  };
}
