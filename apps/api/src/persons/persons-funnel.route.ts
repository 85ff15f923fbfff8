import type { Request } from 'express';
import { sendJson } from '@sightline/http';
import { parseFunnelFilter, parseLegacyCorrelationActors, parseLegacyFunnelActors, type TrendsService } from '@sightline/insights';
import { funnelActorsBody } from '../http/legacy-filter-body';
import { asValidationError, insightBody, insightQueryInput } from '../http/insight-request';
import { RouteTable } from '../http/route-registry';
import { legacyActorsAnswer } from './persons-funnel.serializer';

export interface PersonsFunnelDeps {
  now: () => number;
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

const read = { scope: 'person:read', throttle: 'clickhouse' } as const;
const correlationExample = () => ({
  ...FUNNEL_EXAMPLE,
  funnel_correlation_person_entity: { id: '$pageview', type: 'events' },
  funnel_correlation_person_converted: 'true',
});

/** The persons (or groups) behind a funnel step, in the legacy answer. */
async function funnelStepActors(deps: PersonsFunnelDeps, service: TrendsService, req: Request, input: Record<string, unknown>) {
  try {
    const filter = parseFunnelFilter(input);
    const { request, page } = parseLegacyFunnelActors(input);
    const answer = await service.runFunnelActors(req.project!, filter, request, page, deps.now());
    return legacyActorsAnswer(req, answer, deps.now(), { offset: 'offset', limit: 'limit' });
  } catch (error) {
    throw asValidationError(error);
  }
}

/** The persons (or groups) behind a funnel correlation row, in the legacy answer. */
async function correlationActors(deps: PersonsFunnelDeps, service: TrendsService, req: Request, input: Record<string, unknown>) {
  try {
    const parsed = parseLegacyCorrelationActors(input);
    const answer = await service.runCorrelationActors(req.project!, parseFunnelFilter(parsed.funnelBody), parsed.request, parsed.page, deps.now());
    return legacyActorsAnswer(req, answer, deps.now(), { offset: 'funnel_correlation_person_offset', limit: 'funnel_correlation_person_limit' });
  } catch (error) {
    throw asValidationError(error);
  }
}

/**
 * PostHog's legacy `GET|POST persons/funnel/` (posthog/api/person.py `funnel`): the funnel filter
 * and `funnel_step` (…) in the query string (and body), answered as
 * `{results: [{people, count}], next, initial, missing_persons, is_cached, last_refresh}`.
 * The funnel answer's converted_people_url / dropped_people_url point here. Also PostHog's
 * ee/clickhouse/views/person.py `funnel_correlation`: the persons behind a correlation row.
 */
export function createPersonsFunnelRoutes(deps: PersonsFunnelDeps, service: TrendsService): RouteTable {
  const routes = new RouteTable();
  routes.inProject((project) => {
    const correlationPath = '/persons/funnel/correlation';
    project.get(correlationPath, { ...read, summary: 'The persons (or groups) behind a funnel correlation row (legacy)' }, async (req, res) => {
      await sendJson(res, await correlationActors(deps, service, req, insightQueryInput(req)));
    });
    const correlationPost = {
      ...read,
      summary: 'The persons (or groups) behind a funnel correlation row (legacy, body)',
      body: funnelActorsBody,
      example: correlationExample,
    };
    project.post(correlationPath, correlationPost, async (req, res) => {
      await sendJson(res, await correlationActors(deps, service, req, { ...insightQueryInput(req), ...insightBody(req) }));
    });
    const path = '/persons/funnel';
    project.get(path, { ...read, summary: 'The persons (or groups) behind a funnel step (legacy)' }, async (req, res) => {
      await sendJson(res, await funnelStepActors(deps, service, req, insightQueryInput(req)));
    });
    const stepPost = {
      ...read,
      summary: 'The persons (or groups) behind a funnel step (legacy, body)',
      body: funnelActorsBody,
      example: () => ({ ...FUNNEL_EXAMPLE, funnel_step: 1 }),
    };
    project.post(path, stepPost, async (req, res) => {
      await sendJson(res, await funnelStepActors(deps, service, req, { ...insightQueryInput(req), ...insightBody(req) }));
    });
  });
  return routes;
}
