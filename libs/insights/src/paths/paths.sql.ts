import { compilePropertyGroup, type PropertyGroup } from '@sightline/properties';
import type { QueryDateRange } from '../common/date-range';
import { EventsSql, PERSON_ID } from '../common/events-sql';
import type { QuerySqlPorts } from '../common/query-ports';
import type { ParsedPathsFilter, PathsActorsKeys, PathType } from './paths-filter';

/** PostHog's SESSION_TIME_THRESHOLD_DEFAULT_SECONDS: a gap this long or longer starts a new path. */
export const SESSION_GAP_SECONDS = 30 * 60;

/** The characters Python's re.escape escapes (PostHog escapes a path grouping with it before `*` becomes `.*`). */
const PYTHON_RE_SPECIALS = new Set('()[]{}?*+-|^$\\.&~# \t\n\r\v\f');

/** A path grouping as the pattern PostHog matches (paths_query_runner.py): the text literal, each `*` any run of characters. */
export function groupingPattern(grouping: string): string {
  const escaped = [...grouping].map((c) => (PYTHON_RE_SPECIALS.has(c) ? `\\${c}` : c)).join('');
  return escaped.split('\\*').join('.*');
}

export interface PathsSqlInput {
  filter: ParsedPathsFilter;
  /** The query's property filters with the project's test-account filters when asked. */
  properties: PropertyGroup;
  range: QueryDateRange;
}

/**
 * The SQL of a paths query, PostHog's PathsQueryRunner (posthog/hogql_queries/insights/paths_query_runner.py)
 * step for step: each event of the range becomes a path item (URL, screen, event name or HogQL,
 * cleaned, grouped); a person's items in time order are cut into sessions at 30-minute gaps; a
 * session's repeats are collapsed, cut at the start / end point and to the step limit; each item
 * is keyed by its position (`2_/pricing`) and an edge joins it to the item before.
 */
export class PathsSqlBuilder extends EventsSql {
  constructor(
    private readonly input: PathsSqlInput,
    ports: QuerySqlPorts,
  ) {
    super(
      {
        teamId: ports.teamId,
        nowMs: ports.nowMs,
        timezone: input.range.timezone,
        interval: 'day',
        weekStartDay: 0,
        breakdowns: [],
        aggregationGroupTypeIndex: null,
      },
      ports,
    );
  }

  private text(value: string): string {
    return this.params.add(value, 'String');
  }

  /** PostHog's _should_query_event: without included types, every type but the excluded ones. */
  private shouldQuery(type: PathType | '$pageview' | '$screen'): boolean {
    const { includeEventTypes, excludeEvents } = this.input.filter;
    return includeEventTypes.length === 0 ? !excludeEvents.includes(type) : (includeEventTypes as string[]).includes(type);
  }

  /** The item an event stands for before cleaning: its URL (a trailing slash dropped), its screen, its name or the HogQL expression. */
  private ungroupedItemSql(): string {
    const { pathsHogQLExpression } = this.input.filter;
    let item = 'e.event';
    if (this.shouldQuery('hogql') && pathsHogQLExpression) {
      item = `toString(${this.ports.hogql(pathsHogQLExpression, this.params, { allowAggregations: false })})`;
    }
    if (this.shouldQuery('$pageview')) {
      const url = this.jsonValue('e.properties', this.text('$current_url'));
      item = `if(e.event = '$pageview', replaceRegexpAll(${url}, '(.)/$', '\\\\1'), ${item})`;
    }
    if (this.shouldQuery('$screen')) item = `if(e.event = '$screen', ${this.jsonValue('e.properties', this.text('$screen_name'))}, ${item})`;
    return `ifNull(${item}, '')`;
  }

  /**
   * The item after the cleaning rules (in order) and the groupings, as `path_item_cleaned` and
   * `path_item` select expressions.
   */
  private pathItemSelects(): string {
    const { localPathCleaningFilters, pathGroupings } = this.input.filter;
    let item = this.ungroupedItemSql();
    for (const rule of localPathCleaningFilters) item = `replaceRegexpAll(${item}, ${this.text(rule.regex)}, ${this.text(rule.alias)})`;
    if (pathGroupings.length === 0) return `${item} AS path_item`;
    // multiMatchAnyIndex (Hyperscan), as PostHog's: the grouping whose match ends first names the item.
    const patterns = this.params.add(pathGroupings.map(groupingPattern), 'Array(String)');
    const names = this.params.add(pathGroupings, 'Array(String)');
    return `${item} AS path_item_cleaned, multiMatchAnyIndex(path_item_cleaned, ${patterns}) AS group_index,
        if(group_index > 0, ${names}[group_index], path_item_cleaned) AS path_item`;
  }

