import { EVENTS_TABLE, globalPrefix, SINGLE_SERVER, type ClickHouseLayout } from '@sightline/clickhouse';
import { propertyRawSql, propertyTextSql, QueryParams, type CompileContext, type PropertyFilter } from '@sightline/properties';
import type { Interval } from './date-range';
import { ChannelTypeSql, VIRTUAL_PERSON_PROPERTIES } from './channel-type';

/** PostHog's breakdown sentinels (posthog/hogql_queries/insights/trends/breakdown.py). */
export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$';
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$';

/** A query the input describes but that cannot be built (a 400 naming `attr`). */
export class QueryInputError extends Error {
  constructor(
    readonly attr: string | null,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}

/**
 * What an events query needs from outside the query library: compilers for the things other
 * modules own (actions, cohorts, HogQL). Each is a port so the SQL stays testable.
 */
export interface EventsSqlPorts {
  /** SQL boolean over the events row `e` for "this event matches action `id`". */
  actionMatch(actionId: number, ctx: CompileContext): string;
  /** SQL boolean for "the person `personIdSql` is in cohort `id`". */
  cohortMembership(cohortId: number, personIdSql: string, params: QueryParams): string;
  /** A HogQL expression over the events row as SQL (aggregations allowed when asked). */
  hogql(expression: string, params: QueryParams, options: { allowAggregations: boolean }): string;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  layout?: ClickHouseLayout;
}

/**
 * A distinct id's current person, the one resolution every query uses (docs/data-model.md#persons-in-queries):
 * merges re-point distinct ids, so events written before a merge count for the merged person; a
 * distinct id with no copy yet keeps the person id the event was written with. A deleted person's
 * distinct ids carry `pdi.is_deleted = 1`: queries that count actors leave those events out
 * (actorPresentSql), so they count for no person.
 */
export const PERSON_ID = 'if(empty(pdi.distinct_id), e.person_id, pdi.person_id)';
export const SESSION_ID = "JSONExtractString(e.properties, '$session_id')";

/** Properties a session filter or breakdown can name, computed from the session's events. */
const SESSION_PROPERTIES_SQL = `concat('{"$session_duration":', toString(dateDiff('second', min(timestamp), max(timestamp))),
  ',"$start_timestamp":', toJSONString(toString(min(timestamp))),
  ',"$end_timestamp":', toJSONString(toString(max(timestamp))),
  ',"$entry_current_url":', toJSONString(argMin(JSONExtractString(properties, '$current_url'), timestamp)),
  ',"$entry_pathname":', toJSONString(argMin(JSONExtractString(properties, '$pathname'), timestamp)),
  ',"$end_current_url":', toJSONString(argMax(JSONExtractString(properties, '$current_url'), timestamp)),
  ',"$end_pathname":', toJSONString(argMax(JSONExtractString(properties, '$pathname'), timestamp)),
  ',"$pageview_count":', toString(countIf(event = '$pageview')),
  ',"$autocapture_count":', toString(countIf(event = '$autocapture')),
  ',"$is_bounce":', if(countIf(event = '$pageview') <= 1 AND dateDiff('second', min(timestamp), max(timestamp)) < 10, 'true', 'false')`;

/**
 * The session's entry (first event) properties PostHog's sessions table keeps for attribution,
 * by the `$initial_…` person property each stands for in the channel type rules.
 */
const SESSION_ENTRY_PROPERTIES: Record<string, [session: string, event: string]> = {
  $initial_utm_source: ['$entry_utm_source', 'utm_source'],
  $initial_utm_medium: ['$entry_utm_medium', 'utm_medium'],
  $initial_utm_campaign: ['$entry_utm_campaign', 'utm_campaign'],
  $initial_referring_domain: ['$entry_referring_domain', '$referring_domain'],
  $initial_gclid: ['$entry_gclid', 'gclid'],
  $initial_fbclid: ['$entry_fbclid', 'fbclid'],
  $initial_gad_source: ['$entry_gad_source', 'gad_source'],
};

/**
 * How far either side of the range a session's events are read: PostHog's SESSION_BUFFER_DAYS
 * (posthog/hogql/database/schema/util/where_clause_extractor.py), the window its sessions table
 * is read over around an events query.
 */
const SESSION_BUFFER_SECONDS = 3 * 86_400;

/**
 * A session's duration in seconds, from its first to its last event (PostHog's sessions table's
 * `$session_duration`); `s.session_duration` in the joined sessions, 0 for an event without one.
 */
export const SESSION_DURATION = 's.session_duration';

/** One breakdown as queries read it (trends and funnels). */
export interface BreakdownInput {
  type: string;
  /** Property key, HogQL expression, or for cohorts a cohort id / "all". */
  property: string | number;
  group_type_index: number | null;
  histogram_bin_count: number | null;
  normalize_url: boolean;
}

/**
 * A numeric breakdown's bins, PostHog's (trends_query_builder.py, `_inner_breakdown_subquery`):
 * `histogram_bin_count` equal widths from the smallest to the largest value, each holding
 * lower ≤ value < upper, the last one's upper edge 0.01 past the largest value. Empty when no
 * event has a numeric value.
 */
export interface HistogramBins {
  lower: number[];
  upper: number[];
}

/** The bins over [min, max], computed as PostHog's query computes them (the same floating-point steps). */
export function histogramBins(min: number | null, max: number | null, count: number): HistogramBins {
  if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return { lower: [], upper: [] };
  const diff = max - min;
  const lower: number[] = [];
  const upper: number[] = [];
  for (let x = 0; x < count; x++) {
    lower.push((diff / count) * x + min);
    upper.push((diff / count) * (x + 1) + min + (x + 1 === count ? 0.01 : 0));
  }
  return { lower, upper };
}

/** What every events query shares: the project, its clock and timezone, breakdowns, the actor. */
export interface EventsSqlScope {
  teamId: number;
  nowMs: number;
  timezone: string;
  interval: Interval;
  weekStartDay: 0 | 1;
  breakdowns: BreakdownInput[];
  /** Histogram bins per breakdown (when histogram_bin_count is set), computed from a first query. */
  histogramBins?: (HistogramBins | null)[];
  /** Count groups of this type instead of persons. */
  aggregationGroupTypeIndex: number | null;
}

/**
 * The pieces of SQL over the events table (`e`) that trends and funnels share: property filters
 * through the one compiler, merged persons resolved through person_distinct_id2, session
 * properties, buckets in the project's timezone and breakdown values with PostHog's sentinels.
 * Every value goes into `params`.
 */
export class EventsSql {
  readonly params = new QueryParams();
  protected readonly team: string;
  protected readonly tz: string;

