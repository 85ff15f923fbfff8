import { HogQLError } from '@sightline/hogql';
import { filtersOf, type PropertyGroup } from '@sightline/properties';
import { clickHouseInputError, unknownTimeZoneOf } from '../common/clickhouse-input-errors';
import { DateRangeError, isKnownTimezone } from '../common/date-range';
import { QueryInputError } from '../common/events-sql';

/** A HogQL expression of a query and the field (of the request, an action or a setting) holding it. */
export interface HogQLExpression {
  text: string;
  attr: string;
}

/** The parts of a query that can hold HogQL. */
export interface HogQLSources {
  series: { math?: string; math_hogql?: string | null; properties: PropertyGroup }[];
  properties: PropertyGroup;
  breakdowns: { type: string; property: string | number }[];
  /** A funnel's `funnel_aggregate_by_hogql`. */
  aggregateByHogQL?: string | null;
  /** Expressions held elsewhere (an EventsQuery's select, where and orderBy). */
  hogql?: readonly HogQLExpression[];
}

const hogqlFilters = (group: PropertyGroup, attr: string): HogQLExpression[] =>
  filtersOf(group).flatMap((f) => (f.type === 'hogql' ? [{ text: f.key, attr }] : []));

/** Every HogQL expression a query holds: hogql maths, breakdowns and filters (its actions' and the project's too). */
export function hogqlExpressions(query: HogQLSources, testAccountFilters: PropertyGroup, actionFilters: PropertyGroup): HogQLExpression[] {
  return [
    ...query.series.flatMap((s) => (s.math === 'hogql' && s.math_hogql ? [{ text: s.math_hogql, attr: 'math_hogql' }] : [])),
    ...query.breakdowns.flatMap((b) => (b.type === 'hogql' ? [{ text: String(b.property), attr: 'breakdown' }] : [])),
    ...(query.aggregateByHogQL ? [{ text: query.aggregateByHogQL, attr: 'funnel_aggregate_by_hogql' }] : []),
    ...(query.hogql ?? []),
    ...hogqlFilters(query.properties, 'properties'),
    ...query.series.flatMap((s) => hogqlFilters(s.properties, 'properties')),
    ...hogqlFilters(actionFilters, 'actions'),
    ...hogqlFilters(testAccountFilters, 'test_account_filters'),
  ];
}

/** An expression in a message: quoted, cut short (it is the client's text, up to a thousand characters). */
const quoted = (text: string) => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);

/** A HogQL expression the compiler refused, as a 400 naming the expression and where it came from. */
export function refusedExpression(expression: HogQLExpression, error: unknown): unknown {
  if (!(error instanceof HogQLError)) return error;
  return new QueryInputError(expression.attr, `HogQL expression ${quoted(expression.text)}: ${error.message}`, 'invalid_hogql');
}

/** The project's settings a query cannot run with: a time zone ClickHouse refuses, unusable test-account filters. */
export function checkProjectSettings(project: { timezone: string; testAccountFiltersProblem?: string }, filterTestAccounts: boolean): void {
  if (!isKnownTimezone(project.timezone)) throw new DateRangeError('timezone', unknownProjectZone(project.timezone));
  if (filterTestAccounts && project.testAccountFiltersProblem) {
    throw new QueryInputError(
      'test_account_filters',
      `The project's test-account filters cannot be applied: ${project.testAccountFiltersProblem}`,
      'invalid_input',
    );
  }
}

const unknownProjectZone = (zone: string) => `The project's time zone ${quoted(zone)} is not one ClickHouse knows; choose another in the project's settings.`;

/**
 * Runs a query, answering a ClickHouse failure the client's input caused as a 400: an expression
 * ClickHouse cannot evaluate (named, when the query holds one; listed, when several), or a project
 * time zone this ClickHouse does not know. Anything else is the server's failure and stays one.
 */
export async function withInputErrors<R>(project: { timezone: string }, expressions: readonly HogQLExpression[], run: () => Promise<R>): Promise<R> {
  try {
    return await run();
  } catch (error) {
    if (unknownTimeZoneOf(error) === project.timezone) throw new DateRangeError('timezone', unknownProjectZone(project.timezone));
    const input = expressions.length > 0 ? clickHouseInputError(error) : null;
    if (!input) throw error;
    const texts = [...new Set(expressions.map((e) => e.text))];
    const named = texts.length === 1 ? `The HogQL expression ${quoted(texts[0]!)}` : `One of the HogQL expressions ${texts.map(quoted).join(', ')}`;
    const attrs = new Set(expressions.map((e) => e.attr));
    throw new QueryInputError(
      attrs.size === 1 ? expressions[0]!.attr : 'hogql',
      `${named} cannot be evaluated on these events: ${input.explanation} (${input.type}).`,
      'invalid_hogql',
    );
  }
}
