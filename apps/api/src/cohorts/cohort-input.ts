import { parse as parseCsv } from 'csv-parse/sync';
import { errors } from '@sightline/http';
import type { StaticMemberIds } from '@sightline/insights';
import { findInputProblem, isJsonObject } from '@sightline/json-input';
import { parsePropertyFilters, PropertyFilterError, type PropertyGroup } from '@sightline/properties';

/** What a dynamic cohort may be defined by: person properties and other cohorts. */
const COHORT_FILTER_TYPES = { types: new Set(['person', 'cohort']) };

const BEHAVIORAL_REFUSAL =
  'Behavioral cohort filters (type "behavioral": persons who performed an event or action) are not supported; define the cohort by person properties and other cohorts.';

/** Refuses a behavioural filter anywhere in a raw group by name, before the generic type check. */
function refuseBehavioral(value: unknown, attr: string): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (isJsonObject(node)) {
      if (node['type'] === 'behavioral') throw errors.validation(BEHAVIORAL_REFUSAL, attr, 'behavioral_not_supported');
      if (Array.isArray(node['values'])) stack.push(node['values']);
    }
  }
}

/**
 * One of PostHog's legacy `groups` as a property group, converted as Cohort.properties does
 * (posthog/models/cohort/cohort.py): a list of filters whose type is missing or "event" is read
 * as person filters; the oldest form `{key: value}` as exact person filters; a group
 * `{type, values}` as it is. A group of an action or event (`action_id` / `event_id`) is
 * behavioural and refused.
 */
function legacyGroup(group: unknown, attr: string): PropertyGroup {
  if (!isJsonObject(group)) throw errors.validation('Each group must be an object with properties.', attr, 'invalid');
  if ((group['action_id'] ?? null) !== null || (group['event_id'] ?? null) !== null)
    throw errors.validation(BEHAVIORAL_REFUSAL, attr, 'behavioral_not_supported');
  const properties = group['properties'];
  let filters: unknown;
  if (Array.isArray(properties) && properties.length > 0) {
    filters = properties.map((p) => (isJsonObject(p) && (p['type'] === undefined || p['type'] === 'event') ? { ...p, type: 'person' } : p));
  } else if (isJsonObject(properties) && 'values' in properties) {
    filters = properties;
  } else if (isJsonObject(properties) && !('type' in properties) && Object.keys(properties).length > 0) {
    filters = Object.entries(properties).map(([key, value]) => ({ key, value, type: 'person' }));
  } else {
    throw errors.validation('Each group needs person properties.', `${attr}__properties`, 'invalid');
  }
  refuseBehavioral(filters, attr);
  return parsePropertyFilters(filters, `${attr}__properties`, COHORT_FILTER_TYPES);
}

/**
 * A dynamic cohort's definition from a create or update body, as stored (and as the flag engine
 * reads it): `filters: {properties: <group>}` of person and cohort filters nested in AND/OR
 * groups, or the legacy `groups` (each group's properties ANDed, the groups ORed). Answers null
 * when the body has neither. Every filter is checked by @sightline/properties; cohort ids are
 * checked against the project by the caller.
 */
export function parseCohortDefinition(body: Record<string, unknown>): { properties: PropertyGroup } | null {
  try {
    const filters = body['filters'];
    if (filters !== undefined && filters !== null) {
      const properties = isJsonObject(filters) ? filters['properties'] : undefined;
      if (!isJsonObject(properties) || (properties['type'] !== 'AND' && properties['type'] !== 'OR') || !Array.isArray(properties['values'])) {
        throw errors.validation("Must contain a 'properties' key with type (AND or OR) and values.", 'filters', 'invalid');
      }
      refuseBehavioral(properties, 'filters');
      return { properties: parsePropertyFilters(properties, 'filters__properties', COHORT_FILTER_TYPES) };
    }
    const groups = body['groups'];
    if (groups === undefined || groups === null || (Array.isArray(groups) && groups.length === 0)) return null;
    if (!Array.isArray(groups)) throw errors.validation('groups must be a list.', 'groups', 'invalid');
    return { properties: { type: 'OR', values: groups.map((group, i) => legacyGroup(group, `groups__${i}`)) } };
  } catch (error) {
    if (error instanceof PropertyFilterError) throw errors.validation(error.message, error.attr, error.code);
    throw error;
  }
}

