import type { ClickHouseClient } from '@clickhouse/client';
import { isJsonObject } from '@sightline/json-input';
import { findPersonsByUuids } from '@sightline/persons';
import type { Sql } from '@sightline/postgres';
import { DateTime } from 'luxon';
import { formatBucketDay } from '../common/date-range';
import type { ParsedFunnelFilter } from './funnel-filter';
import { funnelRangeAndFilters, rows } from './funnels.query';
import { FunnelActorsSqlBuilder, FunnelTrendActorsSqlBuilder, type FunnelActorsCondition } from './funnel-actors.sql';
import { QueryFilterError } from '../common/query-filter-error';
import { type QuerySqlPorts, type QueryPorts } from '../common/query-ports';
import { type QueryProject } from '../common/query-project';

/** PostHog's DEFAULT_RETURNED_ROWS: the actors one answer lists when no limit is asked. */
export const DEFAULT_FUNNEL_ACTORS_LIMIT = 100;
/** PostHog's MAX_SELECT_RETURNED_ROWS for queries: a larger limit is lowered to it (HogQLHasMorePaginator). */
export const MAX_FUNNEL_ACTORS_LIMIT = 50_000;
/** The most custom steps read; a funnel has at most 20 steps, so more can only repeat them. */
const MAX_CUSTOM_STEPS = 100;
const MAX_SEARCH_LENGTH = 200;

/** Which actors of a funnel are asked for (PostHog's FunnelsActorsQuery, without recordings). */
export interface FunnelActorsRequest {
  /** N > 0: reached step N; N < 0: reached step |N| - 1 but not |N|. */
  funnelStep: number | null;
  /** The actors whose furthest step is one of these (overrides funnelStep). */
  funnelCustomSteps: number[] | null;
  /** A breakdown value's actors only: its values as texts (a cohort breakdown: the cohort id). */
  funnelStepBreakdown: string[] | null;
  funnelTrendsDropOff: boolean;
  funnelTrendsEntrancePeriodStart: string | null;
  /** The attr an error about one of these fields names (the request's own spelling of it). */
  attr: (field: string) => string;
}

/** The columns an ActorsQuery over a funnel may select. */
export const FUNNEL_ACTOR_COLUMNS = ['person', 'actor', 'group', 'id', 'key', 'person.$delete', 'created_at', 'matched_recordings'] as const;
export type FunnelActorColumn = (typeof FUNNEL_ACTOR_COLUMNS)[number];

export interface FunnelActorsPage {
  select: FunnelActorColumn[] | null;
  /**
   * Only actors matching this text (PostHog's PersonStrategy / GroupStrategy search): a person's
   * `email` or `name` property, id or a distinct id; a group's key or `name` property.
   */
  search: string | null;
  limit: number;
  offset: number;
}

/** A person as PostHog's PersonStrategy.get_actors answers it; a group as GroupStrategy's. */
export type FunnelActor =
  | { id: string; properties: Record<string, unknown>; is_identified: boolean; created_at: string; distinct_ids: string[] }
  | {
      id: string;
      type: 'group';
      properties: Record<string, unknown>;
      group_key: string;
      group_type_index: number;
      group_properties: Record<string, unknown>;
      created_at: string;
    }
  | { id: string; group_type_index?: number };

/** PostHog's ActorsQueryResponse. */
export interface FunnelActorsResult {
  results: unknown[][];
  columns: string[];
  types: string[];
  hasMore: boolean;
  limit: number;
  offset: number;
  missing_actors_count: number;
}

const fail = (attr: string, message: string, code = 'invalid'): never => {
  throw new QueryFilterError(attr, message, code);
};

function optionalInt(node: Record<string, unknown>, key: string, attr: string): number | null {
  const value = node[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) fail(attr, `${key} must be an integer.`);
  return value as number;
}

/** A breakdown value (a text, a number or a list of them) as the texts the funnel's `bv` holds. */
function breakdownTexts(value: unknown, attr: string): string[] | null {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 10 || !list.every((v) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) {
    fail(attr, 'funnelStepBreakdown must be a breakdown value: a text, a number or a list of them.');
  }
  return list.map((v) => String(v));
}

