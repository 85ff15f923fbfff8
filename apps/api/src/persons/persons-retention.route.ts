import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import type { FunnelActor, QueryService } from '@sightline/insights';
import { describedBody } from '../http/body-fields';
import { asValidationError, insightBody, insightQueryInput } from '../http/insight-request';
import { absoluteUrlWith } from '../http/pagination';
import { RouteTable } from '../http/route-registry';
import { legacyActor } from './persons-funnel.serializer';

export interface PersonsRetentionDeps {
  now: () => number;
}

const retentionActorsBody = describedBody('A legacy retention filter and which start interval', {
  target_entity: 'The event (or action) that starts a cohort',
  returning_entity: 'The event (or action) that counts as coming back',
  retention_type: 'retention_recurring or retention_first_time',
  period: 'Hour, Day, Week or Month',
  total_intervals: 'Intervals looked ahead',
  date_to: 'Last start interval',
  selected_interval: 'The start interval (from 0) whose actors to list',
  breakdown_value: 'The breakdown value whose actors to list',
  limit: 'Actors per page',
  offset: 'Where the page starts',
});

/** The actors of a retention row in PostHog's legacy answer: each with a 0/1 per interval it is back in. */
async function retentionActors(deps: PersonsRetentionDeps, queries: QueryService, req: Request, input: Record<string, unknown>) {
  try {
    const answer = await queries.runLegacy('RetentionActorsQuery', req.project!, input, deps.now());
    const intervals = Number(input['total_intervals'] ?? 11) || 11;
    return {
      result: answer.results.map(([actor, appearances]) => {
        const back = new Set(appearances as number[]);
        return { person: legacyActor(actor as FunnelActor), appearances: Array.from({ length: intervals }, (_, i) => (back.has(i) ? 1 : 0)) };
      }),
      next: answer.hasMore ? absoluteUrlWith(req, { offset: answer.offset + answer.limit, limit: answer.limit }) : null,
      missing_persons: answer.missing_actors_count,
    };
  } catch (error) {
    throw asValidationError(error);
  }
}

/**
 * PostHog's legacy `GET|POST persons/retention/` (posthog/api/person.py `retention`): the retention
 * filter and `selected_interval` in the query string (and body), answered as
 * `{result: [{person, appearances}], next, missing_persons}`. The retention answer's people_url
 * points here.
 */
export function createPersonsRetentionRoutes(deps: PersonsRetentionDeps, queries: QueryService): RouteTable {
  const routes = new RouteTable();
  const read = { scope: 'person:read', throttle: 'clickhouse' } as const;
  routes.inProject((project) => {
    const path = '/persons/retention';
    project.get(path, { ...read, summary: 'The persons (or groups) of a retention row (legacy)' }, async (req, res) => {
      await sendJson(res, await retentionActors(deps, queries, req, insightQueryInput(req)));
    });
    const post = {
      ...read,
      summary: 'The persons (or groups) of a retention row (legacy, body)',
      body: retentionActorsBody,
      example: () => ({ period: 'Day', total_intervals: 7, selected_interval: 0 }),
    };
    project.post(path, post, async (req, res) => {
      await sendJson(res, await retentionActors(deps, queries, req, { ...insightQueryInput(req), ...insightBody(req) }));
    });
  });
  return routes;
}
