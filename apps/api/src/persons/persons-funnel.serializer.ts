import type { Request } from 'express';
import type { FunnelActor, FunnelActorsResult } from '@sightline/insights';
import { absoluteUrlWith } from '../http/pagination';
import { orderDistinctIds, personDisplayName } from './person-name';

/** An actor as PostHog's legacy actor endpoints serialize it (SerializedPerson / SerializedGroup). */
export function legacyActor(actor: FunnelActor): Record<string, unknown> {
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

/**
 * The legacy answer for a page of actors; `next` repeats the request with the page moved on
 * (`pageParams` names its fields).
 */
export function legacyActorsAnswer(req: Request, answer: FunnelActorsResult, nowMs: number, pageParams: { offset: string; limit: string }) {
  const people = answer.results.map((row) => legacyActor(row[0] as FunnelActor));
  return {
    results: [{ people, count: people.length }],
    next: answer.hasMore ? absoluteUrlWith(req, { [pageParams.offset]: answer.offset + answer.limit, [pageParams.limit]: answer.limit }) : null,
    initial: absoluteUrlWith(req, { [pageParams.offset]: 0 }),
    missing_persons: answer.missing_actors_count,
    is_cached: false,
    last_refresh: new Date(nowMs).toISOString(),
  };
}
