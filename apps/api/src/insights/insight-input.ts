import { errors } from '@sightline/http';
import type { InsightInput, InsightListFilter } from '@sightline/insights';
import { isJsonObject } from '@sightline/json-input';
import { booleanField, charField, listField, nullable } from '../http/body-fields';
import { parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { truthy } from '../http/insight-request';

export type SavedInsightInput = InsightInput & { dashboards?: number[] };

/** What parseInsightInput reads, in its order; it words a wrong filters, query, order or dashboard itself. */
export const insightFields = {
  name: nullable(charField()),
  derived_name: nullable(charField()),
  description: nullable(charField()),
  filters: { description: 'The legacy filter object the insight runs (insight: TRENDS, FUNNELS, …)' },
  query: { description: 'A query node (InsightVizNode, TrendsQuery, FunnelsQuery, …), or its JSON text' },
  saved: booleanField,
  deleted: booleanField,
  favorited: booleanField,
  tags: listField(charField()),
  order: { type: ['integer', 'null'] },
  dashboards: listField(undefined, 'Ids of dashboards of the project to put the insight on'),
};

const MAX_NAME = 400;

export function parseInsightInput(body: Record<string, unknown>): SavedInsightInput {
  const input: SavedInsightInput = {};
  const text = (key: 'name' | 'derived_name') => (body[key] === null ? null : parseString(body[key], key, { allowBlank: true, maxLength: MAX_NAME }));
  if (body['name'] !== undefined) input.name = text('name');
  if (body['derived_name'] !== undefined) input.derived_name = text('derived_name');
  if (body['description'] !== undefined)
    input.description = body['description'] === null ? '' : parseString(body['description'], 'description', { allowBlank: true, maxLength: 65_535 });
  if (body['filters'] !== undefined) {
    if (!isJsonObject(body['filters'])) throw errors.validation('filters must be an object.', 'filters', 'invalid');
    input.filters = body['filters'];
  }
  if (body['query'] !== undefined) {
    let query: unknown = body['query'];
    if (typeof query === 'string') {
      try {
        query = JSON.parse(query) as unknown;
      } catch {
        throw errors.validation('query is not valid JSON.', 'query', 'parse_error');
      }
    }
    if (query !== null && !isJsonObject(query)) throw errors.validation('query must be a query node object.', 'query', 'invalid');
    input.query = query;
  }
  for (const key of ['saved', 'deleted', 'favorited'] as const) if (body[key] !== undefined) input[key] = parseBoolean(body[key], key);
  if (body['tags'] !== undefined) input.tags = [...new Set(parseList(body['tags'], 'tags').map((t, i) => parseString(t, `tags__${i}`, { maxLength: 255 })))];
  if (body['order'] !== undefined) {
    const order = body['order'];
    if (order !== null && !(Number.isInteger(order) && Math.abs(order as number) <= 2_147_483_647))
      throw errors.validation('A valid integer is required.', 'order', 'invalid');
    input.order = order as number | null;
  }
  if (body['dashboards'] !== undefined) {
    input.dashboards = parseList(body['dashboards'], 'dashboards').map((d, i) => {
      if (!Number.isInteger(d) || (d as number) < 1 || (d as number) > 2_147_483_647)
        throw errors.validation(`Invalid pk "${String(d).slice(0, 40)}" - object does not exist.`, `dashboards__${i}`, 'does_not_exist');
      return d as number;
    });
  }
  return input;
}

/** The list's query string: paging, the saved/favorited flags, creator, search, tags, short id. */
export function parseInsightListQuery(query: Record<string, unknown>): InsightListFilter {
  const flag = (key: string) => (query[key] === undefined ? undefined : truthy(query[key]));
  const text = (key: string) => (typeof query[key] === 'string' && query[key] !== '' ? (query[key] as string) : undefined);
  let tags: string[] | undefined;
  if (text('tags')) {
    try {
      const parsed = JSON.parse(text('tags')!) as unknown;
      tags = Array.isArray(parsed) ? parsed.map(String) : [String(parsed)];
    } catch {
      tags = [text('tags')!];
    }
  }
  const createdBy = text('created_by') && /^\d{1,9}$/.test(text('created_by')!) ? Number(text('created_by')) : undefined;
  return {
    limit: queryInteger(query['limit'], 100, 1),
    offset: queryInteger(query['offset'], 0, 0),
    saved: flag('saved'),
    favorited: flag('favorited'),
    createdBy,
    search: text('search'),
    tags,
    shortId: text('short_id'),
  };
}