/** The actor fields of a FunnelsActorsQuery node (its `source`, the FunnelsQuery, is parsed by the caller). */
export function parseFunnelActorsRequest(node: Record<string, unknown>, attrOf: string | ((field: string) => string) = 'query__source'): FunnelActorsRequest {
  const attr = typeof attrOf === 'string' ? (field: string) => `${attrOf}__${field}` : attrOf;
  const funnelStep = optionalInt(node, 'funnelStep', attr('funnelStep'));
  if (funnelStep === 0) fail(attr('funnelStep'), "Funnel steps are 1-indexed, so step 0 doesn't exist");
  if (funnelStep === -1) fail(attr('funnelStep'), 'The first valid drop-off argument for funnelStep is -2');
  const rawCustom = node['funnelCustomSteps'];
  let funnelCustomSteps: number[] | null = null;
  if (rawCustom !== undefined && rawCustom !== null) {
    if (!Array.isArray(rawCustom) || rawCustom.length > MAX_CUSTOM_STEPS || !rawCustom.every((s) => Number.isSafeInteger(s) && (s as number) > 0)) {
      fail(attr('funnelCustomSteps'), 'funnelCustomSteps must be a list of step numbers (from 1).');
    }
    funnelCustomSteps = (rawCustom as number[]).length > 0 ? (rawCustom as number[]) : null;
  }
  const dropOff = node['funnelTrendsDropOff'];
  if (dropOff !== undefined && dropOff !== null && typeof dropOff !== 'boolean')
    fail(attr('funnelTrendsDropOff'), 'funnelTrendsDropOff must be true or false.');
  const periodStart = node['funnelTrendsEntrancePeriodStart'];
  if (periodStart !== undefined && periodStart !== null && (typeof periodStart !== 'string' || periodStart.length > 64)) {
    fail(attr('funnelTrendsEntrancePeriodStart'), 'funnelTrendsEntrancePeriodStart must be a date-time.');
  }
  // includeRecordings is read as false: recordings are not matched to funnel actors (docs/behaviours.md).
  return {
    funnelStep,
    funnelCustomSteps,
    funnelStepBreakdown: breakdownTexts(node['funnelStepBreakdown'], attr('funnelStepBreakdown')),
    funnelTrendsDropOff: dropOff === true,
    funnelTrendsEntrancePeriodStart: (periodStart as string | null | undefined) ?? null,
    attr,
  };
}

/** An ActorsQuery's `select`, `limit` and `offset` (PostHog's paginator: default 100, at most 50,000, larger lowered). */
export function parseFunnelActorsPage(node: Record<string, unknown>, prefix = 'query__'): FunnelActorsPage {
  const rawSelect = node['select'];
  let select: FunnelActorColumn[] | null = null;
  if (rawSelect !== undefined && rawSelect !== null) {
    if (!Array.isArray(rawSelect) || rawSelect.length > 20) fail(`${prefix}select`, 'select must be a list of columns.');
    for (const column of rawSelect as unknown[]) {
      if (typeof column !== 'string' || !(FUNNEL_ACTOR_COLUMNS as readonly string[]).includes(column)) {
        fail(
          `${prefix}select`,
          `Column ${JSON.stringify(column).slice(0, 60)} is not served for funnel actors (one of: ${FUNNEL_ACTOR_COLUMNS.join(', ')}).`,
          'not_supported',
        );
      }
    }
    select = (rawSelect as FunnelActorColumn[]).length > 0 ? (rawSelect as FunnelActorColumn[]) : null;
  }
  // Narrowing or reordering the actors is not served: refused rather than ignored, so a list is never silently unfiltered.
  for (const key of ['properties', 'fixedProperties', 'orderBy']) {
    const value = node[key];
    const empty = value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
    if (!empty) fail(`${prefix}${key}`, `${key} is not served for funnel actors.`, 'not_supported');
  }
  const rawSearch = node['search'];
  if (rawSearch !== undefined && rawSearch !== null && (typeof rawSearch !== 'string' || rawSearch.length > MAX_SEARCH_LENGTH)) {
    fail(`${prefix}search`, `search must be a text of at most ${MAX_SEARCH_LENGTH} characters.`);
  }
  const search = typeof rawSearch === 'string' && rawSearch.trim() !== '' ? rawSearch.trim() : null;
  const limit = optionalInt(node, 'limit', `${prefix}limit`);
  const offset = optionalInt(node, 'offset', `${prefix}offset`);
  if (limit !== null && limit < 1) fail(`${prefix}limit`, 'limit must be at least 1.');
  if (offset !== null && (offset < 0 || offset > 1e9)) fail(`${prefix}offset`, 'offset must be between 0 and 1000000000.');
  return { select, search, limit: Math.min(limit ?? DEFAULT_FUNNEL_ACTORS_LIMIT, MAX_FUNNEL_ACTORS_LIMIT), offset: offset ?? 0 };
}