  /** PostHog's _get_event_query: only when types are included, those types, then the excluded items left out. */
  private eventTypeConditions(): string[] {
    const { includeEventTypes, excludeEvents } = this.input.filter;
    if (includeEventTypes.length === 0) return [];
    const types: string[] = [];
    if (includeEventTypes.includes('$pageview')) types.push(`e.event = '$pageview'`);
    if (includeEventTypes.includes('$screen')) types.push(`e.event = '$screen'`);
    if (includeEventTypes.includes('custom_event')) types.push(`NOT startsWith(e.event, '$')`);
    const out = types.length ? [`(${types.join(' OR ')})`] : [];
    if (excludeEvents.length) out.push(`path_item NOT IN ${this.params.add(excludeEvents, 'Array(String)')}`);
    return out;
  }

  /** One row per event of the range: its person, time (seconds) and path item. */
  private eventsSql(): string {
    const { range, properties } = this.input;
    const where = [
      `e.team_id = ${this.team}`,
      `e.timestamp >= ${this.dateTime(range.from.toMillis())}`,
      `e.timestamp <= ${this.dateTime(range.to.toMillis())}`,
      compilePropertyGroup(properties, this.compileContext()),
      // Paths follow persons: a deleted person's events count for no one.
      this.actorPresentSql(),
      ...this.eventTypeConditions(),
    ].filter((w) => w !== '1');
    const sql = `SELECT ${PERSON_ID} AS person_id, toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1e6 AS t, ${this.pathItemSelects()}
      {FROM}
      WHERE ${where.join('\n        AND ')}`;
    return sql.replace('{FROM}', this.fromSql(sql, { fromMs: range.from.toMillis(), toMs: range.to.toMillis() }));
  }

  /** The start and end of a path PostHog matches: the target drops one trailing slash; both together match as given. */
  private targetSelects(): { selects: string[]; where: string | null } {
    const { startPoint, endPoint, stepLimit } = this.input.filter;
    const limit = String(stepLimit);
    let target = endPoint ?? startPoint;
    if (target !== null && target.length > 1 && target.endsWith('/')) target = target.slice(0, -1);
    if (startPoint && endPoint) {
      const start = this.text(startPoint);
      const end = this.text(endPoint);
      const half = String(Math.floor(stepLimit / 2));
      // A path longer than the step limit keeps its first and last halves around '...'; its timing there is the middle item's.
      const shorten = (field: string, middle: string) =>
        `if(length(${field}) > ${limit}, arrayConcat(arraySlice(${field}, 1, ${half}), [${middle}], arraySlice(${field}, -${half}, ${half})), ${field})`;
      return {
        selects: [
          `indexOf(compact_path, ${start}) AS start_target_index`,
          `if(start_target_index > 0, arraySlice(compact_path, start_target_index), compact_path) AS start_filtered_path`,
          `indexOf(start_filtered_path, ${end}) AS end_target_index`,
          `if(end_target_index > 0, arrayResize(start_filtered_path, end_target_index), start_filtered_path) AS filtered_path`,
          `${shorten('filtered_path', "'...'")} AS limited_path`,
          `if(start_target_index > 0, arraySlice(timings, start_target_index), timings) AS start_filtered_timings`,
          `if(end_target_index > 0, arrayResize(start_filtered_timings, end_target_index), start_filtered_timings) AS filtered_timings`,
          `${shorten('filtered_timings', `filtered_timings[${Number(half) + 1}]`)} AS limited_timings`,
        ],
        where: 'start_target_index > 0 AND end_target_index > 0',
      };
    }
    const cut = endPoint ? 'arrayResize' : 'arraySlice';
    const keep = (field: string) => (endPoint ? `arraySlice(${field}, -${limit})` : `arraySlice(${field}, 1, ${limit})`);
    return {
      selects: [
        // No start or end point: no target (PostHog's indexOf of NULL), not the first empty item.
        `${target === null ? '0' : `indexOf(compact_path, ${this.text(target)})`} AS target_index`,
        `if(target_index > 0, ${cut}(compact_path, target_index), compact_path) AS filtered_path`,
        `${keep('filtered_path')} AS limited_path`,
        `if(target_index > 0, ${cut}(timings, target_index), timings) AS filtered_timings`,
        `${keep('filtered_timings')} AS limited_timings`,
      ],
      where: target !== null ? 'target_index > 0' : null,
    };
  }

