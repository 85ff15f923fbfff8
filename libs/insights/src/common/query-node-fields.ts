import { isJsonObject } from '@sightline/json-input';
import { QueryFilterError } from './query-filter-error';

/** Series fields a query node carries under the same names as the legacy entity. */
const SERIES_FIELDS = [
  'custom_name',
  'name',
  'math',
  'math_property',
  'math_property_type',
  'math_hogql',
  'math_group_type_index',
  'properties',
  'optionalInFunnel',
] as const;

/** The series of a query node as the legacy `events` and `actions`, in order. */
export function seriesToEntities(series: unknown): { events: unknown[]; actions: unknown[] } {
  if (series !== undefined && !Array.isArray(series)) throw new QueryFilterError('series', 'series must be a list.', 'not_a_list');
  const events: unknown[] = [];
  const actions: unknown[] = [];
  (series ?? []).forEach((node: unknown, order: number) => {
    if (!isJsonObject(node)) throw new QueryFilterError(`series__${order}`, 'Each series must be an object.', 'invalid');
    const common: Record<string, unknown> = { order };
    for (const key of SERIES_FIELDS) if (node[key] !== undefined) common[key] = node[key];
    if (node['kind'] === 'ActionsNode') actions.push({ ...common, id: node['id'], type: 'actions' });
    else if (node['kind'] === 'EventsNode' || node['kind'] === undefined) events.push({ ...common, id: node['event'] ?? null, type: 'events' });
    else
      throw new QueryFilterError(
        `series__${order}__kind`,
        `Series of kind "${String(node['kind']).slice(0, 40)}" are not supported (EventsNode, ActionsNode).`,
        'not_supported',
      );
  });
  return { events, actions };
}

/** The fields every insight query node shares: dates, interval, filters, aggregation. */
export function commonQueryFields(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const dateRange = isJsonObject(query['dateRange']) ? query['dateRange'] : {};
  if (dateRange['date_from'] !== undefined) out['date_from'] = dateRange['date_from'];
  if (dateRange['date_to'] !== undefined) out['date_to'] = dateRange['date_to'];
  if (dateRange['explicitDate'] !== undefined) out['explicit_date'] = dateRange['explicitDate'];
  if (query['interval'] !== undefined) out['interval'] = query['interval'];
  if (query['properties'] !== undefined) out['properties'] = query['properties'];
  if (query['filterTestAccounts'] !== undefined) out['filter_test_accounts'] = query['filterTestAccounts'];
  if (query['aggregation_group_type_index'] !== undefined) out['aggregation_group_type_index'] = query['aggregation_group_type_index'];
  if (isJsonObject(query['breakdownFilter'])) Object.assign(out, query['breakdownFilter']);
  return out;
}
