import { checkCall, findFunction, unsupportedFunction, type FoundFunction } from './functions';
import { HogQLError, type HogQLNode } from './hogql-error';

/** What printing a call needs of the printer around it. */
export interface CallContext {
  print(node: HogQLNode, depth: number): string;
  /** An argument of a call: integer constants typed as ClickHouse types their literals. */
  argument(node: HogQLNode, depth: number): string;
  /** A number for arithmetic: properties (text) read as numbers. */
  numeric(node: HogQLNode, depth: number): string;
  /** A lambda argument (`x -> x * 2`) with its names replaced by generated ones. */
  lambda(node: HogQLNode, depth: number): string;
  /** Whether an argument, once printed, is text: a string constant or a property (properties are JSON text). */
  isText(node: HogQLNode): boolean;
  /** A property read as a number, given the SQL printed for it; null when `node` is no property. */
  propertyNumber(node: HogQLNode, printed: string): string | null;
  /** The project's time zone as a bound parameter: what a date-time read from text is in when the call names none. */
  projectTimeZone(): string;
  allowAggregations: boolean;
  /** The aggregates the call is inside of, outermost first. */
  aggregates: string[];
}

const isStar = (node: HogQLNode) => node.node === 'Field' && Array.isArray(node['chain']) && node['chain'].length === 1 && node['chain'][0] === '*';

const nodes = (value: unknown): HogQLNode[] | null => (Array.isArray(value) ? (value as HogQLNode[]) : null);

/**
 * A parameter as ClickHouse needs it: a literal number (a parametric aggregate's parameters are
 * not read from query parameters). Only finite numbers are written; nothing else is pasted.
 */
function parameter(node: HogQLNode, name: string): string {
  const value = node.node === 'Constant' ? node['value'] : undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new HogQLError(`Parameters of '${name}' must be number constants.`);
  return String(value);
}

/**
 * `CASE x WHEN a THEN b … ELSE c END`, which the parser gives as `_caseWithExpression(x, a, b,
 * …, c)`: printed as multiIf over equalities (PostHog prints `transform`, which needs constant
 * lists; this takes any expression and answers the same).
 */
function caseWithExpression(ctx: CallContext, args: HogQLNode[], depth: number): string {
  if (args.length < 3) throw new HogQLError('CASE needs at least one WHEN … THEN ….');
  const subject = ctx.print(args[0]!, depth);
  const rest = args.slice(1);
  const otherwise = rest.length % 2 === 1 ? ctx.print(rest.pop()!, depth) : 'NULL';
  const branches: string[] = [];
  for (let i = 0; i < rest.length; i += 2) branches.push(`(${subject}) = (${ctx.print(rest[i]!, depth)})`, ctx.print(rest[i + 1]!, depth));
  return `multiIf(${[...branches, otherwise].join(', ')})`;
}

/** Text in ClickHouse's own date-time format (a date, seconds, or up to microseconds), which toDateTime64 reads exactly. */
const PLAIN_DATE_TIME = /^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d{1,6})?)?$/;

/**
 * HogQL's toDateTime as PostHog maps it (posthog/hogql/functions/mapping.py, printed by
 * posthog/hogql/printer): text is read best effort as a DateTime64(6), the precision of the
 * events' timestamp column; date-time, date and number arguments convert with ClickHouse's
 * toDateTime. The zone is the one given, else the project's (PostHog's tz_aware). A constant text
 * with no zone given is read strictly (an unreadable one is the query's error, as in PostHog);
 * in ClickHouse's own format it is read with toDateTime64, the same instant without the parse.
 * PostHog's printer turns the seconds and date forms into a DateTime instead: compared with the
 * DateTime64(6) column that costs a conversion per row (bench:sql "daily pageviews" ran 1.3x the
 * hand-written SQL), so here they stay DateTime64(6); the instant, and so the answer, is the same.
 * Other text (a property) is read with the OrNull form: what is not a date-time is NULL.
 */
function toDateTimeCall(ctx: CallContext, args: HogQLNode[], depth: number): string {
  const [value, zoneNode] = args as [HogQLNode, HogQLNode | undefined];
  const text = ctx.print(value, depth);
  const zone = zoneNode ? ctx.argument(zoneNode, depth) : ctx.projectTimeZone();
  const constant = value.node === 'Constant' && value['value_type'] !== 'number' && typeof value['value'] === 'string' ? value['value'] : null;
  if (constant !== null && PLAIN_DATE_TIME.test(constant)) return `toDateTime64(${text}, 6, ${zone})`;
  if (constant !== null && !zoneNode) return `parseDateTime64BestEffort(${text}, 6, ${zone})`;
  if (ctx.isText(value)) return `parseDateTime64BestEffortOrNull(${text}, 6, ${zone})`;
  return `toDateTime(${text}, ${zone})`;
}

