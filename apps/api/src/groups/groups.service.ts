import type { Request } from 'express';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import { findGroup } from '@sightline/persons';
import type { Sql } from '@sightline/postgres';
import { filtersOf, MAX_GROUP_TYPE_INDEX, type PropertyGroup } from '@sightline/properties';
import { isUuidText } from '@sightline/insights';
import { parseInteger } from '../http/drf-fields';
import { parsePropertiesParam } from '../http/properties-param';
import { listGroupTypes } from '../groups-types';
import { listedPersonsOf, serializePersons } from '../persons';
import { decodeGroupsCursor } from './groups-cursor';
import {
  findGroupsByKeys,
  groupPropertyKeys,
  groupPropertyValues,
  listGroups,
  personCopies,
  relatedGroupKeys,
  relatedPersonUuids,
  type GroupRow,
} from './groups.repository';
import { serializeRelatedGroup, serializeRelatedPerson } from './group.serializer';

/** PostHog's page of groups. */
export const GROUPS_PAGE_SIZE = 100;
/** The largest page `limit` asks for (Sightline's; PostHog's page is fixed). */
const MAX_GROUPS_PAGE_SIZE = 1_000;
/** Property keys answered per group type. */
const PROPERTY_KEYS_PER_TYPE = 1_000;
/** PostHog's property_values answer size. */
const PROPERTY_VALUES_LIMIT = 20;
/** Actors are related by shared events of this many days back (PostHog's RelatedActorsQuery). */
const RELATED_DAYS = 90;
/** The most persons, and groups of each type, a related answer lists. */
export const RELATED_LIMIT = 1_000;

export interface GroupsDeps {
  db: Sql;
  ch: ClickHouseClient;
  now: () => number;
}

