import { isJsonObject } from '@sightline/json-input';
import { QueryFilterError } from '../common/query-filter-error';
import { actorsQueryResponse } from '../funnels/funnel-actors-response';
import type { FunnelActorsResult } from '../funnels/funnel-actors';
import type { QueryRunner } from '../runners/query-runner';
import { parseRetentionActorsRequest, runRetentionActorsQuery, type RetentionActorsRequest } from './retention-actors';
import { parseRetentionFilter, retentionQueryToFilter, type ParsedRetentionFilter } from './retention-filter';
import { retentionReferences } from './retention-references';

/** The actors asked of a retention table: a start interval's cohort and a page. */
export interface RetentionActorsQuery {
  retention: ParsedRetentionFilter;
  request: RetentionActorsRequest;
}

/**
 * PostHog's InsightActorsQuery over a RetentionQuery (bare or in an ActorsQuery), and the legacy
 * persons/retention/ filter (`selected_interval`): the actors of one start interval, most
 * appearances first. Pages are not cached.
 */
export const retentionActorsRunner: QueryRunner<RetentionActorsQuery, FunnelActorsResult> = {
  label: 'retention_actors',
  parseLegacy: (input) => {
    const retention = parseRetentionFilter(input);
    if (input['selected_interval'] === undefined || input['selected_interval'] === null || input['selected_interval'] === '') {
      throw new QueryFilterError('selected_interval', 'The persons of a retention row need its start interval (selected_interval).', 'required');
    }
    const request = parseRetentionActorsRequest(
      { interval: input['selected_interval'], breakdown: input['breakdown_value'] ?? null },
      { limit: input['limit'], offset: input['offset'], search: input['search'] },
      '',
    );
    return { retention, request: { ...request, select: ['person', 'appearances'] } };
  },
  references: ({ retention }) => retentionReferences(retention),
  calculate: ({ ch, db, project, ports, nowMs }, { retention, request }) => runRetentionActorsQuery({ ch, db }, project, retention, request, nowMs, ports),
  queryApi: {
    insightActorsOf: 'RetentionQuery',
    parse: (node, outer) => {
      const source = node['source'];
      const prefix = outer === null ? 'query__' : 'query__source__';
      if (!isJsonObject(source) || source['kind'] !== 'RetentionQuery') {
        throw new QueryFilterError(`${prefix}source`, 'The actors of a retention table need its RetentionQuery as source.', 'required');
      }
      const retention = parseRetentionFilter(retentionQueryToFilter(source));
      return { retention, request: parseRetentionActorsRequest(node, outer, prefix) };
    },
    actorsSource: true,
    response: actorsQueryResponse,
  },
};