/** The legacy parameter behind each FunnelsActorsQuery field. */
const LEGACY_NAMES: Record<string, string> = {
  funnelStep: 'funnel_step',
  funnelCustomSteps: 'funnel_custom_steps',
  funnelStepBreakdown: 'funnel_step_breakdown',
  funnelTrendsDropOff: 'drop_off',
  funnelTrendsEntrancePeriodStart: 'entrance_period_start',
};

/** A legacy query-string value: JSON when it reads as JSON (a list, a quoted text, a number), else the text as is. */
function legacyValue(value: unknown, attr: string): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (text === '') return null;
  try {
    return /^[[{"\d-]/.test(text) ? (JSON.parse(text) as unknown) : value;
  } catch {
    return /^[[{]/.test(text) ? fail(attr, `${attr} is not valid JSON.`, 'parse_error') : value;
  }
}

/**
 * The actors a legacy `persons/funnel/` request asks for (posthog/api/person.py `funnel`):
 * `funnel_step` (or the first of `funnel_custom_steps`), `funnel_step_breakdown`, and for a
 * funnel trend `entrance_period_start` and `drop_off`; `limit` (default 100) and `offset`.
 */
export function parseLegacyFunnelActors(input: Record<string, unknown>): { request: FunnelActorsRequest; page: FunnelActorsPage } {
  const custom = legacyValue(input['funnel_custom_steps'], 'funnel_custom_steps');
  const step = legacyValue(input['funnel_step'], 'funnel_step');
  const breakdown = legacyValue(input['funnel_step_breakdown'], 'funnel_step_breakdown');
  const request = parseFunnelActorsRequest(
    {
      funnelStep: step ?? (Array.isArray(custom) ? custom[0] : null),
      funnelStepBreakdown: breakdown,
      funnelTrendsDropOff: input['drop_off'] === true || input['drop_off'] === 'true',
      funnelTrendsEntrancePeriodStart: input['entrance_period_start'] ?? null,
    },
    (field) => LEGACY_NAMES[field] ?? field,
  );
  const page = parseFunnelActorsPage(
    { limit: legacyValue(input['limit'], 'limit'), offset: legacyValue(input['offset'], 'offset'), search: input['search'] },
    '',
  );
  return { request, page: { ...page, select: ['actor'] } };
}

/** Which level an actor's furthest step must have (PostHog's `_get_funnel_person_step_condition`). */
function stepCondition(filter: ParsedFunnelFilter, request: FunnelActorsRequest): FunnelActorsCondition['levels'] {
  const n = filter.steps.length;
  if (request.funnelCustomSteps) return { in: request.funnelCustomSteps };
  const step = request.funnelStep;
  if (step === null) return fail(request.attr('funnelStep'), 'Missing both funnelStep and funnelCustomSteps.', 'required');
  if (Math.abs(step) > n) return fail(request.attr('funnelStep'), `The funnel has ${n} steps.`);
  return step > 0 ? { atLeast: step } : { in: [-step - 1], dropOffAt: -step };
}

/** The period a funnel trend's actors entered in, as the trend SQL writes it. */
function entrancePeriod(filter: ParsedFunnelFilter, project: QueryProject, request: FunnelActorsRequest): string {
  const text = request.funnelTrendsEntrancePeriodStart;
  if (text === null)
    return fail(request.attr('funnelTrendsEntrancePeriodStart'), 'funnelTrendsEntrancePeriodStart is required for a funnel trend.', 'required');
  const iso = text.includes('T') ? text : text.replace(' ', 'T');
  const at = DateTime.fromISO(iso, { zone: project.timezone, setZone: false }).setZone(project.timezone);
  if (!at.isValid) fail(request.attr('funnelTrendsEntrancePeriodStart'), 'funnelTrendsEntrancePeriodStart must be a date-time.');
  return formatBucketDay(at, filter.interval);
}

/**
 * The actors of a funnel step (or of a funnel trend's entrance period), a page of them ordered by
 * actor id as PostHog's funnel actors query orders them (funnel_persons.py, funnel_trends.py
 * actor_query), read from the same per-actor fold the funnel counts with: every actor a step's
 * count includes is listed by that step's actors and no other.
 */
export async function runFunnelActorsQuery(
  stores: { ch: ClickHouseClient; db: Sql },
  project: QueryProject,
  filter: ParsedFunnelFilter,
  request: FunnelActorsRequest,
  page: FunnelActorsPage,
  nowMs: number,
  ports: QueryPorts,
): Promise<FunnelActorsResult> {
  const groupIndex = filter.aggregation_group_type_index;
  const columns = actorColumns(page, groupIndex);
  const empty = () => actorsOfPage(stores.db, project.id, groupIndex, columns, [], page);
  if (filter.steps.length === 0) return empty();
  const { range, properties } = await funnelRangeAndFilters(project, filter, nowMs, ports);
  const sqlPorts: QuerySqlPorts = { ...ports, teamId: project.id, nowMs };
  const cohortBreakdown = filter.breakdowns.length > 0 && filter.breakdowns[0]!.type === 'cohort';
  // A cohort breakdown's value is the cohort (0: all users): its members only; without a value, the members of any of them.
  let cohortId: number | null = null;
  let anyOfCohorts: number[] = [];
  if (cohortBreakdown) {
    const cohorts = filter.breakdowns.filter((b) => b.property !== 'all').map((b) => Number(b.property));
    if (request.funnelStepBreakdown !== null) {
      const asked = Number(request.funnelStepBreakdown[0]);
      if (asked !== 0 && !cohorts.includes(asked)) return empty();
      cohortId = asked === 0 ? null : asked;
    } else if (cohorts.length === filter.breakdowns.length) {
      anyOfCohorts = cohorts;
    }
  }
  const condition: FunnelActorsCondition = {
    levels: filter.vizType === 'trends' ? null : stepCondition(filter, request),
    breakdownValue: cohortBreakdown || filter.breakdowns.length === 0 ? null : request.funnelStepBreakdown,
    anyOfCohorts,
    period: filter.vizType === 'trends' ? { start: entrancePeriod(filter, project, request), dropOff: request.funnelTrendsDropOff } : null,
    search: page.search,
    limit: page.limit,
    offset: page.offset,
  };
  const input = { filter, properties, range, cohortId };
  const builder = filter.vizType === 'trends' ? new FunnelTrendActorsSqlBuilder(input, sqlPorts) : new FunnelActorsSqlBuilder(input, sqlPorts);
  const found = (await rows<{ actor_id: string }>(stores.ch, builder.actorIdsSql(condition), builder.params.values)).map((r) => r.actor_id);
  return actorsOfPage(stores.db, project.id, groupIndex, columns, found, page);
}

/** The columns answered: those selected, else PostHog's default for persons or groups. */
export function actorColumns(page: FunnelActorsPage, groupIndex: number | null): string[] {
  return page.select ?? (groupIndex !== null ? ['group'] : ['person', 'id', 'person.$delete']);
}

/**
 * The answer for a page of actor ids (`found`: up to `page.limit` + 1, the extra one telling
 * there are more): each actor read from PostgreSQL, in the order found, with the asked columns.
 */
export async function actorsOfPage(
  db: Sql,
  teamId: number,
  groupIndex: number | null,
  columns: string[],
  found: string[],
  page: FunnelActorsPage,
): Promise<FunnelActorsResult> {
  const hasMore = found.length > page.limit;
  const ids = found.slice(0, page.limit);
  const actors = groupIndex !== null ? await groupsByKey(db, teamId, groupIndex, ids) : await personsByUuid(db, teamId, ids);
  const results = ids.map((id) => {
    const actor: FunnelActor = actors.get(id) ?? (groupIndex !== null ? { id, group_type_index: groupIndex } : { id });
    return columns.map((column) => columnValue(column as FunnelActorColumn, id, actor));
  });
  return {
    results,
    columns,
    types: columns.map(columnType),
    hasMore,
    limit: page.limit,
    offset: page.offset,
    missing_actors_count: ids.filter((id) => !actors.has(id)).length,
  };
}

function columnValue(column: FunnelActorColumn, id: string, actor: FunnelActor): unknown {
  switch (column) {
    case 'person':
    case 'actor':
    case 'group':
      return actor;
    case 'id':
    case 'key':
      return id;
    case 'person.$delete':
      return 1;
    case 'created_at':
      return 'created_at' in actor ? actor.created_at : null;
    case 'matched_recordings':
      // Recordings are not matched to funnel actors (docs/behaviours.md).
      return [];
  }
}

function columnType(column: string): string {
  return column === 'person.$delete' ? 'UInt8' : column === 'created_at' ? 'DateTime64(6, UTC)' : column === 'matched_recordings' ? 'Array(Tuple)' : 'String';
}

/**
 * Actors are read from PostgreSQL this many per statement: the embedded PostgreSQL runs one
 * statement at a time for the whole process, so a page of thousands is read in slices that let
 * other requests' statements run in between (as the persons list reads its page).
 */
const ACTORS_PER_READ = 100;

function slices<T>(items: T[]): T[][] {
  return Array.from({ length: Math.ceil(items.length / ACTORS_PER_READ) }, (_, i) => items.slice(i * ACTORS_PER_READ, (i + 1) * ACTORS_PER_READ));
}

/** The project's persons by uuid, as PostHog's PersonStrategy reads them from PostgreSQL. */
async function personsByUuid(db: Sql, teamId: number, uuids: string[]): Promise<Map<string, FunnelActor>> {
  // A funnel_aggregate_by_hogql value that is not a person's uuid names no person (the repository skips it).
  const found = await findPersonsByUuids(db, teamId, uuids);
  return new Map(
    [...found.values()].map((p) => [
      p.uuid,
      { id: p.uuid, properties: p.properties, is_identified: p.isIdentified, created_at: p.createdAt, distinct_ids: p.distinctIds },
    ]),
  );
}

/** The project's groups of one type by key, as PostHog's GroupStrategy answers them. */
async function groupsByKey(db: Sql, teamId: number, groupTypeIndex: number, keys: string[]): Promise<Map<string, FunnelActor>> {
  const out = new Map<string, FunnelActor>();
  if (keys.length === 0) return out;
  const found: { group_key: string; group_properties: Record<string, unknown> | null; created_at: Date | string }[] = [];
  for (const slice of slices(keys)) {
    found.push(
      ...(await db.query<(typeof found)[number]>(
        'SELECT group_key, group_properties, created_at FROM groups WHERE team_id = $1 AND group_type_index = $2 AND group_key = ANY($3::text[])',
        [teamId, groupTypeIndex, slice],
      )),
    );
  }
  for (const g of found) {
    const properties = g.group_properties ?? {};
    out.set(g.group_key, {
      id: g.group_key,
      type: 'group',
      properties,
      group_key: g.group_key,
      group_type_index: groupTypeIndex,
      group_properties: properties,
      created_at: new Date(g.created_at).toISOString(),
    });
  }
  return out;
}

/** Whether a request body is a FunnelsActorsQuery node. */
export function isFunnelsActorsQuery(node: unknown): node is Record<string, unknown> {
  return isJsonObject(node) && node['kind'] === 'FunnelsActorsQuery';
}