  constructor(
    protected readonly scope: EventsSqlScope,
    protected readonly ports: EventsSqlPorts,
  ) {
    this.team = this.params.add(scope.teamId, 'Int64');
    this.tz = this.params.add(scope.timezone, 'String');
  }

  protected compileContext(): CompileContext {
    return {
      params: this.params,
      nowMs: this.scope.nowMs,
      propertiesColumn: (filter: PropertyFilter) => {
        switch (filter.type ?? 'event') {
          case 'event':
            return 'e.properties';
          case 'person':
            return 'e.person_properties';
          case 'group':
            return `e.group${Number(filter.group_type_index)}_properties`;
          case 'session':
            this.sessionKeys.add(filter.key);
            return 's.session_properties';
          default:
            return null;
        }
      },
      cohortMembership: (cohortId: number) => this.ports.cohortMembership(cohortId, PERSON_ID, this.params),
      computedProperty: (filter: PropertyFilter) => (filter.type === 'person' ? this.virtualPersonPropertySql(filter.key) : null),
      elementsChainColumn: 'e.elements_chain',
      hogqlFilter: (expression: string) => this.ports.hogql(expression, this.params, { allowAggregations: false }),
    };
  }

  private channelTypes: ChannelTypeSql | null = null;
  /** The session properties the query's filters and breakdowns name. */
  private readonly sessionKeys = new Set<string>();

  /** A virtual person property (`$virt_initial_channel_type`, …) from the event's person properties; null for others. */
  protected virtualPersonPropertySql(key: string): string | null {
    if (!VIRTUAL_PERSON_PROPERTIES.has(key)) return null;
    this.channelTypes ??= new ChannelTypeSql(this.params);
    return this.channelTypes.personPropertyFrom('e.person_properties', key);
  }

  /**
   * The bucket a timestamp falls in (project timezone), typed so ClickHouse groups by a number
   * and writes it as `days[i]` does: a Date (`YYYY-MM-DD`) for day, week and month, a DateTime
   * (`YYYY-MM-DD HH:MM:SS`) for hour and minute.
   */
  protected bucketSql(timestamp: string): string {
    const { interval, weekStartDay } = this.scope;
    const tz = this.tz;
    switch (interval) {
      case 'minute':
        return `toStartOfMinute(${timestamp}, ${tz})`;
      case 'hour':
        return `toStartOfHour(${timestamp}, ${tz})`;
      case 'day':
        return `toDate(${timestamp}, ${tz})`;
      case 'week':
        // Mode 0: weeks start on Sunday; mode 1: on Monday (the project's week_start_day).
        return `toStartOfWeek(${timestamp}, ${weekStartDay === 1 ? 1 : 0}, ${tz})`;
      case 'month':
        return `toStartOfMonth(${timestamp}, ${tz})`;
    }
  }

