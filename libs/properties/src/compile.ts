import { chainHrefSql, chainTextsSql, selectorMatchSql, tagNameMatchSql } from './elements-chain';
import { NUMBER_RANGE_TEXT, withinNumberRange } from './number-range';
import type { QueryParams } from './query-params';
import { isPropertyGroup, type PropertyFilter, type PropertyGroup } from './types';

export interface CompileContext {
  params: QueryParams;
  /**
   * The column (a JSON text) holding the properties a filter of this type reads, or null when
   * the query has none: event → `properties`, person → `person_properties`, group N →
   * `group<N>_properties` in the events table.
   */
  propertiesColumn(filter: PropertyFilter): string | null;
  /** SQL for "the row's actor is in cohort `id`"; absent: cohort filters are refused. */
  cohortMembership?(cohortId: number): string;
  /** The events row's `elements_chain` column, which `element` filters read; absent: they are refused. */
  elementsChainColumn?: string;
  /** SQL for a HogQL boolean expression (`type: "hogql"` filters); absent: they are refused. */
  hogqlFilter?(expression: string): string;
  /** The query's now, for relative date values. */
  nowMs: number;
  /**
   * SQL (a Nullable(String)) for a property computed rather than stored, such as PostHog's
   * virtual person properties; null or absent: the filter reads its properties column.
   */
  computedProperty?(filter: PropertyFilter): string | null;
}

export class PropertyCompileError extends Error {}

const RELATIVE_DATE = /^-(\d+)([hdwmy])$/;
const UNIT_MS: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, m: 30 * 86_400_000, y: 365 * 86_400_000 };

/** A filter's date value as an instant: `-7d`-style relative values from now, or any date ClickHouse can read. */
function dateValueSql(value: unknown, ctx: CompileContext): string {
  const relative = typeof value === 'string' ? RELATIVE_DATE.exec(value) : null;
  if (relative) return `toDateTime64(${ctx.params.add((ctx.nowMs - Number(relative[1]) * UNIT_MS[relative[2]!]!) / 1000, 'Float64')}, 6, 'UTC')`;
  return `parseDateTime64BestEffortOrNull(${ctx.params.add(String(value), 'String')}, 6, 'UTC')`;
}

/**
 * A property's raw JSON text ('' when the key is missing, 'null' for a JSON null). The document
 * is parsed once per row: every other expression works on this short text, and ClickHouse
 * computes an expression that appears several times in a query only once.
 */
export const propertyRawSql = (column: string, keyPlaceholder: string) => `JSONExtractRaw(${column}, ${keyPlaceholder})`;

/**
 * A property's value as text, as queries compare and group it: a JSON string by its value,
 * anything else by its JSON text (`42`, `true`, `["a"]`); '' when the key is missing.
 */
export function propertyTextSql(column: string, keyPlaceholder: string): string {
  const text = `JSONExtractString(${column}, ${keyPlaceholder})`;
  const raw = propertyRawSql(column, keyPlaceholder);
  // A string value needs one parse; anything else (and "") is read raw, only for those rows
  // (multiIf evaluates its branches lazily).
  return `multiIf(${text} != '', ${text}, startsWith(${raw}, '"'), '', ${raw})`;
}

/** The property is present and not a JSON null. */
export const propertyPresentSql = (column: string, keyPlaceholder: string) => `(${propertyRawSql(column, keyPlaceholder)} NOT IN ('', 'null'))`;