/** A query parameter as text, or null when absent or empty (of `?a=1&a=2`, the first). */
export function queryText(req: Request, name: string): string | null {
  const raw = req.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `group_type_index` from the query: required, 0 to 4. */
export function groupTypeIndexParam(req: Request, missing = 'This query parameter is required.'): number {
  const text = queryText(req, 'group_type_index');
  if (text === null) throw errors.validation(missing, 'group_type_index', 'required');
  return parseInteger(text, 'group_type_index', { min: 0, max: MAX_GROUP_TYPE_INDEX });
}

function requiredText(req: Request, name: string): string {
  const text = queryText(req, name);
  if (text === null) throw errors.validation('This query parameter is required.', name, 'required');
  return text;
}

/** Group property filters of the listed type (a filter naming another type could never match its groups). */
function groupFilters(req: Request, groupTypeIndex: number): PropertyGroup {
  const properties = parsePropertiesParam(queryText(req, 'properties'), { types: new Set(['group']) });
  for (const filter of filtersOf(properties)) {
    if (filter.group_type_index !== groupTypeIndex) {
      throw errors.validation(`Group property filters here must name group_type_index ${groupTypeIndex}, the listed type.`, 'properties', 'invalid_input');
    }
  }
  return properties;
}

/** One page of GET …/groups/ and where the next one starts (null: this is the last). */
export async function listGroupsPage(deps: GroupsDeps, req: Request): Promise<{ rows: GroupRow[]; next: GroupRow | null }> {
  const groupTypeIndex = groupTypeIndexParam(
    req,
    'You must pass ?group_type_index= in this URL. To get a list of valid group types, call /api/:project_id/groups_types/.',
  );
  const limitText = queryText(req, 'limit');
  const limit = limitText === null ? GROUPS_PAGE_SIZE : parseInteger(limitText, 'limit', { min: 1, max: MAX_GROUPS_PAGE_SIZE });
  const cursor = queryText(req, 'cursor');
  const { rows, hasMore } = await listGroups(deps.ch, {
    teamId: req.project!.id,
    groupTypeIndex,
    search: queryText(req, 'search'),
    groupKeyContains: queryText(req, 'group_key'),
    properties: groupFilters(req, groupTypeIndex),
    after: cursor === null ? null : decodeGroupsCursor(cursor),
    limit,
    nowMs: deps.now(),
  });
  return { rows, next: hasMore ? rows[rows.length - 1]! : null };
}

/** GET …/groups/find/: the group of a type with that key, from PostgreSQL (the source of truth). */
export async function findGroupByKey(deps: GroupsDeps, req: Request) {
  const groupTypeIndex = groupTypeIndexParam(req);
  const groupKey = requiredText(req, 'group_key');
  const group = await findGroup(deps.db, req.project!.id, groupTypeIndex, groupKey);
  if (!group) throw errors.notFound();
  return { groupTypeIndex, groupKey, properties: group.properties, createdAt: group.createdAt };
}

/** GET …/groups/property_definitions/: `{"<index>": [{name, count}]}`, most used keys first. */
export async function groupPropertyDefinitions(deps: GroupsDeps, req: Request): Promise<Record<string, { name: string; count: number }[]>> {
  const answer: Record<string, { name: string; count: number }[]> = {};
  for (const row of await groupPropertyKeys(deps.ch, req.project!.id, PROPERTY_KEYS_PER_TYPE)) {
    (answer[String(row.groupTypeIndex)] ??= []).push({ name: row.name, count: row.count });
  }
  return answer;
}

/** GET …/groups/property_values/: the 20 most common values of `key`, optionally containing `value`. */
export async function groupPropertyValuesOf(deps: GroupsDeps, req: Request) {
  const groupTypeIndex = groupTypeIndexParam(req);
  const key = requiredText(req, 'key');
  const results = await groupPropertyValues(deps.ch, {
    teamId: req.project!.id,
    groupTypeIndex,
    key,
    contains: queryText(req, 'value'),
    limit: PROPERTY_VALUES_LIMIT,
  });
  return { results, refreshing: false };
}

/**
 * GET …/groups/related/: the actors that shared events with a group (`group_type_index` and `id`,
 * the group key) or a person (`id`, the person's uuid) in the last 90 days: the group's persons,
 * then the groups of every other type, each type's keys in order (PostHog's RelatedActorsQuery).
 */
export async function relatedActors(deps: GroupsDeps, req: Request): Promise<unknown[]> {
  const teamId = req.project!.id;
  const id = requiredText(req, 'id');
  const groupTypeIndex = queryText(req, 'group_type_index') === null ? null : groupTypeIndexParam(req);
  if (groupTypeIndex === null && !isUuidText(id)) throw errors.validation("Without group_type_index, id must be a person's uuid.", 'id', 'invalid');
  const nowMs = deps.now();
  const window = { teamId, fromMs: nowMs - RELATED_DAYS * 86_400_000, toMs: nowMs };
  const actor = groupTypeIndex === null ? { personUuid: id } : { groupTypeIndex, groupKey: id };
  const otherTypes = (await listGroupTypes(deps.db, teamId)).map((t) => t.group_type_index).filter((index) => index !== groupTypeIndex);

  const [personUuids, keysByType] = await Promise.all([
    groupTypeIndex === null ? Promise.resolve([]) : relatedPersonUuids(deps.ch, window, { groupTypeIndex, groupKey: id }, RELATED_LIMIT),
    relatedGroupKeys(deps.ch, window, actor, otherTypes, RELATED_LIMIT),
  ]);
  const persons = serializePersons(
    await listedPersonsOf(deps.db, teamId, await personCopies(deps.ch, teamId, personUuids)),
    req.project!.person_display_name_properties,
  );
  const groups: GroupRow[] = [];
  for (const index of otherTypes) groups.push(...(await findGroupsByKeys(deps.ch, teamId, index, keysByType.get(index) ?? [])));
  return [...persons.map(serializeRelatedPerson), ...groups.map(serializeRelatedGroup)];
}
