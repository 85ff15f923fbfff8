import { compilePropertyGroup, propertyTextSql, type PropertyGroup } from '@sightline/properties';
import { globalPrefix, SINGLE_SERVER } from '@sightline/clickhouse';
import { actorSearchSql } from './funnel-actors.sql';
import { FunnelSqlBuilder } from './funnel.sql';

export const AUTOCAPTURE_EVENT = '$autocapture';
export const AUTOCAPTURE_EVENT_TYPE = '$event_type';
/** Between an autocapture event's type and its chain in a correlation name (PostHog's ELEMENTS_DIVIDER). */
export const ELEMENTS_DIVIDER = '__~~__';
/** An event property value seen by fewer actors is not correlated (PostHog's `HAVING success + failure > 2`). */
const EVENT_PROPERTY_MIN_ACTORS = 3;
/** Property correlation over every property of the actor (PostHog's `funnelCorrelationNames: ["$all"]`). */
export const ALL_PROPERTIES = '$all';

export interface CorrelationSqlOptions {
  names: string[];
  eventNames: string[];
  excludeEvents: string[];
  excludeNames: string[];
  /** The events the funnel's steps name, its actions' steps included: never correlated. */
  stepEvents: string[];
}

export interface CorrelationActorsSqlRequest {
  converted: boolean | null;
  /** The correlated event and its filters; null for a property correlation (its values filter the funnel itself). */
  event: { event: string; properties: PropertyGroup } | null;
  stepEvents: string[];
  /** Only actors matching this text, as the funnel actors search (actorSearchSql). */
  search: string | null;
  limit: number;
  offset: number;
}

/**
 * The SQL of funnel correlation (PostHog's funnel_correlation_query_runner.py): for each name
 * (an event, `<prop>::<value>` of an actor property, or `<event>::<prop>::<value>` of an event's
 * property), how many converted and how many failed actors have it, and in the row whose name is
 * NULL, how many actors converted and failed in all. The funnel is computed once: each actor's
 * outcome is joined with the names it has, and every actor also counts once under NULL.
 *
 * An event counts for an actor only inside its own time in the funnel, as PostHog's
 * _get_events_join_query bounds it: after the actor's first step, before its last step when it
 * converted and otherwise before the conversion window from its first step ends, and inside
 * the date range. Events the funnel's steps (or its actions' steps) name never count.
 */
export class FunnelCorrelationSqlBuilder extends FunnelSqlBuilder {
  /**
   * Per actor who entered the funnel: whether it converted, and its time in the funnel
   * (`first_t` < an event's time < `until_t`). Times in seconds, as the funnel's `times` are
   * (microseconds / 1e6, so equal instants compare equal). A converted actor's last time is its
   * last step's (with optional steps, its last required step's: `times` leaves the optional ones out).
   */
  private outcomeSql(): string {
    const n = this.input.filter.steps.length;
    const window = this.params.add(this.input.filter.windowSeconds, 'Float64');
    return `SELECT actor, level >= ${n} AS success, times[1] AS first_t, if(level >= ${n}, times[-1], times[1] + ${window}) AS until_t
      FROM (${this.actorsSqlWithoutSources()})`;
  }

  /**
   * A page of the actors behind one correlation row (PostHog's events_actor_query and
   * properties_actor_query): converted ones, failed ones or (`converted` null) both; with an
   * `event`, only those who did it (matching its filters) inside their time in the funnel, as
   * the correlation counts it; with `search`, those matching it. Ordered by actor id; one more than `limit` tells there are more.
   */
  correlationActorsSql(request: CorrelationActorsSqlRequest): string {
    const { range } = this.input;
    const outcome = this.outcomeSql();
    const where: string[] = [];
    if (request.converted !== null) where.push(request.converted ? 'a.success' : 'NOT a.success');
    let join = '';
    if (request.event !== null) {
      const filters = request.event.properties.values.length > 0 ? ` AND ${compilePropertyGroup(request.event.properties, this.compileContext())}` : '';
      const inSpan = `e.team_id = ${this.team} AND e.timestamp >= ${this.dateTime(range.from.toMillis())} AND e.timestamp <= ${this.dateTime(range.to.toMillis())}`;
      const target = `e.event = ${this.params.add(request.event.event, 'String')} AND NOT has(${this.params.add(request.stepEvents, 'Array(String)')}, e.event)`;
      join = `INNER JOIN (SELECT ${this.actorSql()} AS actor, groupArray(toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1000000) AS ts
        {FROM}
        WHERE ${inSpan} AND ${target}${filters}
        GROUP BY actor) AS x ON x.actor = a.actor`;
      where.push('arrayExists(t -> t > a.first_t AND t < a.until_t, x.ts)');
    }
    const search =
      request.search === null
        ? ''
        : `WHERE ${actorSearchSql(this.input.filter, this.params, this.team, this.params.add(`%${request.search}%`, 'String'), globalPrefix(this.ports.layout ?? SINGLE_SERVER))}`;
    const sql = `SELECT toString(actor) AS actor_id FROM (
        SELECT a.actor AS actor FROM (${outcome}) AS a ${join}
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''})
      ${search}
      GROUP BY actor ORDER BY actor LIMIT ${this.params.add(request.limit + 1, 'UInt64')} OFFSET ${this.params.add(request.offset, 'UInt64')}`;
    return sql.split('{FROM}').join(this.fromSql(sql, { fromMs: range.from.toMillis(), toMs: range.to.toMillis() }));
  }