/** Fields a multipart (CSV upload) body carries as JSON text, as DRF's JSONField and ListField read them. */
const JSON_FORM_FIELDS = ['filters', 'groups', '_create_static_person_ids', 'person_ids', 'distinct_ids'];

/**
 * A multipart body's fields as a JSON body would carry them: JSON fields parsed, everything
 * checked against the input limits (the /api guard ran before the form was read).
 */
export function formBody(fields: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = { ...fields };
  for (const name of JSON_FORM_FIELDS) {
    const value = body[name];
    if (typeof value !== 'string') continue;
    try {
      body[name] = JSON.parse(value);
    } catch {
      throw errors.validation('Value must be valid JSON.', name, 'invalid');
    }
  }
  const problem = findInputProblem(body);
  if (problem) throw errors.validation(problem.detail, problem.attr, problem.code);
  return body;
}

/** PostHog's CSV headers (posthog/api/cohort.py CSVConfig), compared case-insensitively. */
const PERSON_ID_HEADERS = ['person_id', 'person-id', 'person .id'];
const DISTINCT_ID_HEADERS = ['distinct_id', 'distinct-id'];
const EMAIL_HEADERS = ['email', 'e-mail'];

const csvError = (detail: string) => errors.validation(detail, 'csv', 'invalid');

/**
 * The persons a static cohort's CSV upload names, read as PostHog reads it: a single column is
 * distinct ids, unless its header says person ids (`person_id`) or emails (`email`); with
 * several columns the header names the id column, person ids first, then distinct ids, then
 * emails. Empty cells are skipped.
 */
export function readCsvMembers(file: Buffer): StaticMemberIds {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file);
  } catch {
    throw csvError('CSV file encoding is not supported. Please save your file as UTF-8 and try again.');
  }
  let rows: string[][];
  try {
    rows = parseCsv(text, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }) as string[][];
  } catch {
    throw csvError('CSV file format is invalid. Please check your file format and try again.');
  }
  rows = rows.filter((row) => row.some((cell) => cell.trim() !== ''));
  if (rows.length === 0) throw csvError('CSV file is empty. Please upload a CSV file with at least one row of data.');
  const header = rows[0]!.map((cell) => cell.trim().toLowerCase());
  const column = (index: number, skipHeader: boolean) =>
    rows
      .slice(skipHeader ? 1 : 0)
      .map((row) => (row[index] ?? '').trim())
      .filter((id) => id !== '');
  let ids: StaticMemberIds;
  if (header.filter((cell) => cell !== '').length <= 1) {
    const first = header.findIndex((cell) => cell !== '');
    if (PERSON_ID_HEADERS.includes(header[first]!)) ids = { personUuids: column(first, true) };
    else if (EMAIL_HEADERS.includes(header[first]!)) ids = { emails: column(first, true) };
    else ids = { distinctIds: column(first, false) };
  } else {
    const find = (names: string[]) => header.findIndex((cell) => names.includes(cell));
    const [personId, distinctId, email] = [find(PERSON_ID_HEADERS), find(DISTINCT_ID_HEADERS), find(EMAIL_HEADERS)];
    if (personId >= 0) ids = { personUuids: column(personId, true) };
    else if (distinctId >= 0) ids = { distinctIds: column(distinctId, true) };
    else if (email >= 0) ids = { emails: column(email, true) };
    else {
      const columns = rows[0]!.map((cell) => cell.trim()).filter((cell) => cell !== '');
      throw csvError(
        `Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: ${columns.join(', ').slice(0, 500)}`,
      );
    }
  }
  const count = (ids.personUuids?.length ?? 0) + (ids.distinctIds?.length ?? 0) + (ids.emails?.length ?? 0);
  if (count === 0) {
    throw csvError(
      'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data rows with person IDs, distinct IDs, or email addresses.',
    );
  }
  return ids;
}