  /**
   * The condition for an event to have an actor: a group key of the aggregated type, or a current
   * (not deleted) person. Queries that count actors apply it.
   */
  protected actorPresentSql(): string {
    // A flag beside the person id rather than a NULL id: a Nullable key makes every grouping by person slower.
    return this.scope.aggregationGroupTypeIndex === null ? 'pdi.is_deleted = 0' : `${this.actorSql()} != ''`;
  }

  protected actorSql(): string {
    const index = this.scope.aggregationGroupTypeIndex;
    return index === null ? PERSON_ID : `JSONExtractString(e.properties, ${this.params.add(`$group_${index}`, 'String')})`;
  }

  /** A breakdown's raw value as text ('' when missing), before ranking. */
  protected breakdownValueSql(breakdown: BreakdownInput, index: number): string {
    const key = () => this.params.add(String(breakdown.property), 'String');
    let value: string;
    switch (breakdown.type) {
      case 'event':
        value = this.jsonValue('e.properties', key());
        break;
      case 'person': {
        const virtual = this.virtualPersonPropertySql(String(breakdown.property));
        value = virtual === null ? this.jsonValue('e.person_properties', key()) : `ifNull(${virtual}, '')`;
        break;
      }
      case 'group':
        value = this.jsonValue(`e.group${Number(breakdown.group_type_index)}_properties`, key());
        break;
      case 'session':
        this.sessionKeys.add(String(breakdown.property));
        value = this.jsonValue('s.session_properties', key());
        break;
      case 'hogql':
        value = `ifNull(toString(${this.ports.hogql(String(breakdown.property), this.params, { allowAggregations: false })}), '')`;
        break;
      case 'event_metadata': {
        const columns: Record<string, string> = {
          event: 'e.event',
          distinct_id: 'e.distinct_id',
          person_id: `if(pdi.is_deleted = 1, '', toString(${PERSON_ID}))`,
          timestamp: `toString(e.timestamp)`,
        };
        const column = columns[String(breakdown.property)];
        if (!column)
          throw new QueryInputError(
            'breakdown',
            `Unknown event_metadata breakdown "${String(breakdown.property).slice(0, 100)}" (one of: ${Object.keys(columns).join(', ')}).`,
            'invalid_choice',
          );
        value = column;
        break;
      }
      default:
        throw new QueryInputError('breakdown_type', `Breakdown type "${breakdown.type}" cannot be combined this way.`, 'invalid_choice');
    }
    if (breakdown.normalize_url) {
      // PostHog's breakdown_normalize_url: drop the query string, the fragment and a trailing slash.
      value = `if(empty(${value}), '', if(empty(replaceRegexpOne(replaceRegexpOne(${value}, '[?#].*$', ''), '/+$', '')), '/', replaceRegexpOne(replaceRegexpOne(${value}, '[?#].*$', ''), '/+$', '')))`;
    }
    const bins = this.scope.histogramBins?.[index];
    if (bins) {
      const lower = this.params.add(bins.lower, 'Array(Float64)');
      const upper = this.params.add(bins.upper, 'Array(Float64)');
      // A value that is not a number is NaN here, in no bin: it breaks down as "none".
      const number = `ifNull(toFloat64OrNull(${value}), nan)`;
      const bin = `arrayFirstIndex((lo, hi) -> lo <= ${number} AND ${number} < hi, ${lower}, ${upper})`;
      // The label is the bin as ClickHouse prints an array of floats ("[10,15.01]"), as PostHog's is.
      value = `if(${bin} = 0, '', toString([${lower}[${bin}], ${upper}[${bin}]]))`;
    }
    return value;
  }

  /** The property as text, '' when missing or a JSON null. */
  protected jsonValue(column: string, key: string): string {
    const text = `JSONExtractString(${column}, ${key})`;
    const raw = propertyRawSql(column, key);
    // Most values are strings: one parse. Others (and "") are read raw, only for those rows.
    return `multiIf(${text} != '', ${text}, ${raw} IN ('', 'null') OR startsWith(${raw}, '"'), '', ${raw})`;
  }

  /** The "other" sentinel in the breakdown value's shape (one text, or one per breakdown). */
  protected otherValueSql(raw: string): string {
    const other = this.params.add(BREAKDOWN_OTHER, 'String');
    return this.scope.breakdowns.length > 1 ? `arrayResize([${other}], length(${raw}), ${other})` : other;
  }