/** `agg(x) FILTER (WHERE c)` is `aggIf(x, c)`, as ClickHouse reads it. */
function withFilter(written: string, found: FoundFunction, args: HogQLNode[], filter: HogQLNode): [string, FoundFunction, HogQLNode[]] {
  const conditional = found.spec.aggregate ? findFunction(`${found.name}If`) : undefined;
  if (!conditional) throw new HogQLError(`FILTER (WHERE …) is only allowed after an aggregation with an -If form, not '${written}'.`);
  return [`${found.name}If`, conditional, [...args, filter]];
}

/**
 * Prints a call through the allow-list (posthog/hogql/functions/mapping.py): the function must be
 * known, its argument and parameter counts and constants right, an aggregate allowed here and not
 * inside another, and only the higher-order functions take lambdas.
 */
export function printCall(ctx: CallContext, node: HogQLNode, depth: number): string {
  const writtenName = String(node['name']);
  let args = nodes(node['args']) ?? [];
  const params = nodes(node['params']);
  if (writtenName === '_caseWithExpression') return caseWithExpression(ctx, args, depth);
  if (nodes(node['order_by'])?.length) throw new HogQLError(`ORDER BY inside '${writtenName.slice(0, 60)}(...)' is not supported.`);
  if (node['within_group'] !== undefined && node['within_group'] !== null)
    throw new HogQLError(`WITHIN GROUP after '${writtenName.slice(0, 60)}(...)' is not supported.`);
  let written = writtenName;
  let found = findFunction(written);
  if (!found) throw unsupportedFunction(written);
  const filter = node['filter_expr'] as HogQLNode | null | undefined;
  if (filter) [written, found, args] = withFilter(written, found, args, filter);
  // count(*) counts rows, as count() does.
  if (found.name === 'count' && args.length === 1 && isStar(args[0]!)) args = [];
  checkCall(written, found, args, params);
  const { name, spec } = found;
  if (name === 'toDateTime') return toDateTimeCall(ctx, args, depth);
  if (name === 'toFloat') {
    const printed = ctx.print(args[0]!, depth);
    return ctx.propertyNumber(args[0]!, printed) ?? `toFloat64OrNull(toString(${printed}))`;
  }
  if (spec.aggregate) {
    if (!ctx.allowAggregations) throw new HogQLError(`Aggregate function "${name}" is not allowed here: this expression is evaluated per event.`);
    const outer = ctx.aggregates[ctx.aggregates.length - 1];
    if (outer !== undefined) throw new HogQLError(`Aggregation '${written}' cannot be nested inside another aggregation '${outer}'.`);
    ctx.aggregates.push(written);
  }
  try {
    const printed = args.map((arg, i) => {
      if (arg.node === 'Lambda') {
        if (!spec.lambdas) throw new HogQLError(`Function '${written}' takes no lambda.`);
        return ctx.lambda(arg, depth);
      }
      if (spec.textArguments) return `toString(${ctx.print(arg, depth)})`;
      return spec.numericFirstArgument && i === 0 ? ctx.numeric(arg, depth) : ctx.argument(arg, depth);
    });
    let paramList = params?.map((p) => parameter(p, written)) ?? null;
    if (spec.bound?.kind === 'max-size-parameter' && paramList === null) paramList = [String(spec.bound.max)];
    const paramPart = paramList ? `(${paramList.join(', ')})` : '';
    if (node['distinct'] === true) {
      if (!spec.aggregate) throw new HogQLError(`DISTINCT is only allowed in an aggregation, not in '${written}'.`);
      // count(DISTINCT x) counts exactly, as ClickHouse's count_distinct_implementation would with uniqExact.
      if (name === 'count') return `uniqExact(${printed.join(', ')})`;
      return `${spec.clickhouse}${paramPart}(DISTINCT ${printed.join(', ')})`;
    }
    return `${spec.clickhouse}${paramPart}(${printed.join(', ')})`;
  } finally {
    if (spec.aggregate) ctx.aggregates.pop();
  }
}
