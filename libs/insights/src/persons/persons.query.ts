import { queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import { compilePropertyGroup, QueryParams, type CompileContext, type PropertyGroup } from '@sightline/properties';
import { cohortMembershipSql, UnknownCohortError, type CohortDefinition } from '../cohorts/cohort-membership.sql';

/** PostHog's CSV_EXPORT_LIMIT: the most persons one `format=csv` answer lists. */
export const PERSONS_CSV_EXPORT_LIMIT = 300_000;

/** Which persons of a project a list shows (every condition must hold). */
export interface PersonsQuery {
  teamId: number;
  /** Persons created after this instant are left out (PostHog's filter_future_persons). */
  nowMs: number;
  /** Person-property and cohort filters. */
  properties?: PropertyGroup;
  /** Members of this cohort only. */
  cohortId?: number | null;
  /** Every cohort the filters and `cohortId` name, loaded (loadCohortsForQuery). */
  cohorts?: ReadonlyMap<number, CohortDefinition>;
  /** The person this distinct id currently belongs to. */
  distinctId?: string | null;
  /** `properties.email` equal to this. */
  email?: string | null;
  /** E-mail containing this (any case), or this exact distinct id. */
  search?: string | null;
  /** Persons left out whatever else matches (those created after a list's first page). */
  excludedUuids?: readonly string[];
  limit: number;
  offset: number;
}

/** A person as the ClickHouse copy holds it (latest version, not deleted). */
export interface PersonsQueryRow {
  uuid: string;
  properties: Record<string, unknown>;
  createdAt: string;
  isIdentified: boolean;
}

/**
 * Persons of a project from ClickHouse's `person` copies, newest first (created_at, then uuid, a
 * total order, so pages never overlap or skip while nothing changes), filtered through the shared
 * property compiler; each filter reads the person's latest properties. Answers one page and the
 * number of persons matching.
 */
export async function queryPersons(ch: ClickHouseClient, query: PersonsQuery): Promise<{ rows: PersonsQueryRow[]; count: number }> {
  const { from, params } = personsFromSql(query);
  const limit = params.add(query.limit, 'UInt32');
  const offset = params.add(query.offset, 'UInt64');
  const [rows, counted] = await Promise.all([
    queryClickhouse<{ uuid: string; person_properties: string; person_created_at: string; person_is_identified: number }>(ch, {
      kind: 'persons.list',
      teamId: query.teamId,
      sql: `SELECT toString(id) AS uuid, person_properties, person_created_at, person_is_identified ${from}
            ORDER BY person_created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      params: params.values,
    }),
    queryClickhouse<{ n: string }>(ch, { kind: 'persons.count', teamId: query.teamId, sql: `SELECT count() AS n ${from}`, params: params.values }),
  ]);
  return {
    rows: rows.map((r) => ({
      uuid: r.uuid,
      properties: parseProperties(r.person_properties),
      createdAt: `${r.person_created_at.replace(' ', 'T')}Z`,
      isIdentified: Number(r.person_is_identified) === 1,
    })),
    count: Number(counted[0]?.n ?? 0),
  };
}

/** FROM … WHERE of the persons a query names (one row per person, its latest version), with its parameters. */
function personsFromSql(query: PersonsQuery): { from: string; params: QueryParams } {
  const params = new QueryParams();
  const team = params.add(query.teamId, 'Int64');
  const cohorts = query.cohorts ?? new Map<number, CohortDefinition>();
  const cohortCtx = { params, teamParam: team, nowMs: query.nowMs };
  const personOf = (distinctId: string) =>
    `id IN (SELECT argMax(person_id, version) FROM person_distinct_id2 WHERE team_id = ${team} AND distinct_id = ${params.add(distinctId, 'String')}
        GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)`;
  const inner = [`team_id = ${team}`];
  const outer = ['person_deleted = 0', `person_created_at <= toDateTime64(${params.add(query.nowMs / 1000, 'Float64')}, 3, 'UTC')`];
  if (query.distinctId != null) inner.push(personOf(query.distinctId));
  if (query.excludedUuids && query.excludedUuids.length > 0) inner.push(`id NOT IN ${params.add(query.excludedUuids, 'Array(UUID)')}`);
  const email = `JSONExtractString(person_properties, 'email')`;
  if (query.email != null) outer.push(`${email} = ${params.add(query.email, 'String')}`);
  if (query.search != null && query.search !== '') {
    outer.push(`(positionCaseInsensitiveUTF8(${email}, ${params.add(query.search, 'String')}) > 0 OR ${personOf(query.search)})`);
  }
  if (query.cohortId != null) outer.push(cohortMembershipSql(query.cohortId, cohorts, 'id', cohortCtx));
  if (query.properties && query.properties.values.length > 0) {
    const ctx: CompileContext = {
      params,
      nowMs: query.nowMs,
      propertiesColumn: (filter) => ((filter.type ?? 'person') === 'person' ? 'person_properties' : null),
      cohortMembership: (cohortId) => cohortMembershipSql(cohortId, cohorts, 'id', cohortCtx),
    };
    outer.push(compilePropertyGroup(query.properties, ctx));
  }
  return {
    params,
    from: `FROM (
        SELECT id, argMax(properties, version) AS person_properties, argMax(is_identified, version) AS person_is_identified,
               argMax(created_at, version) AS person_created_at, argMax(is_deleted, version) AS person_deleted
        FROM person WHERE ${inner.join(' AND ')} GROUP BY id)
      WHERE ${outer.filter((c) => c !== '1').join(' AND ')}`,
  };
}

/**
 * The cohorts (of `cohorts`, the project's live ones) the person is in now: static cohorts by
 * their stored members, dynamic ones by the person's current properties, in one query. A cohort
 * that cannot be evaluated (it contains itself, or nests too deep) is left out.
 */
export async function cohortsOfPerson(
  ch: ClickHouseClient,
  query: { teamId: number; personUuid: string; nowMs: number; cohorts: ReadonlyMap<number, CohortDefinition> },
): Promise<number[]> {
  const params = new QueryParams();
  const ctx = { params, teamParam: params.add(query.teamId, 'Int64'), nowMs: query.nowMs };
  const person = params.add(query.personUuid, 'UUID');
  const columns: { id: number; sql: string }[] = [];
  for (const id of query.cohorts.keys()) {
    try {
      columns.push({ id, sql: cohortMembershipSql(id, query.cohorts, person, ctx) });
    } catch (error) {
      if (!(error instanceof UnknownCohortError)) throw error;
    }
  }
  if (columns.length === 0) return [];
  const [row] = await queryClickhouse<Record<string, number>>(ch, {
    kind: 'persons.cohorts',
    teamId: query.teamId,
    sql: `SELECT ${columns.map((c, i) => `toUInt8(ifNull(${c.sql}, 0)) AS c${i}`).join(', ')}`,
    params: params.values,
  });
  return columns.filter((_, i) => Number(row?.[`c${i}`]) === 1).map((c) => c.id);
}

/** The most values personPropertyValues answers. */
const PROPERTY_VALUES_LIMIT = 100;

/**
 * Values of one property over the project's live persons (latest version of each), most common
 * first, with how many persons hold each; `value` keeps those containing it (any case).
 */
export async function personPropertyValues(
  ch: ClickHouseClient,
  query: { teamId: number; key: string; value: string | null },
): Promise<{ name: string; count: number }[]> {
  const rows = await queryClickhouse<{ name: string; count: string }>(ch, {
    kind: 'persons.values',
    teamId: query.teamId,
    sql: `SELECT JSONExtractString(p, {key:String}) AS name, count() AS count FROM (
            SELECT argMax(properties, version) AS p, argMax(is_deleted, version) AS deleted FROM person WHERE team_id = {team:Int64} GROUP BY id)
          WHERE deleted = 0 AND JSONHas(p, {key:String}) AND (isNull({value:Nullable(String)}) OR positionCaseInsensitiveUTF8(name, assumeNotNull({value:Nullable(String)})) > 0)
          GROUP BY name ORDER BY count DESC, name LIMIT {limit:UInt32}`,
    params: { team: query.teamId, key: query.key, value: query.value, limit: PROPERTY_VALUES_LIMIT },
  });
  return rows.map((r) => ({ name: r.name, count: Number(r.count) }));
}

function parseProperties(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
