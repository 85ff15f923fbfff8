import { compilePropertyGroup, type CompileContext, type PropertyFilter, type PropertyGroup } from '@sightline/properties';
import { EventsSql, PERSON_ID, QueryInputError } from '../common/events-sql';
import type { QuerySqlPorts } from '../common/query-ports';
import { columnName, orderExpression, type EventsQuery } from './events-query-node';

/**
 * The fields `*` answers, in order, as an object per row (SELECT_STAR_FROM_EVENTS_FIELDS of
 * posthog/hogql_queries/events_query_runner.py).
 */
export const STAR_FIELDS = ['uuid', 'event', 'properties', 'timestamp', 'team_id', 'distinct_id', 'elements_chain', 'created_at', 'person_mode'] as const;

/**
 * The person properties a display name is read from when the project names none, first present
 * wins, then the distinct id (PERSON_DEFAULT_DISPLAY_NAME_PROPERTIES, posthog/api/person.py).
 */
const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'];

/** What a column of the answer is: a HogQL expression, or one of the columns the runner expands. */
export type EventsColumnKind = 'expression' | 'star' | 'person' | 'person_display_name';

export interface EventsQueryStatement {
  sql: string;
  params: Record<string, unknown>;
  /** Per column of the select, in order: what it is (the answer reads `c<i>` and its type `t<i>`). */
  columns: EventsColumnKind[];
}

/** The window an EventsQuery reads: after (exclusive; null for "all") and before (exclusive), epoch ms. */
export interface EventsQueryWindow {
  afterMs: number | null;
  beforeMs: number;
}

/** A printed expression and whether it aggregates (PostHog's has_aggregation decides GROUP BY and HAVING). */
interface Printed {
  sql: string;
  aggregate: boolean;
}

/** Where the sessions a session filter reads start when the query reads all time (`after: "all"`). */
const ALL_TIME_FROM_MS = Date.UTC(1970, 0, 4);

/**
 * The SQL of an EventsQuery (PostHog's EventsQueryRunner.to_query), over the events row `e` with
 * persons resolved through merges as every query reads them: the select's expressions (with an
 * aggregation, the others become the GROUP BY), the where conditions (those with an aggregation
 * go to HAVING), the filters, the time window, the order and one row past the page (hasMore).
 * HogQL goes through the expression printer; every value is a bound parameter.
 */
export class EventsQuerySql extends EventsSql {
  constructor(
    private readonly query: EventsQuery,
    private readonly window: EventsQueryWindow,
    /** The distinct ids of `personId`'s person (empty when it names no person of the project); null without personId. */
    private readonly personDistinctIds: readonly string[] | null,
    private readonly project: { testAccountFilters: PropertyGroup; personDisplayNameProperties?: readonly string[] },
    ports: QuerySqlPorts,
    timezone: string,
  ) {
    super({ teamId: ports.teamId, nowMs: ports.nowMs, timezone, interval: 'day', weekStartDay: 0, breakdowns: [], aggregationGroupTypeIndex: null }, ports);
  }

  /** Event metadata filters (PostHog's EventMetadataPropertyFilter) read the row's own columns. */
  protected override compileContext(): CompileContext {
    const base = super.compileContext();
    const metadata: Record<string, string> = {
      distinct_id: 'e.distinct_id',
      event: 'e.event',
      timestamp: 'toString(e.timestamp)',
      person_id: `toString(${PERSON_ID})`,
      uuid: 'toString(e.uuid)',
    };
    return {
      ...base,
      computedProperty: (filter: PropertyFilter) => {
        // PostHog's property_to_expr reads the event property `$elements_chain` as the row's chain.
        if ((filter.type ?? 'event') === 'event' && filter.key === '$elements_chain') return 'e.elements_chain';
        if (filter.type !== 'event_metadata') return base.computedProperty?.(filter) ?? null;
        const column = metadata[filter.key];
        if (!column) {
          throw new QueryInputError(
            'properties',
            `Unknown event_metadata property "${filter.key.slice(0, 100)}" (one of: ${Object.keys(metadata).join(', ')}).`,
            'invalid_choice',
          );
        }
        return column;
      },
    };
  }

  /**
   * A HogQL expression, printed per event when it can be, else with aggregations (so it
   * aggregates): the printer refuses an aggregate per event, and that refusal is the test.
   */
  private expression(text: string): Printed {
    try {
      return { sql: this.ports.hogql(text, this.params, { allowAggregations: false }), aggregate: false };
    } catch (error) {
      if (!(error instanceof QueryInputError)) throw error;
      return { sql: this.ports.hogql(text, this.params, { allowAggregations: true }), aggregate: true };
    }
  }

