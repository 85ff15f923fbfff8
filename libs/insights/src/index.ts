// The library's public surface, listed: what apps and other libraries may use. Everything else
// (SQL builders, parsers' pieces, runners' insides) is internal to it.

// Running queries: the one service, its registry of runners, and how a query reaches one.
export { createQueryService, MAX_ANSWER_BYTES, type QueryService, type QueryServiceDeps, type RunOptions } from './runners/query-service';
export { QUERY_RUNNERS, type AnswerOf, type ParsedQuery, type QueryKind, type QueryOf } from './runners/registry';
export { parseQueryNode, parseSavedInsightQuery, QUERY_API_KINDS, savedInsightAnswer, type InsightAnswer, type SavedInsightAnswer } from './runners/query-node';
export type { QueryRunner, QueryApiForm, QueryContext, QueryReferences } from './runners/query-runner';

// Errors a query answers as a 400.
export { QueryFilterError } from './common/query-filter-error';
export { QueryInputError } from './common/events-sql';
export { checkTimezone, DateRangeError } from './common/date-range';
export { FormulaError } from './trends/trend-formula';
export { UnknownCohortError } from './cohorts/cohort-membership.sql';

// Query inputs and answers by kind.
export { legacyFilterFromQuery } from './common/legacy-query-string';
export type { QueryProjectRow } from './common/query-project';
export { parseTrendFilter, type ParsedTrendFilter } from './trends/trend-filter';
export { trendsQueryToFilter } from './trends/trends-query-node';
export type { TrendResult, TrendSeries } from './trends/trend-result';
export { legacyTrendKind } from './runners/legacy-trend-kind';
export type { StickinessResult, StickinessSeries } from './stickiness/stickiness.query';
export type { LifecycleResult, LifecycleSeries } from './lifecycle/lifecycle.query';
export { parseFunnelFilter, type ParsedFunnelFilter } from './funnels/funnel-filter';
export { funnelsQueryToFilter } from './funnels/funnels-query-node';
export type { FunnelResult, FunnelStep } from './funnels/funnels.query';
export { parsePathsFilter, type ParsedPathsFilter } from './paths/paths-filter';
export type { PathsLink, PathsResult } from './paths/paths.query';
export { funnelBodyOf, parseCorrelationOptions, type CorrelationOptions, type CorrelationResult } from './funnels/funnel-correlation';
export { parseLegacyFunnelActors, type FunnelActor, type FunnelActorsPage, type FunnelActorsRequest, type FunnelActorsResult } from './funnels/funnel-actors';
export { parseCorrelationActorsQuery, parseLegacyCorrelationActors } from './funnels/funnel-correlation-actors';
export type { FunnelActorsQuery } from './funnels/funnel-actors.runner';
export type { CorrelationActorsQuery } from './funnels/funnel-correlation-actors.runner';
export type { FunnelCorrelationRequest } from './funnels/funnel-correlation.runner';
export { parseRetentionFilter, retentionQueryToFilter, type ParsedRetentionFilter } from './retention/retention-filter';
export type { RetentionResult, RetentionRow, RetentionValue } from './retention/retention.query';
export type { RetentionActorsQuery } from './retention/retention-actors.runner';

// Other reads of ClickHouse: persons and events lists.
export {
  cohortsOfPerson,
  PERSONS_CSV_EXPORT_LIMIT,
  personPropertyValues,
  queryPersons,
  type PersonsQuery,
  type PersonsQueryRow,
} from './persons/persons.query';
export { eventPropertyValues, EVENT_PROPERTY_VALUES_LIMIT } from './events/event-property-values.query';
export { listEvents, type EventsCursor, type EventsListQuery, type EventsListRow } from './events/events-list.query';

// Actions and cohorts as queries read them.
export { ActionStepError, actionPropertyFilters, MAX_ACTION_STEPS, parseActionSteps, type ActionDefinition, type ActionStep } from './actions/action-steps';
export { cohortMembershipSql, MAX_COHORT_NESTING, referencedCohortIds, type CohortDefinition } from './cohorts/cohort-membership.sql';

// CRUD repositories: actions, cohorts (and static cohort members), saved insights, dashboards.
export {
  deleteAction,
  findAction,
  findActionByName,
  findActionsByIds,
  insertAction,
  listActions,
  updateAction,
  type ActionInput,
  type ActionRow,
} from './repositories/actions.repository';
export {
  cohortDefinitionOf,
  cohortNamesByIds,
  cohortPropertyGroup,
  findCohort,
  findCohorts,
  insertCohort,
  listCohorts,
  loadCohortDefinitions,
  loadCohortsForQuery,
  setCohortCount,
  updateCohort,
  type CohortInput,
  type CohortListFilter,
  type CohortRow,
} from './repositories/cohorts.repository';
export {
  addStaticCohortMembers,
  insertStaticCohortPeople,
  isUuidText,
  refreshStaticCohort,
  removeStaticCohortMember,
  syncStaticCohortToClickHouse,
  type CohortStores,
  type StaticMemberIds,
} from './repositories/static-cohort-members.repository';
export {
  dashboardsOfInsights,
  existingDashboardIds,
  findInsight,
  insertInsight,
  lastViewedInsights,
  listInsights,
  newShortId,
  recordInsightView,
  setInsightDashboards,
  setInsightRefreshed,
  updateInsight,
  type InsightInput,
  type InsightListFilter,
  type InsightRow,
} from './repositories/saved-insights.repository';
export { insertInsightTiming, type InsightTimingRow } from './repositories/insight-timings.repository';
export {
  addDashboardTile,
  countDashboardTiles,
  dashboardHasInsightNamed,
  dashboardTiles,
  findDashboard,
  insertDashboard,
  listDashboards,
  updateDashboard,
  type DashboardInput,
  type DashboardRow,
} from './repositories/dashboards.repository';