  correlationSql(kind: 'events' | 'properties' | 'event_with_properties', options: CorrelationSqlOptions): string {
    const { range } = this.input;
    const outcome = this.outcomeSql();
    const fromMs = range.from.toMillis();
    const toMs = range.to.toMillis();
    if (kind === 'properties') {
      const sql = this.count(outcome, this.actorPropertyNamesSql(options), { windowed: false, minActors: 0 });
      return sql.split('{FROM}').join(this.fromSql(sql, { fromMs, toMs }));
    }
    const inSpan = `e.team_id = ${this.team} AND e.timestamp >= ${this.dateTime(fromMs)} AND e.timestamp <= ${this.dateTime(toMs)}`;
    const steps = this.params.add(options.stepEvents, 'Array(String)');
    const eventTime = 'toFloat64(toUnixTimestamp64Micro(e.timestamp)) / 1000000';
    const names =
      kind === 'event_with_properties'
        ? this.eventPropertyNamesSql(`${inSpan} AND NOT has(${steps}, e.event)`, eventTime, options)
        : `SELECT ${this.actorSql()} AS actor, groupArray((${eventTime}, e.event)) AS tn
        {FROM}
        WHERE ${inSpan} AND NOT has(${steps}, e.event) AND NOT has(${this.params.add(options.excludeEvents, 'Array(String)')}, e.event)
        GROUP BY actor`;
    const minActors = kind === 'event_with_properties' ? EVENT_PROPERTY_MIN_ACTORS : 0;
    const sql = this.count(outcome, names, { windowed: true, minActors });
    return sql.split('{FROM}').join(this.fromSql(sql, { fromMs, toMs }));
  }

  /**
   * Success and failure counts per name. `namesOfActors` gives per actor `names` (or, when
   * `windowed`, `tn`: (time, name) pairs kept only inside the actor's time in the funnel);
   * names seen by fewer than `minActors` actors are not answered (the totals row always is).
   */
  private count(outcome: string, namesOfActors: string, options: { windowed: boolean; minActors: number }): string {
    const names = options.windowed ? 'arrayDistinct(arrayMap(x -> x.2, arrayFilter(x -> x.1 > a.first_t AND x.1 < a.until_t, x.tn)))' : 'x.names';
    return `SELECT name, countIf(success) AS s, countIf(NOT success) AS f
      FROM (SELECT a.success AS success, ${names} AS names FROM (${outcome}) AS a LEFT JOIN (${namesOfActors}) AS x ON x.actor = a.actor)
      ARRAY JOIN arrayPushBack(arrayMap(v -> toNullable(v), names), NULL) AS name
      GROUP BY name${options.minActors > 0 ? `\n      HAVING name IS NULL OR s + f >= ${options.minActors}` : ''}`;
  }

  /**
   * Per actor, `<prop>::<value>` of its latest properties (a person's, or the aggregated group's):
   * each named property (missing ones with an empty value), or with `$all` every property the
   * actor has, values read as ClickHouse's JSON string extraction reads them.
   */
  private actorPropertyNamesSql(options: CorrelationSqlOptions): string {
    const groupIndex = this.input.filter.aggregation_group_type_index;
    const excluded = this.params.add(options.excludeNames, 'Array(String)');
    const pairs = options.names.includes(ALL_PROPERTIES)
      ? `JSONExtractKeysAndValues(props, 'String')`
      : `arrayMap(key -> (key, JSONExtractString(props, key)), ${this.params.add(options.names, 'Array(String)')})`;
    const source =
      groupIndex === null
        ? `SELECT id AS actor, argMax(properties, version) AS props FROM person WHERE team_id = ${this.team} GROUP BY id HAVING argMax(is_deleted, version) = 0`
        : `SELECT group_key AS actor, argMax(group_properties, version) AS props FROM groups
           WHERE team_id = ${this.team} AND group_type_index = ${this.params.add(groupIndex, 'UInt8')} GROUP BY group_key`;
    return `SELECT actor, arrayMap(kv -> concat(kv.1, '::', kv.2), arrayFilter(kv -> NOT has(${excluded}, kv.1), ${pairs})) AS names FROM (${source})`;
  }

  /**
   * Per actor, the (time, `event::property::value`) of the correlated events, as PostHog's
   * get_event_property_query builds them: every property (values as ClickHouse's
   * JSONExtractKeysAndValues reads them as strings) but the excluded names. When
   * `$autocapture` is among the events, each event instead yields one name,
   * `event::elements_chain::<$event_type>__~~__<elements_chain>`.
   */
  private eventPropertyNamesSql(where: string, eventTime: string, options: CorrelationSqlOptions): string {
    const wanted = `has(${this.params.add(options.eventNames, 'Array(String)')}, e.event)`;
    const excluded = this.params.add(options.excludeNames, 'Array(String)');
    if (options.eventNames.includes(AUTOCAPTURE_EVENT)) {
      const eventType = propertyTextSql('e.properties', this.params.add(AUTOCAPTURE_EVENT_TYPE, 'String'));
      // PostHog filters its excluded names on the property key, which is always elements_chain here.
      return `SELECT ${this.actorSql()} AS actor,
          groupArray((${eventTime}, concat(e.event, '::elements_chain::', ${eventType}, '${ELEMENTS_DIVIDER}', e.elements_chain))) AS tn
        {FROM}
        WHERE ${where} AND ${wanted} AND NOT has(${excluded}, 'elements_chain')
        GROUP BY actor`;
    }
    return `SELECT ${this.actorSql()} AS actor, groupArray((${eventTime}, concat(e.event, '::', kv.1, '::', kv.2))) AS tn
        {FROM}
        ARRAY JOIN JSONExtractKeysAndValues(e.properties, 'String') AS kv
        WHERE ${where} AND ${wanted} AND NOT has(${excluded}, kv.1)
        GROUP BY actor`;
  }
}
