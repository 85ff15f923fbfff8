import { useMemo, useState } from 'preact/hooks';
import { CommitInput, Empty, ErrorState, Loading, NameOptions } from '../components';
import { formatNumber } from '../format';
import type { PropertyFilter } from '../property-filter';
import { PropertyFiltersEditor } from '../property-filters-editor';
import { BUILDER_FILTERS, DateRangePicker, formFromAddress, SaveInsight, useEventNames } from '../query-builder';
import { linkHandler, navigate } from '../router';
import { usePost } from '../use-post';
import { formatDuration } from './funnels';
import { itemOf, PathsSankey, type PathsEdge } from './paths-sankey';

const PATH_TYPES = [
  { value: '$pageview', label: 'Page views (URL)' },
  { value: '$screen', label: 'Screen views' },
  { value: 'custom_event', label: 'Custom events' },
] as const;

/** The paths builder's state, kept in the address (`?q=`). */
export interface PathsBuilderQuery {
  types: string[];
  start?: string;
  end?: string;
  step_limit: number;
  edge_limit: number;
  date_from: string;
  date_to?: string;
  exclude?: string[];
  groupings?: string[];
  properties?: PropertyFilter[];
  test_accounts?: boolean;
}

const DEFAULT_QUERY: PathsBuilderQuery = { types: ['$pageview'], step_limit: 5, edge_limit: 50, date_from: '-7d' };

function pathsQueryFromUrl(url: URL): PathsBuilderQuery {
  const query = formFromAddress(url, DEFAULT_QUERY);
  return Array.isArray(query.types) ? query : { ...query, types: DEFAULT_QUERY.types };
}

/** The legacy PATHS filter the builder asks insights/path/ for (and saves). */
export function pathsFilters(q: PathsBuilderQuery): Record<string, unknown> {
  return {
    insight: 'PATHS',
    include_event_types: q.types,
    start_point: q.start || undefined,
    end_point: q.end || undefined,
    step_limit: q.step_limit,
    edge_limit: q.edge_limit,
    date_from: q.date_from,
    date_to: q.date_to || undefined,
    exclude_events: q.exclude?.length ? q.exclude : undefined,
    path_groupings: q.groupings?.length ? q.groupings : undefined,
    properties: q.properties?.length ? q.properties : undefined,
    filter_test_accounts: q.test_accounts || undefined,
  };
}

/** A saved PATHS filter read back into the builder's state (what the builder does not edit is left out). */
export function pathsQueryFromFilters(filters: Record<string, unknown>): PathsBuilderQuery {
  const texts = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined);
  const number = (value: unknown, fallback: number) => (typeof value === 'number' && value > 0 ? value : fallback);
  return {
    types: texts(filters['include_event_types']) ?? [],
    start: typeof filters['start_point'] === 'string' ? filters['start_point'] : undefined,
    end: typeof filters['end_point'] === 'string' ? filters['end_point'] : undefined,
    step_limit: number(filters['step_limit'], DEFAULT_QUERY.step_limit),
    edge_limit: number(filters['edge_limit'], DEFAULT_QUERY.edge_limit),
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : DEFAULT_QUERY.date_from,
    exclude: texts(filters['exclude_events']),
    groupings: texts(filters['path_groupings']),
    properties: Array.isArray(filters['properties']) ? (filters['properties'] as PropertyFilter[]) : undefined,
    test_accounts: filters['filter_test_accounts'] === true || undefined,
  };
}

/** A paths answer (a saved insight's, a dashboard tile's) as the diagram and table, without the persons. */
export function PathsResultView({ result }: { result: unknown }) {
  const edges = (Array.isArray(result) ? result : []) as PathsEdge[];
  if (edges.length === 0) return <Empty>No paths in this date range.</Empty>;
  return (
    <>
      <PathsSankey edges={edges} selected={null} onSelect={() => undefined} />
      <PathsTable edges={edges} />
    </>
  );
}

