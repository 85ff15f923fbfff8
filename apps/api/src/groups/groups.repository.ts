import { queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import type { PersonsQueryRow } from '@sightline/insights';
import { compilePropertyGroup, propertyPresentSql, propertyTextSql, QueryParams, type PropertyGroup } from '@sightline/properties';

/** A group as its latest ClickHouse copy holds it. */
export interface GroupRow {
  groupTypeIndex: number;
  groupKey: string;
  properties: Record<string, unknown>;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** The keyset position of the row: created_at in microseconds. */
  createdAtUs: number;
}

export interface GroupsListQuery {
  teamId: number;
  groupTypeIndex: number;
  /** Properties containing it (any case), or a group key equal to it (any case). */
  search: string | null;
  /** Group keys containing it (any case). */
  groupKeyContains: string | null;
  /** Group property filters of this group type. */
  properties: PropertyGroup;
  /** Only groups after this one in the list's order (created_at, then key, both descending). */
  after: { createdAtUs: number; groupKey: string } | null;
  limit: number;
  nowMs: number;
}

/**
 * One row per group of a type, its latest version (ReplacingMergeTree copies are read with
 * argMax), deleted ones left out. `props` and `created` name the latest properties and creation time.
 */
const latestGroupsSql = (team: string, index: string, extra = '') => `(
    SELECT group_type_index, group_key, argMax(group_properties, version) AS props, argMax(created_at, version) AS created
    FROM groups WHERE team_id = ${team} AND group_type_index = ${index}${extra}
    GROUP BY group_type_index, group_key
    HAVING argMax(is_deleted, version) = 0)`;

interface RawGroup {
  group_type_index: number;
  group_key: string;
  props: string;
  created_text: string;
  created_us: string;
}

const GROUP_COLUMNS = 'group_type_index, group_key, props, toString(created) AS created_text, toString(toUnixTimestamp64Micro(created)) AS created_us';

function toGroupRow(raw: RawGroup): GroupRow {
  return {
    groupTypeIndex: Number(raw.group_type_index),
    groupKey: raw.group_key,
    properties: parseObject(raw.props),
    createdAt: `${raw.created_text.replace(' ', 'T')}Z`,
    createdAtUs: Number(raw.created_us),
  };
}

/**
 * A page of a type's groups, newest first (created_at, then key: a total order, so pages never
 * overlap or skip), and whether more follow. As PostHog's list_groups, from the ClickHouse copies.
 */
export async function listGroups(ch: ClickHouseClient, query: GroupsListQuery): Promise<{ rows: GroupRow[]; hasMore: boolean }> {
  const params = new QueryParams();
  const where = ['1'];
  if (query.search) {
    const search = params.add(query.search, 'String');
    where.push(`(positionCaseInsensitiveUTF8(props, ${search}) > 0 OR lowerUTF8(group_key) = lowerUTF8(${search}))`);
  }
  if (query.groupKeyContains) where.push(`positionCaseInsensitiveUTF8(group_key, ${params.add(query.groupKeyContains, 'String')}) > 0`);
  if (query.properties.values.length > 0) {
    where.push(
      compilePropertyGroup(query.properties, {
        params,
        nowMs: query.nowMs,
        propertiesColumn: (filter) => (filter.type === 'group' && filter.group_type_index === query.groupTypeIndex ? 'props' : null),
      }),
    );
  }
  if (query.after) {
    where.push(
      `(created, group_key) < (fromUnixTimestamp64Micro(${params.add(query.after.createdAtUs, 'Int64')}, 'UTC'), ${params.add(query.after.groupKey, 'String')})`,
    );
  }
  const from = latestGroupsSql(params.add(query.teamId, 'Int64'), params.add(query.groupTypeIndex, 'UInt8'));
  const rows = await queryClickhouse<RawGroup>(ch, {
    kind: 'groups.list',
    teamId: query.teamId,
    sql: `SELECT ${GROUP_COLUMNS} FROM ${from} WHERE ${where.join(' AND ')}
              ORDER BY created DESC, group_key DESC LIMIT ${params.add(query.limit + 1, 'UInt32')}`,
    params: params.values,
  });
  return { rows: rows.slice(0, query.limit).map(toGroupRow), hasMore: rows.length > query.limit };
}

/** The groups of a type with these keys (those that exist), by key. */
export async function findGroupsByKeys(ch: ClickHouseClient, teamId: number, groupTypeIndex: number, keys: readonly string[]): Promise<GroupRow[]> {
  if (keys.length === 0) return [];
  const params = new QueryParams();
  const from = latestGroupsSql(params.add(teamId, 'Int64'), params.add(groupTypeIndex, 'UInt8'), ` AND group_key IN ${params.add(keys, 'Array(String)')}`);
  const rows = await queryClickhouse<RawGroup>(ch, {
    kind: 'groups.by_keys',
    teamId,
    sql: `SELECT ${GROUP_COLUMNS} FROM ${from} ORDER BY group_key`,
    params: params.values,
  });
  return rows.map(toGroupRow);
}

/** Property keys per group type with the number of groups having each (PostHog's groups/property_definitions). */
export async function groupPropertyKeys(
  ch: ClickHouseClient,
  teamId: number,
  perTypeLimit: number,
): Promise<{ groupTypeIndex: number; name: string; count: number }[]> {
  const params = new QueryParams();
  const team = params.add(teamId, 'Int64');
  const rows = await queryClickhouse<{ group_type_index: number; key: string; n: string }>(ch, {
    kind: 'groups.property_keys',
    teamId,
    sql: `SELECT group_type_index, key, count() AS n
              FROM (SELECT group_type_index, group_key, argMax(group_properties, version) AS props FROM groups WHERE team_id = ${team}
                    GROUP BY group_type_index, group_key HAVING argMax(is_deleted, version) = 0)
              ARRAY JOIN JSONExtractKeys(props) AS key
              GROUP BY group_type_index, key
              ORDER BY group_type_index ASC, n DESC, key ASC
              LIMIT ${params.add(perTypeLimit, 'UInt32')} BY group_type_index`,
    params: params.values,
  });
  return rows.map((r) => ({ groupTypeIndex: Number(r.group_type_index), name: r.key, count: Number(r.n) }));
}

/**
 * The most common values of a group property among a type's groups (each group's latest value),
 * optionally only those containing `contains` (any case): PostHog's groups/property_values.
 */
export async function groupPropertyValues(
  ch: ClickHouseClient,
  query: { teamId: number; groupTypeIndex: number; key: string; contains: string | null; limit: number },
): Promise<{ name: string; count: number }[]> {
  const params = new QueryParams();
  const key = params.add(query.key, 'String');
  const from = latestGroupsSql(params.add(query.teamId, 'Int64'), params.add(query.groupTypeIndex, 'UInt8'));
  const where = [propertyPresentSql('props', key)];
  if (query.contains) where.push(`positionCaseInsensitiveUTF8(value, ${params.add(query.contains, 'String')}) > 0`);
  const rows = await queryClickhouse<{ value: string; n: string }>(ch, {
    kind: 'groups.property_values',
    teamId: query.teamId,
    sql: `SELECT value, count() AS n FROM (SELECT ${propertyTextSql('props', key)} AS value, props FROM ${from})
              WHERE ${where.join(' AND ')}
              GROUP BY value ORDER BY n DESC, value ASC LIMIT ${params.add(query.limit, 'UInt32')}`,
    params: params.values,
  });
  return rows.map((r) => ({ name: r.value, count: Number(r.n) }));
}

/** Events a related-actors query reads: the last 90 days, as PostHog's RelatedActorsQuery. */
export interface RelatedWindow {
  teamId: number;
  fromMs: number;
  toMs: number;
}

/** The SQL condition "the event belongs to this actor" (a group key of a type, or a person by uuid). */
function actorEventsSql(params: QueryParams, team: string, actor: { groupTypeIndex: number; groupKey: string } | { personUuid: string }): string {
  if ('personUuid' in actor) {
    // The person's distinct ids now (merges included), as person_distinct_id2's latest versions hold them.
    return `distinct_id IN (SELECT distinct_id FROM person_distinct_id2 WHERE team_id = ${team} GROUP BY distinct_id
              HAVING argMax(person_id, version) = ${params.add(actor.personUuid, 'UUID')} AND argMax(is_deleted, version) = 0)`;
  }
  return `JSONExtractString(properties, ${params.add(`$group_${actor.groupTypeIndex}`, 'String')}) = ${params.add(actor.groupKey, 'String')}`;
}

const windowSql = (params: QueryParams, window: RelatedWindow) =>
  `timestamp > fromUnixTimestamp64Milli(${params.add(window.fromMs, 'Int64')}, 'UTC') AND timestamp < fromUnixTimestamp64Milli(${params.add(window.toMs, 'Int64')}, 'UTC')`;

/** The persons whose distinct ids sent events of the group in the window (at most `limit`), by uuid. */
export async function relatedPersonUuids(
  ch: ClickHouseClient,
  window: RelatedWindow,
  group: { groupTypeIndex: number; groupKey: string },
  limit: number,
): Promise<string[]> {
  const params = new QueryParams();
  const team = params.add(window.teamId, 'Int64');
  const rows = await queryClickhouse<{ person_id: string }>(ch, {
    kind: 'groups.related_persons',
    teamId: window.teamId,
    sql: `SELECT DISTINCT person_id FROM (
                SELECT toString(argMax(person_id, version)) AS person_id FROM person_distinct_id2
                WHERE team_id = ${team} AND distinct_id IN (
                  SELECT DISTINCT distinct_id FROM events WHERE team_id = ${team} AND ${windowSql(params, window)} AND ${actorEventsSql(params, team, group)})
                GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)
              ORDER BY person_id LIMIT ${params.add(limit, 'UInt32')}`,
    params: params.values,
  });
  return rows.map((r) => r.person_id);
}

/** The keys of each of `groupTypeIndexes` that appear on the actor's events in the window (at most `limit` per type). */
export async function relatedGroupKeys(
  ch: ClickHouseClient,
  window: RelatedWindow,
  actor: { groupTypeIndex: number; groupKey: string } | { personUuid: string },
  groupTypeIndexes: readonly number[],
  limit: number,
): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  if (groupTypeIndexes.length === 0) return found;
  const params = new QueryParams();
  const team = params.add(window.teamId, 'Int64');
  const pairs = groupTypeIndexes.map(
    (index) => `tuple(toUInt8(${params.add(index, 'UInt8')}), JSONExtractString(properties, ${params.add(`$group_${index}`, 'String')}))`,
  );
  const rows = await queryClickhouse<{ group_type_index: number; group_key: string }>(ch, {
    kind: 'groups.related_groups',
    teamId: window.teamId,
    sql: `SELECT g.1 AS group_type_index, g.2 AS group_key FROM events
              ARRAY JOIN arrayFilter(x -> x.2 != '', [${pairs.join(', ')}]) AS g
              WHERE team_id = ${team} AND ${windowSql(params, window)} AND ${actorEventsSql(params, team, actor)}
              GROUP BY group_type_index, group_key
              ORDER BY group_type_index, group_key LIMIT ${params.add(limit, 'UInt32')} BY group_type_index`,
    params: params.values,
  });
  for (const row of rows) {
    const index = Number(row.group_type_index);
    found.set(index, [...(found.get(index) ?? []), row.group_key]);
  }
  return found;
}

/** The latest ClickHouse copies of these persons (deleted ones left out), as the persons list reads them. */
export async function personCopies(ch: ClickHouseClient, teamId: number, uuids: readonly string[]): Promise<PersonsQueryRow[]> {
  if (uuids.length === 0) return [];
  const params = new QueryParams();
  const rows = await queryClickhouse<{ uuid: string; props: string; created_text: string; identified: number }>(ch, {
    kind: 'groups.person_copies',
    teamId,
    sql: `SELECT toString(id) AS uuid, argMax(properties, version) AS props, toString(argMax(created_at, version)) AS created_text,
                     argMax(is_identified, version) AS identified
              FROM person WHERE team_id = ${params.add(teamId, 'Int64')} AND id IN ${params.add(uuids, 'Array(UUID)')}
              GROUP BY id HAVING argMax(is_deleted, version) = 0
              ORDER BY argMax(created_at, version), id`,
    params: params.values,
  });
  return rows.map((r) => ({
    uuid: r.uuid,
    properties: parseObject(r.props),
    createdAt: `${r.created_text.replace(' ', 'T')}Z`,
    isIdentified: Number(r.identified) === 1,
  }));
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
