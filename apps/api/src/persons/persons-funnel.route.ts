import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import {
  parseFunnelFilter,
  parseLegacyCorrelationActors,
  parseLegacyFunnelActors,
  type FunnelActor,
  type FunnelActorsResult,
  type TrendsService,
} from '@sightline/insights';
import { funnelActorsBody } from '../insights/legacy-filter-body';
import { asValidationError, insightBody, insightQueryInput } from '../insights/insight-request';
import { absoluteUrlWith } from '../http/pagination';
import { RouteTable } from '../http/route-registry';
import { orderDistinctIds, personDisplayName } from './person.serializer';

export interface PersonsFunnelDeps {
  now: () => number;
}

/** An actor as PostHog's legacy actor endpoints serialize it (SerializedPerson / SerializedGroup). */
function legacyActor(actor: FunnelActor): Record<string, unknown> {
  if ('distinct_ids' in actor) {
    const distinctIds = orderDistinctIds(actor.distinct_ids);
    return {
      type: 'person',
      id: actor.id,
      uuid: actor.id,
      created_at: actor.created_at,
      properties: actor.properties,
      is_identified: actor.is_identified,
      name: personDisplayName(actor.properties, distinctIds, actor.id),
      distinct_ids: distinctIds,
      matched_recordings: [],
      value_at_data_point: null,
    };
  }
  if ('group_key' in actor) {
    return {
      type: 'group',
      id: actor.group_key,
      group_key: actor.group_key,
      group_type_index: actor.group_type_index,
      created_at: actor.created_at,
      properties: actor.properties,
      matched_recordings: [],
      value_at_data_point: null,
    };
  }
  // Counted by the funnel but no longer stored (PostHog's missing_persons).
  return { ...actor, matched_recordings: [], value_at_data_point: null };
}

/** A two-step funnel, the example body of the legacy POST routes (and what the body fuzz starts from). */
const FUNNEL_EXAMPLE = {
  insight: 'FUNNELS',
  events: [
    { id: '$pageview', order: 0 },
    { id: 'signed up', order: 1 },
  ],
  date_from: '-7d',
};

/**
 * PostHog's legacy `GET|POST persons/funnel/` (posthog/api/person.py `funnel`): the funnel filter
 * and `funnel_step` (…) in the query string (and body), answered as
 * `{results: [{people, count}], next, initial, missing_persons, is_cached, last_refresh}`.
 * The funnel answer's converted_people_url / dropped_people_url point here.
 */
export function createPersonsFunnelRoutes(deps: PersonsFunnelDeps, service: TrendsService): RouteTable {
  const routes = new RouteTable();
  /** The legacy answer for a page of actors; `next` repeats the request with the page moved on (`pageParams` names its fields). */
  const legacyAnswer = (req: Request, answer: FunnelActorsResult, pageParams: { offset: string; limit: string }) => {
    const people = answer.results.map((row) => legacyActor(row[0] as FunnelActor));
    return {
      results: [{ people, count: people.length }],
      next: answer.hasMore ? absoluteUrlWith(req, { [pageParams.offset]: answer.offset + answer.limit, [pageParams.limit]: answer.limit }) : null,
      initial: absoluteUrlWith(req, { [pageParams.offset]: 0 }),
      missing_persons: answer.missing_actors_count,
      is_cached: false,
      last_refresh: new Date(deps.now()).toISOString(),
    };
  };
  const run = async (req: Request, input: Record<string, unknown>) => {
    try {
      const filter = parseFunnelFilter(input);
      const { request, page } = parseLegacyFunnelActors(input);
      const answer = await service.runFunnelActors(req.project!, filter, request, page, deps.now());
      return legacyAnswer(req, answer, { offset: 'offset', limit: 'limit' });
    } catch (error) {
      throw asValidationError(error);
    }
  };
  const runCorrelation = async (req: Request, input: Record<string, unknown>) => {
    try {
      const parsed = parseLegacyCorrelationActors(input);
      const answer = await service.runCorrelationActors(req.project!, parseFunnelFilter(parsed.funnelBody), parsed.request, parsed.page, deps.now());
      return legacyAnswer(req, answer, { offset: 'funnel_correlation_person_offset', limit: 'funnel_correlation_person_limit' });
    } catch (error) {
      throw asValidationError(error);
    }
  };
  routes.inProject((project) => {
    // PostHog's ee/clickhouse/views/person.py `funnel_correlation`: the persons behind a correlation row.
    const correlationPath = '/persons/funnel/correlation';
    project.get(
      correlationPath,
      { scope: 'person:read', summary: 'The persons (or groups) behind a funnel correlation row (legacy)', throttle: 'clickhouse' },
      async (req, res) => {
        await sendJson(res, await runCorrelation(req, insightQueryInput(req)));
      },
    );
    project.post(
      correlationPath,
      {
        scope: 'person:read',
        summary: 'The persons (or groups) behind a funnel correlation row (legacy, body)',
        body: funnelActorsBody,
        throttle: 'clickhouse',
        example: () => ({
          ...FUNNEL_EXAMPLE,
          funnel_correlation_person_entity: { id: '$pageview', type: 'events' },
          funnel_correlation_person_converted: 'true',
        }),
      },
      async (req, res) => {
        await sendJson(res, await runCorrelation(req, { ...insightQueryInput(req), ...insightBody(req) }));
      },
    );
    const path = '/persons/funnel';
    project.get(path, { scope: 'person:read', summary: 'The persons (or groups) behind a funnel step (legacy)', throttle: 'clickhouse' }, async (req, res) => {
      await sendJson(res, await run(req, insightQueryInput(req)));
    });
    project.post(
      path,
      {
        scope: 'person:read',
        summary: 'The persons (or groups) behind a funnel step (legacy, body)',
        body: funnelActorsBody,
        throttle: 'clickhouse',
        example: () => ({ ...FUNNEL_EXAMPLE, funnel_step: 1 }),
      },
      async (req, res) => {
        await sendJson(res, await run(req, { ...insightQueryInput(req), ...insightBody(req) }));
      },
    );
  });
  return routes;
}