/** Texts that may be how a non-string JSON value reads: numbers, true/false/null, lists, objects. */
const NON_STRING_JSON_TEXT = /^(?:-|\d|\[|\{|true$|false$|null$)/;

const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
/** A LIKE / ILIKE pattern for "contains `text`", its `%`, `_` and `\` taken literally. */
export const containsPattern = (text: string) => `%${likeEscaped(text)}%`;
const texts = (value: unknown) => (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));

/**
 * What an operator compares: a value as text, whether it is there at all, and (for JSON
 * properties) the cheaper expression that reads a JSON string only.
 */
interface Operand {
  text: string;
  present: string;
  stringOnly: string | null;
}

/** A JSON property: missing and JSON null are "not there"; non-strings compare by their JSON text. */
function jsonOperand(column: string, keyPlaceholder: string): Operand {
  return {
    text: propertyTextSql(column, keyPlaceholder),
    present: propertyPresentSql(column, keyPlaceholder),
    stringOnly: `JSONExtractString(${column}, ${keyPlaceholder})`,
  };
}

/** A plain String expression (an element's text or href): always there, '' when empty, as PostHog's String columns are. */
const stringOperand = (expression: string): Operand => ({ text: expression, present: '1', stringOnly: null });

/**
 * An operator applied to one operand, with PostHog's query-side semantics (they differ from
 * flag matching): `exact` is case-sensitive text equality (a JSON string by its value, anything
 * else by its JSON text, so 42 = "42" and true = "true"); negative operators match a missing
 * property; numeric operators compare numbers only; `regex` is ClickHouse's RE2 `match`.
 */
/** A numeric operator's bound as a Float64 parameter; stored filters saved before the range check are refused here. */
function numberParam(given: unknown, operator: string, ctx: CompileContext): string {
  // A list holds the number first (parsing checked that one).
  const value = Array.isArray(given) ? given[0] : given;
  if (!withinNumberRange(value)) throw new PropertyCompileError(`Operator "${operator}" compares numbers ${NUMBER_RANGE_TEXT}.`);
  return ctx.params.add(Number(value), 'Float64');
}

function compareOperand(operand: Operand, operator: string, value: unknown, ctx: CompileContext): string {
  const { text, present } = operand;
  const number = `toFloat64OrNull(${text})`;
  const positive = (sql: string) => (present === '1' ? sql : `(${present} AND ${sql})`);
  switch (operator) {
    case 'exact':
    case 'is_not': {
      // A missing property reads as '' and a JSON null as 'null': unless a value is one of those,
      // equality alone already excludes them (and skips a second parse of the document).
      const values = texts(value);
      // A value that cannot be the JSON text of a number, boolean, null, list or object can
      // only equal a JSON string: compare the string alone (one parse, no fallback).
      if (operand.stringOnly !== null && values.every((v) => v !== '' && !NON_STRING_JSON_TEXT.test(v))) {
        const string = operand.stringOnly;
        const sql = values.length === 1 ? `${string} = ${ctx.params.add(values[0], 'String')}` : `${string} IN ${ctx.params.add(values, 'Array(String)')}`;
        return operator === 'exact' ? sql : `NOT (${sql})`;
      }
      const equal = `${text} IN ${ctx.params.add(values, 'Array(String)')}`;
      const sql = values.some((v) => v === '' || v === 'null') ? positive(equal) : equal;
      return operator === 'exact' ? sql : `NOT ${sql}`;
    }
    case 'is_set':
      return present;
    case 'is_not_set':
      return `NOT ${present}`;
    case 'icontains':
    case 'not_icontains': {
      const needle = texts(value)[0]!;
      const like = `${text} ILIKE ${ctx.params.add(containsPattern(needle), 'String')}`;
      // A missing property ('') cannot contain a non-empty needle.
      const sql = needle === '' ? positive(like) : like;
      return operator === 'icontains' ? sql : `NOT ${sql}`;
    }
    case 'regex':
    case 'not_regex': {
      const sql = positive(`match(${text}, ${ctx.params.add(String(value), 'String')})`);
      return operator === 'regex' ? sql : `NOT ${sql}`;
    }
    case 'gt':
      return `${number} > ${numberParam(value, operator, ctx)}`;
    case 'gte':
    case 'min':
      return `${number} >= ${numberParam(value, operator, ctx)}`;
    case 'lt':
      return `${number} < ${numberParam(value, operator, ctx)}`;
    case 'lte':
    case 'max':
      return `${number} <= ${numberParam(value, operator, ctx)}`;
    case 'between':
    case 'not_between': {
      const [low, high] = value as unknown[];
      const sql = `${number} BETWEEN ${numberParam(low, operator, ctx)} AND ${numberParam(high, operator, ctx)}`;
      return operator === 'between' ? sql : `NOT (${sql})`;
    }
    case 'is_date_before':
      return `parseDateTime64BestEffortOrNull(${text}, 6, 'UTC') < ${dateValueSql(value, ctx)}`;
    case 'is_date_after':
      return `parseDateTime64BestEffortOrNull(${text}, 6, 'UTC') > ${dateValueSql(value, ctx)}`;
    case 'is_date_exact':
      return `toDate(parseDateTime64BestEffortOrNull(${text}, 6, 'UTC')) = toDate(${dateValueSql(value, ctx)})`;
    default:
      throw new PropertyCompileError(`Operator "${operator}" is not supported in queries.`);
  }
}

/** Operators whose list of values must all hold (PostHog joins the others' values with OR). */
const NEGATIVE_ELEMENT_OPERATORS = new Set(['is_not', 'not_icontains', 'not_regex']);

/**
 * An `element` filter on the elements chain (PostHog's property_to_expr for elements): `selector`
 * and `tag_name` by regular expression (exact or is_not), `href` as the chain's first href and
 * `text` as any element's text, both with the usual operators.
 */
function compileElementFilter(filter: PropertyFilter, chain: string, ctx: CompileContext): string {
  const operator = filter.operator ?? 'exact';
  if (Array.isArray(filter.value) && filter.value.length !== 1) {
    if (filter.value.length === 0) return '1';
    const each = filter.value.map((value) => compileElementFilter({ ...filter, value }, chain, ctx));
    return `(${each.join(NEGATIVE_ELEMENT_OPERATORS.has(operator) ? ' AND ' : ' OR ')})`;
  }
  const value = Array.isArray(filter.value) ? filter.value[0] : filter.value;
  switch (filter.key) {
    case 'selector':
    case 'tag_name': {
      if (operator !== 'exact' && operator !== 'is_not')
        throw new PropertyCompileError(`Element ${filter.key} filters support the operators exact and is_not, not "${operator}".`);
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      const sql = filter.key === 'selector' ? selectorMatchSql(chain, text, ctx.params) : tagNameMatchSql(chain, text, ctx.params);
      return operator === 'is_not' ? `NOT ${sql}` : sql;
    }
    case 'href':
      return compareOperand(stringOperand(chainHrefSql(chain)), operator, value, ctx);
    case 'text':
      return `arrayExists(element_text -> ${compareOperand(stringOperand('element_text'), operator, value, ctx)}, ${chainTextsSql(chain)})`;
    default:
      throw new PropertyCompileError(`Element filters read text, href, tag_name or selector, not "${filter.key.slice(0, 100)}".`);
  }
}

/** One filter as SQL: cohorts, elements and HogQL through the context, properties by operator. */
function compileFilter(filter: PropertyFilter, ctx: CompileContext): string {
  if (filter.type === 'cohort') {
    if (!ctx.cohortMembership) throw new PropertyCompileError('Cohort filters are not supported in this query.');
    const member = ctx.cohortMembership(Number(filter.value));
    return filter.operator === 'not_in' || filter.negation ? `NOT (${member})` : member;
  }
  if (filter.type === 'element') {
    if (!ctx.elementsChainColumn) throw new PropertyCompileError('Element filters are not supported in this query.');
    return `(${compileElementFilter(filter, ctx.elementsChainColumn, ctx)})`;
  }
  if (filter.type === 'hogql') {
    if (!ctx.hogqlFilter) throw new PropertyCompileError('HogQL filters are not supported in this query.');
    const expression = ctx.hogqlFilter(filter.key);
    return filter.negation ? `NOT (${expression})` : `(${expression})`;
  }
  const computed = ctx.computedProperty?.(filter) ?? null;
  if (computed !== null) {
    const operand = { text: `ifNull(${computed}, '')`, present: `isNotNull(${computed})`, stringOnly: null };
    return compareOperand(operand, filter.operator ?? 'exact', filter.value, ctx);
  }
  const column = ctx.propertiesColumn(filter);
  if (column === null) throw new PropertyCompileError(`Property filters of type "${String(filter.type)}" are not supported in this query.`);
  return compareOperand(jsonOperand(column, ctx.params.add(filter.key, 'String')), filter.operator ?? 'exact', filter.value, ctx);
}

/**
 * A property group as one SQL boolean expression with bound parameters: AND/OR nested as
 * given; an empty group is true. Comparisons with a missing or non-numeric value are NULL,
 * which ClickHouse's WHERE treats as false.
 */
export function compilePropertyGroup(group: PropertyGroup, ctx: CompileContext): string {
  const parts = group.values.map((node) => (isPropertyGroup(node) ? compilePropertyGroup(node, ctx) : compileFilter(node, ctx)));
  if (parts.length === 0) return '1';
  return parts.length === 1 ? parts[0]! : `(${parts.join(group.type === 'OR' ? ' OR ' : ' AND ')})`;
}

/** The events table's column for a filter's properties: event, person and group filters. */
export function eventsTablePropertiesColumn(filter: PropertyFilter): string | null {
  switch (filter.type ?? 'event') {
    case 'event':
      return 'properties';
    case 'person':
      return 'person_properties';
    case 'group':
      return Number.isInteger(filter.group_type_index) ? `group${filter.group_type_index}_properties` : null;
    default:
      return null;
  }
}