  private column(text: string): Printed & { kind: EventsColumnKind } {
    const name = columnName(text);
    if (text.trim() === '*') {
      return { kind: 'star', aggregate: false, sql: `tuple(${STAR_FIELDS.map((f) => `e.${f}`).join(', ')})` };
    }
    if (name === 'person') return { kind: 'person', aggregate: false, sql: 'e.distinct_id' };
    if (name === 'person_display_name') {
      const keys = this.project.personDisplayNameProperties ?? DISPLAY_NAME_PROPERTIES;
      const names = keys.map((key) => `nullIf(JSONExtractString(e.person_properties, ${this.params.add(key, 'String')}), '')`);
      return {
        kind: 'person_display_name',
        aggregate: false,
        sql: `tuple(coalesce(${names.join(', ')}, e.distinct_id), toString(${PERSON_ID}), e.distinct_id)`,
      };
    }
    return { kind: 'expression', ...this.expression(text) };
  }

  /** PostHog's default order: count() first, else the first aggregation, else timestamp, newest first; else the first column. */
  private defaultOrder(select: { text: string; printed: Printed }[]): string[] {
    const texts = select.map((s) => columnName(s.text));
    const count = select.find((s) => columnName(s.text) === 'count()');
    if (count) return [`${count.printed.sql} DESC`];
    const aggregate = select.find((s) => s.printed.aggregate);
    if (aggregate) return [`${aggregate.printed.sql} DESC`];
    if (texts.includes('timestamp')) return ['e.timestamp DESC'];
    return select.length > 0 ? [`${select[0]!.printed.sql} ASC`] : [];
  }

  private order(text: string): string {
    const { expression, direction } = orderExpression(text);
    const name = columnName(expression);
    // The expanded columns order by what they are built from.
    if (name === 'person') return `e.distinct_id ${direction}`;
    if (name === 'person_display_name') return `${this.column(expression).sql} ${direction}`;
    return `${this.expression(expression).sql} ${direction}`;
  }

  build(): EventsQueryStatement {
    const q = this.query;
    const select = q.select.map((text) => ({ text, printed: this.column(text) }));
    const hasAggregation = select.some((s) => s.printed.aggregate);

    const conditions = q.where.map((text) => this.expression(text));
    const ctx = this.compileContext();
    const where = [`e.team_id = ${this.team}`, `e.timestamp < ${this.dateTime(this.window.beforeMs)}`];
    if (this.window.afterMs !== null) where.push(`e.timestamp > ${this.dateTime(this.window.afterMs)}`);
    if (q.events.length === 1) where.push(`e.event = ${this.params.add(q.events[0], 'String')}`);
    else if (q.events.length > 1) where.push(`e.event IN ${this.params.add(q.events, 'Array(String)')}`);
    if (this.personDistinctIds !== null) where.push(`e.distinct_id IN ${this.params.add(this.personDistinctIds, 'Array(String)')}`);
    if (q.actionId !== null) where.push(this.ports.actionMatch(q.actionId, ctx));
    const filters: PropertyGroup = {
      type: 'AND',
      values: [q.properties, q.fixedProperties, ...(q.filterTestAccounts ? [this.project.testAccountFilters] : [])],
    };
    where.push(compilePropertyGroup(filters, ctx));
    where.push(...conditions.filter((c) => !c.aggregate).map((c) => `(${c.sql})`));
    const having = conditions.filter((c) => c.aggregate).map((c) => `(${c.sql})`);

    const orderBy = q.orderBy === null ? this.defaultOrder(select) : q.orderBy.map((text) => this.order(text));
    const columns = select.map((s, i) => `${s.printed.sql} AS c${i}`);
    const types = select.map((_, i) => `toTypeName(c${i}) AS t${i}`);
    const groupBy = hasAggregation ? select.filter((s) => !s.printed.aggregate).map((s) => s.printed.sql) : [];
    const limit = this.params.add(q.limit + 1, 'UInt64');
    const offset = this.params.add(q.offset, 'UInt64');
    const body = [
      `SELECT ${[...columns, ...types].join(', ')}`,
      // The FROM is decided last: it joins persons only when some part reads them.
      '',
      `WHERE ${where.filter((w) => w !== '1').join('\n  AND ')}`,
      ...(groupBy.length > 0 ? [`GROUP BY ${groupBy.join(', ')}`] : []),
      ...(having.length > 0 ? [`HAVING ${having.join(' AND ')}`] : []),
      ...(orderBy.length > 0 ? [`ORDER BY ${orderBy.join(', ')}`] : []),
      `LIMIT ${limit} OFFSET ${offset}`,
    ];
    const text = body.join('\n');
    body[1] = this.fromSql(text, { fromMs: this.window.afterMs ?? ALL_TIME_FROM_MS, toMs: this.window.beforeMs });
    return { sql: body.join('\n'), params: this.params.values, columns: select.map((s) => s.printed.kind) };
  }
}