  /**
   * One row per step of every person's session paths: `person_id`, `path_key` (`3_/about`),
   * `last_path_key` (the step before, NULL for the first), `conversion_time` (seconds since the
   * step before) and `path_dropoff_key` (the session path's last step).
   */
  perPersonStepsSql(): string {
    const target = this.targetSelects();
    return `SELECT person_id,
        concat(toString(event_in_session_index), '_', step.1) AS path_key,
        if(event_in_session_index > 1, concat(toString(event_in_session_index - 1), '_', step.3), NULL) AS last_path_key,
        step.2 AS conversion_time,
        path_dropoff_key
      FROM (
        SELECT person_id,
          arrayMap(x -> x.2, session) AS path_basic,
          arrayMap(x -> x.1, session) AS time,
          arrayMap((x, y) -> if(x = y, 0, 1), path_basic, arrayPopFront(arrayPushBack(path_basic, ''))) AS mapping,
          arrayFilter((x, y) -> y, time, mapping) AS timings,
          arrayFilter((x, y) -> y, path_basic, mapping) AS compact_path,
          ${target.selects.join(',\n          ')},
          arrayDifference(limited_timings) AS timings_diff,
          concat(toString(length(limited_path)), '_', limited_path[-1]) AS path_dropoff_key,
          arrayZip(limited_path, timings_diff, arrayPopBack(arrayPushFront(limited_path, ''))) AS limited_path_timings
        FROM (
          SELECT person_id, arraySort(groupArray((t, path_item))) AS items
          FROM (${this.eventsSql()})
          GROUP BY person_id
        )
        ARRAY JOIN arraySplit((x, gap) -> gap >= ${SESSION_GAP_SECONDS}, items, arrayDifference(arrayMap(x -> x.1, items))) AS session
        ${target.where ? `WHERE ${target.where}` : ''}
      )
      ARRAY JOIN limited_path_timings AS step, arrayEnumerate(limited_path_timings) AS event_in_session_index`;
  }

  /** The edges: from the step before to each step, how many steps took it and their mean time; by weight, then keys. */
  edgesSql(): string {
    const { minEdgeWeight, maxEdgeWeight, edgeLimit } = this.input.filter;
    const having = [
      ...(minEdgeWeight ? [`value >= ${this.params.add(minEdgeWeight, 'UInt64')}`] : []),
      ...(maxEdgeWeight ? [`value <= ${this.params.add(maxEdgeWeight, 'UInt64')}`] : []),
    ];
    return `SELECT last_path_key AS source, path_key AS target, count() AS value, avg(conversion_time) AS average_conversion_time
      FROM (${this.perPersonStepsSql()})
      WHERE source IS NOT NULL
      GROUP BY source, target
      ${having.length ? `HAVING ${having.join(' AND ')}` : ''}
      ORDER BY value DESC, source, target
      LIMIT ${this.params.add(edgeLimit, 'UInt64')}`;
  }

  /**
   * The persons on an edge (PostHog's to_actors_query): those whose step was `pathEndKey` after
   * `pathStartKey`, or whose session path ended at `pathDropoffKey`; a page of them by id.
   */
  actorIdsSql(keys: PathsActorsKeys, page: { limit: number; offset: number }): string {
    const conditions: string[] = [];
    if (keys.pathDropoffKey !== null) {
      conditions.push(`path_dropoff_key = ${this.text(keys.pathDropoffKey)} AND path_dropoff_key = path_key`);
    } else {
      if (keys.pathStartKey !== null) conditions.push(`last_path_key = ${this.text(keys.pathStartKey)}`);
      if (keys.pathEndKey !== null) conditions.push(`path_key = ${this.text(keys.pathEndKey)}`);
    }
    return `SELECT toString(person_id) AS actor_id
      FROM (${this.perPersonStepsSql()})
      ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
      GROUP BY person_id
      ORDER BY actor_id
      LIMIT ${this.params.add(page.limit + 1, 'UInt64')} OFFSET ${this.params.add(page.offset, 'UInt64')}`;
  }
}