/** The same query as a PathsQuery node (for the persons on an edge, an InsightActorsQuery over it). */
function pathsQueryNode(q: PathsBuilderQuery, keys: Record<string, string>): Record<string, unknown> {
  return {
    kind: 'PathsQuery',
    dateRange: { date_from: q.date_from, date_to: q.date_to },
    properties: q.properties ?? [],
    filterTestAccounts: q.test_accounts ?? false,
    pathsFilter: {
      includeEventTypes: q.types,
      startPoint: q.start || undefined,
      endPoint: q.end || undefined,
      stepLimit: q.step_limit,
      edgeLimit: q.edge_limit,
      excludeEvents: q.exclude ?? [],
      pathGroupings: q.groupings ?? [],
      ...keys,
    },
  };
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function PathsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const query = useMemo(() => pathsQueryFromUrl(url), [url.search]);
  const editing = url.searchParams.get('insight');
  const setQuery = (next: PathsBuilderQuery) =>
    navigate(`/paths?q=${encodeURIComponent(JSON.stringify(next))}${editing ? `&insight=${encodeURIComponent(editing)}` : ''}`, true);
  const eventNames = useEventNames(projectId);
  const asked = query.types.length > 0;
  const response = usePost<{ result: PathsEdge[] }>(`/api/environments/${projectId}/insights/path/`, asked ? JSON.stringify(pathsFilters(query)) : null);
  const [selected, setSelected] = useState<PathsEdge | null>(null);
  const toggleType = (type: string, on: boolean) =>
    setQuery({ ...query, types: on ? [...new Set([...query.types, type])] : query.types.filter((t) => t !== type) });

  return (
    <section aria-labelledby="paths-title">
      <h1 id="paths-title">Paths</h1>
      <NameOptions id="paths-item-names" names={eventNames} />
      <fieldset class="builder">
        <legend>What the paths go through</legend>
        <div class="filters">
          {PATH_TYPES.map((type) => (
            <label key={type.value} class="checkbox">
              <input
                type="checkbox"
                name={`type-${type.value}`}
                checked={query.types.includes(type.value)}
                onChange={(e) => toggleType(type.value, e.currentTarget.checked)}
              />
              {type.label}
            </label>
          ))}
        </div>
        <div class="filters">
          <label>
            Starts at
            <CommitInput
              name="start_point"
              list="paths-item-names"
              value={query.start ?? ''}
              placeholder="any"
              onCommit={(start) => setQuery({ ...query, start })}
            />
          </label>
          <label>
            Ends at
            <CommitInput name="end_point" list="paths-item-names" value={query.end ?? ''} placeholder="any" onCommit={(end) => setQuery({ ...query, end })} />
          </label>
          <label>
            Leave out (comma separated)
            <CommitInput name="exclude_events" value={(query.exclude ?? []).join(', ')} onCommit={(text) => setQuery({ ...query, exclude: list(text) })} />
          </label>
          <label>
            Group as one (comma separated, * matches anything)
            <CommitInput
              name="path_groupings"
              value={(query.groupings ?? []).join(', ')}
              placeholder="/blog/*"
              onCommit={(text) => setQuery({ ...query, groupings: list(text) })}
            />
          </label>
        </div>
        <PropertyFiltersEditor
          filters={query.properties ?? []}
          onChange={(properties) => setQuery({ ...query, properties })}
          label="Filters on every event"
          {...BUILDER_FILTERS}
          projectId={projectId}
        />
      </fieldset>
      <div class="filters">
        <label>
          Steps
          <select name="step_limit" value={String(query.step_limit)} onChange={(e) => setQuery({ ...query, step_limit: Number(e.currentTarget.value) })}>
            {Array.from({ length: 19 }, (_, i) => i + 2).map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          Most edges
          <select name="edge_limit" value={String(query.edge_limit)} onChange={(e) => setQuery({ ...query, edge_limit: Number(e.currentTarget.value) })}>
            {[10, 25, 50, 100, 250].map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <DateRangePicker
          dateFrom={query.date_from}
          dateTo={query.date_to}
          onChange={(range) => setQuery({ ...query, date_from: range.date_from, date_to: range.date_to })}
        />
        <label class="checkbox">
          <input
            type="checkbox"
            name="filter_test_accounts"
            checked={query.test_accounts ?? false}
            onChange={(e) => setQuery({ ...query, test_accounts: e.currentTarget.checked })}
          />
          Leave out test accounts
        </label>
      </div>
      <p class="hint">Dates in {timezone}. A session ends after 30 minutes without an event.</p>
      <SaveInsight projectId={projectId} filters={pathsFilters(query)} editing={editing} />
      {!asked ? (
        <Empty>Choose what the paths go through: page views, screens or custom events.</Empty>
      ) : response.error ? (
        <ErrorState error={response.error} />
      ) : response.answer === null ? (
        <Loading what="the paths" />
      ) : response.answer.result.length === 0 ? (
        <Empty>No paths in this date range.</Empty>
      ) : (
        <>
          <PathsSankey edges={response.answer.result} selected={selected} onSelect={setSelected} />
          <PathsTable edges={response.answer.result} onSelect={setSelected} />
        </>
      )}
      {selected ? <EdgePersons projectId={projectId} query={query} edge={selected} onClose={() => setSelected(null)} /> : null}
    </section>
  );
}

function PathsTable({ edges, onSelect }: { edges: PathsEdge[]; onSelect?: (edge: PathsEdge) => void }) {
  return (
    <div class="table-scroll paths-table">
      <table class="list" data-testid="paths-edges">
        <caption>Edges: the persons' steps from one item to the next</caption>
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">To</th>
            <th scope="col">Steps taken</th>
            <th scope="col">Average time</th>
            {onSelect ? (
              <th scope="col">
                <span class="sr-only">Persons</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {edges.map((edge) => (
            <tr key={`${edge.source}→${edge.target}`} data-source={edge.source} data-target={edge.target} data-value={edge.value}>
              <td>{edge.source}</td>
              <td>{edge.target}</td>
              <td>{formatNumber(edge.value)}</td>
              <td>{formatDuration(edge.average_conversion_time / 1000)}</td>
              {onSelect ? (
                <td>
                  <button type="button" class="secondary" onClick={() => onSelect(edge)} aria-label={`Persons from ${edge.source} to ${edge.target}`}>
                    Persons
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface ActorsAnswer {
  results: [{ id: string; properties: Record<string, unknown>; distinct_ids: string[] }][];
  hasMore: boolean;
}

/** The persons who took an edge: an ActorsQuery over an InsightActorsQuery of the same PathsQuery. */
function EdgePersons({ projectId, query, edge, onClose }: { projectId: number; query: PathsBuilderQuery; edge: PathsEdge; onClose: () => void }) {
  const body = JSON.stringify({
    query: {
      kind: 'ActorsQuery',
      select: ['person'],
      source: { kind: 'InsightActorsQuery', source: pathsQueryNode(query, { pathStartKey: edge.source, pathEndKey: edge.target }) },
    },
  });
  const { answer, error } = usePost<ActorsAnswer>(`/api/environments/${projectId}/query/`, body);
  return (
    <section class="edge-persons" aria-labelledby="edge-persons-title" data-testid="edge-persons">
      <h2 id="edge-persons-title">
        Persons from {itemOf(edge.source)} to {itemOf(edge.target)}
      </h2>
      <button type="button" class="secondary" onClick={onClose}>
        Close
      </button>
      {error ? (
        <ErrorState error={error} />
      ) : answer === null ? (
        <Loading what="the persons" />
      ) : answer.results.length === 0 ? (
        <Empty>Nobody.</Empty>
      ) : (
        <ul>
          {answer.results.map(([person]) => {
            const name = String(person.properties?.['email'] ?? person.distinct_ids?.[0] ?? person.id);
            return (
              <li key={person.id} data-person={person.id}>
                <a href={`/persons/${encodeURIComponent(person.id)}`} onClick={linkHandler(`/persons/${encodeURIComponent(person.id)}`)}>
                  {name}
                </a>
              </li>
            );
          })}
          {answer.hasMore ? <li>… and more</li> : null}
        </ul>
      )}
    </section>
  );
}
