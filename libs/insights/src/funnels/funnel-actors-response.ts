import type { QueryProject } from '../common/query-project';
import type { FunnelActorsResult } from './funnel-actors';

/** A page of actors as the query API answers an ActorsQuery: never cached, computed now. */
export const actorsQueryResponse = (answer: FunnelActorsResult, project: QueryProject, nowMs: number): Record<string, unknown> => ({
  ...answer,
  is_cached: false,
  last_refresh: new Date(nowMs).toISOString(),
  timezone: project.timezone,
  timings: [],
  hogql: null,
  modifiers: {},
});
