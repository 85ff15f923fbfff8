import type { Request } from 'express';
import { errors } from '@sightline/http';
import { isUuidText, PERSONS_CSV_EXPORT_LIMIT, type PersonsQuery } from '@sightline/insights';
import type { PersonRef } from '@sightline/persons';
import { parseBody, parseBoolean, parseDict, parseInteger, parseList, parseString, queryInteger } from '../http/drf-fields';
import { MAX_PERSONS_PAGE_SIZE } from '../http/pagination';
import { parsePropertiesParam } from '../http/properties-param';

/** PostHog's bulk_delete limit per call. */
export const MAX_BULK_DELETE = 1000;
/** Property filters the persons list applies: the person's properties and cohorts. */
const PERSON_FILTER_TYPES = { types: new Set(['person', 'cohort']) };
const PERSON_ID_TEXT = /^\d{1,18}$/;

/** A query parameter as text, or null when absent or empty (an array, from `?a=1&a=2`, takes the first). */
export function queryText(req: Request, name: string): string | null {
  const raw = req.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A person named by its uuid or its integer id; null when `raw` is neither. */
export function parsePersonRef(raw: string): PersonRef | null {
  if (isUuidText(raw)) return { uuid: raw };
  return PERSON_ID_TEXT.test(raw) ? { id: raw } : null;
}

/** The list's filters from the query string (everything but paging). */
export type PersonsListFilters = Required<Pick<PersonsQuery, 'properties' | 'cohortId' | 'distinctId' | 'email' | 'search'>>;

export function parseListFilters(req: Request): PersonsListFilters {
  const properties = parsePropertiesParam(queryText(req, 'properties'), PERSON_FILTER_TYPES);
  const cohortText = queryText(req, 'cohort');
  if (cohortText !== null && !/^\d{1,9}$/.test(cohortText)) throw errors.validation('A valid integer is required.', 'cohort', 'invalid');
  return {
    properties,
    cohortId: cohortText === null ? null : Number(cohortText),
    distinctId: queryText(req, 'distinct_id'),
    email: queryText(req, 'email'),
    search: queryText(req, 'search'),
  };
}

/** A page of the list: `limit` (default 100), `offset`, and the snapshot `persons_through` carried by its links. */
export function parseListPage(req: Request): { limit: number; offset: number; through: string | null } {
  const through = queryText(req, 'persons_through');
  return {
    limit: Math.min(queryInteger(req.query['limit'], 100, 1), MAX_PERSONS_PAGE_SIZE),
    offset: queryInteger(req.query['offset'], 0, 0),
    through: through !== null && PERSON_ID_TEXT.test(through) ? through : null,
  };
}

/** How many persons a CSV export lists: `limit`, at most PostHog's export limit. */
export const parseCsvCap = (req: Request): number => Math.min(queryInteger(req.query['limit'], PERSONS_CSV_EXPORT_LIMIT, 1), PERSONS_CSV_EXPORT_LIMIT);

export const isCsvRequest = (req: Request): boolean => queryText(req, 'format') === 'csv';

/** Which persons a bulk delete names: by distinct ids, or by ids (uuids or integer ids). */
export type BulkDeleteTargets = { distinctIds: string[] } | { uuids: string[]; ids: string[] };

export function parseBulkDelete(raw: unknown): { deleteEvents: boolean; targets: BulkDeleteTargets } {
  const body = parseBody(raw ?? {});
  const deleteEvents = body['delete_events'] === undefined ? false : parseBoolean(body['delete_events'], 'delete_events');
  const distinctIds = body['distinct_ids'] === undefined || body['distinct_ids'] === null ? [] : parseList(body['distinct_ids'], 'distinct_ids');
  const ids = body['ids'] === undefined || body['ids'] === null ? [] : parseList(body['ids'], 'ids');
  if (distinctIds.length > 0 && ids.length > 0) throw errors.validation('You must provide either distinct_ids or ids, not both', null, 'invalid');
  if (distinctIds.length > MAX_BULK_DELETE) throw errors.validation(`You can only pass ${MAX_BULK_DELETE} distinct_ids in one call`, null, 'invalid');
  if (ids.length > MAX_BULK_DELETE) throw errors.validation(`You can only pass ${MAX_BULK_DELETE} ids in one call`, null, 'invalid');
  if (distinctIds.length === 0 && ids.length === 0) throw errors.validation('You need to specify either distinct_ids or ids', null, 'invalid');
  if (distinctIds.length > 0)
    return { deleteEvents, targets: { distinctIds: distinctIds.map((d, i) => parseString(d, `distinct_ids__${i}`, { maxLength: 400 })) } };
  // PostHog takes person uuids; integer ids are taken too.
  const texts = ids.map((v, i) => parseString(v, `ids__${i}`, { maxLength: 100 }));
  return { deleteEvents, targets: { uuids: texts.filter(isUuidText), ids: texts.filter((t) => PERSON_ID_TEXT.test(t)) } };
}

/** `delete_events` of a person's DELETE (query string). */
export const parseDeleteEvents = (req: Request): boolean =>
  req.query['delete_events'] === undefined ? false : parseBoolean(req.query['delete_events'], 'delete_events');

/** PATCH/PUT body: the properties to set (`properties`, required). */
export function parsePropertiesChange(raw: unknown): Record<string, unknown> {
  const body = parseBody(raw ?? {});
  if (body['properties'] === undefined) throw errors.validation('This field is required.', 'properties', 'required');
  return parseDict(body['properties'], 'properties');
}

/** update_property body: `key` and `value` (any JSON, null included), both required. */
export function parseSetProperty(raw: unknown): { key: string; value: unknown } {
  const body = parseBody(raw ?? {});
  if (body['key'] === undefined) throw errors.validation('This field is required.', 'key', 'required');
  if (!('value' in body)) throw errors.validation('This field is required.', 'value', 'required');
  return { key: parseString(body['key'], 'key', { maxLength: 400 }), value: body['value'] };
}

/** delete_property body: the key to remove, `$unset`. */
export function parseUnsetProperty(raw: unknown): string {
  const body = parseBody(raw ?? {});
  if (body['$unset'] === undefined) throw errors.validation('This field is required.', '$unset', 'required');
  return parseString(body['$unset'], '$unset', { maxLength: 400 });
}

/** split body: the distinct id that stays (none or empty: the first) and how many ids move at most. */
export function parseSplit(raw: unknown): { mainDistinctId: string | null; maxSplits: number | null } {
  const body = parseBody(raw ?? {});
  const main = body['main_distinct_id'];
  return {
    mainDistinctId: main == null || main === '' ? null : parseString(main, 'main_distinct_id', { maxLength: 400 }),
    maxSplits: body['max_splits'] == null ? null : parseInteger(body['max_splits'], 'max_splits', { min: 1 }),
  };
}

/** PostHog's activity paging: `limit` (default 10) and 1-based `page`. */
export function parseActivityPaging(req: Request): { limit: number; page: number } {
  return { limit: Math.min(queryInteger(req.query['limit'], 10, 1), 1000), page: queryInteger(req.query['page'], 1, 1) };
}