  protected rawBreakdown: string | null | undefined;
  /**
   * The breakdown value with empties as the null sentinel: a text for one breakdown (a cheaper
   * grouping key), an array for several.
   */
  protected rawBreakdownArraySql(): string | null {
    if (this.rawBreakdown !== undefined) return this.rawBreakdown;
    const breakdowns = this.scope.breakdowns.filter((b) => b.type !== 'cohort');
    if (breakdowns.length === 0) return (this.rawBreakdown = null);
    const nullSentinel = this.params.add(BREAKDOWN_NULL, 'String');
    const items = breakdowns.map((b, i) => {
      const raw = this.breakdownValueSql(b, i);
      return `if(empty(${raw}), ${nullSentinel}, ${raw})`;
    });
    return (this.rawBreakdown = items.length === 1 ? items[0]! : `[${items.join(', ')}]`);
  }

  /** An instant as a bound DateTime64; an end of period (…:59.999) reaches to …:59.999999. */
  protected dateTime(ms: number): string {
    const text = new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
    return this.params.add(ms % 1000 === 999 || ms % 1000 === -1 ? `${text}999` : text, "DateTime64(6, 'UTC')");
  }

  /**
   * The rest of the session properties' JSON: the entry event's utm tags, click ids and referring
   * domain, and the session's `$channel_type` from them by PostHog's default channel rules (as
   * its sessions table derives it, posthog/hogql/database/schema/sessions_v2.py).
   */
  private sessionAttributionSql(): string {
    // Only when the query names one of them: the channel rules make a large expression.
    const names = new Set([...Object.values(SESSION_ENTRY_PROPERTIES).map(([name]) => name), '$channel_type']);
    if (![...this.sessionKeys].some((key) => names.has(key))) return '';
    const entries = new Map<string, string>();
    // Each entry property read once, so the channel rules reuse the same expressions.
    const entry = (eventKey: string) => {
      let sql = entries.get(eventKey);
      if (!sql) entries.set(eventKey, (sql = `nullIf(argMin(${propertyTextSql('properties', this.params.add(eventKey, 'String'))}, timestamp), '')`));
      return sql;
    };
    // A NULL would make the whole concat NULL: a missing value is JSON null.
    const json = (sql: string) => `ifNull(toJSONString(${sql}), 'null')`;
    const parts = Object.values(SESSION_ENTRY_PROPERTIES).map(([name, eventKey]) => `',"${name}":', ${json(entry(eventKey))}`);
    this.channelTypes ??= new ChannelTypeSql(this.params);
    const channel = this.channelTypes.initialChannelType((key) => entry(SESSION_ENTRY_PROPERTIES[key]![1]));
    return `${[...parts, `',"$channel_type":', ${json(channel)}`].join(', ')}, `;
  }

  /** FROM with the joins the rest of the SQL uses (decided from the SQL text itself). */
  protected fromSql(sqlUsingSources: string, sessionWindow: { fromMs: number; toMs: number }, options: { final?: boolean } = {}): string {
    const joins: string[] = [];
    // On a cluster (clickhouse/src/cluster/layout.ts) each shard runs this FROM: person_distinct_id2
    // is whole on every node, so its join stays local; the sessions' events are spread over the
    // shards (a session's distinct ids may hash apart), so that join is GLOBAL.
    const global = globalPrefix(this.ports.layout ?? SINGLE_SERVER);
    if (sqlUsingSources.includes('pdi.')) {
      joins.push(`LEFT JOIN (
    SELECT distinct_id, argMax(person_id, version) AS person_id, argMax(is_deleted, version) AS is_deleted
    FROM person_distinct_id2 WHERE team_id = ${this.team}
    GROUP BY distinct_id
  ) AS pdi ON pdi.distinct_id = e.distinct_id`);
    }
    if (sqlUsingSources.includes('s.session_properties') || sqlUsingSources.includes(SESSION_DURATION)) {
      // A session is every event of the project with its $session_id, whoever sent it (as in
      // PostHog's sessions table). Unmatched rows read the columns' defaults: '' and 0.
      joins.push(`${global}LEFT JOIN (
    SELECT JSONExtractString(properties, '$session_id') AS session_id, ${SESSION_PROPERTIES_SQL}, ${this.sessionAttributionSql()}'}') AS session_properties,
      dateDiff('second', min(timestamp), max(timestamp)) AS session_duration
    FROM ${EVENTS_TABLE}
    WHERE team_id = ${this.team} AND timestamp >= ${this.dateTime(sessionWindow.fromMs - SESSION_BUFFER_SECONDS * 1000)}
      AND timestamp <= ${this.dateTime(sessionWindow.toMs + SESSION_BUFFER_SECONDS * 1000)} AND session_id != ''
    GROUP BY session_id
  ) AS s ON s.session_id = ${SESSION_ID}`);
    }
    // FINAL: a redelivered event (same uuid) must never be counted twice. A query that only asks
    // whether an actor had an event in an interval (`final: false`) cannot count one twice.
    return [`FROM ${EVENTS_TABLE} AS e${options.final === false ? '' : ' FINAL'}`, ...joins].join('\n  ');
  }
}
