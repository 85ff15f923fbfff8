import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, ListView, LoadFailure, Loading, useSaveStatus } from '../components';
import { formatTime } from '../format';
import { funnelQueryFromFilters, trendQueryFromFilters } from '../insight-query';
import { linkHandler, navigate } from '../router';
import { RowsTable } from '../rows-table';
import { insightName, sqlPathOf, type Insight } from '../saved-insight';
import { ComputedAt, describeRange } from '../query-builder';
import { funnelAnswer, FunnelResultView } from './funnels';
import { LifecycleResultView, lifecycleFormFromFilters } from './lifecycle';
import { PathsResultView, pathsQueryFromFilters } from './paths';
import { RetentionResultView, retentionFormFromFilters } from './retention';
import { StickinessResultView, stickinessFormFromFilters } from './stickiness';
import { TrendView, type TrendSeries } from './trends';

/**
 * The kind a saved insight's legacy filters run as: their `insight` (TRENDS when absent), a TRENDS
 * one shown as stickiness or lifecycle (`shown_as`) being that kind, as the API reads them
 * (legacy-trend-kind.ts).
 */
function legacyKind(filters: Record<string, unknown> | undefined): string {
  const insight = filters?.['insight'] ?? 'TRENDS';
  if (insight === 'TRENDS' && filters?.['shown_as'] === 'Stickiness') return 'STICKINESS';
  if (insight === 'TRENDS' && filters?.['shown_as'] === 'Lifecycle') return 'LIFECYCLE';
  return typeof insight === 'string' ? insight : 'OTHER';
}

const KIND_NAMES: Record<string, string> = {
  FUNNELS: 'Funnel',
  PATHS: 'Paths',
  RETENTION: 'Retention',
  STICKINESS: 'Stickiness',
  LIFECYCLE: 'Lifecycle',
  TRENDS: 'Trend',
};

const insightKind = (filters: Record<string, unknown> | undefined) => KIND_NAMES[legacyKind(filters)] ?? 'Other';

/** Where the app shows a saved insight (its query in the address), or null when no page can. */
export function insightPath(filters: Record<string, unknown>, editing?: number): string | null {
  const suffix = editing === undefined ? '' : `&insight=${editing}`;
  const at = (page: string, query: unknown) => `/${page}?q=${encodeURIComponent(JSON.stringify(query))}${suffix}`;
  switch (legacyKind(filters)) {
    case 'FUNNELS': {
      const query = funnelQueryFromFilters(filters);
      return query ? at('funnels', query) : null;
    }
    case 'PATHS':
      return at('paths', pathsQueryFromFilters(filters));
    case 'RETENTION':
      return at('retention', retentionFormFromFilters(filters));
    case 'STICKINESS':
      return at('stickiness', stickinessFormFromFilters(filters));
    case 'LIFECYCLE':
      return at('lifecycle', lifecycleFormFromFilters(filters));
    case 'TRENDS': {
      const query = trendQueryFromFilters(filters);
      return query ? at('trends', query) : null;
    }
    default:
      return null;
  }
}

export function InsightsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  const [insights, setInsights] = useState<Insight[] | null>(null);
  const [recent, setRecent] = useState<Insight[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setInsights(null);
    setError(null);
    const params = new URLSearchParams({ saved: 'true', limit: '100' });
    if (search) params.set('search', search);
    api<Page<Insight>>(`/api/environments/${projectId}/insights/?${params}`)
      .then((page) => setInsights(page.results))
      .catch(setError);
  }, [projectId, search]);
  useEffect(() => {
    api<Insight[]>(`/api/environments/${projectId}/insights/my_last_viewed/`)
      .then(setRecent)
      .catch(() => setRecent([]));
  }, [projectId]);
  return (
    <section aria-labelledby="insights-title">
      <h1 id="insights-title">Saved insights</h1>
      <h2 id="recent-title">Recently viewed</h2>
      {recent === null ? (
        <Loading what="recently viewed insights" />
      ) : recent.length === 0 ? (
        <Empty>Insights you open appear here.</Empty>
      ) : (
        <InsightList insights={recent} caption="Recently viewed insights" timezone={timezone} testId="recent-insights" />
      )}
      <h2 id="all-insights-title">All saved insights</h2>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(draft ? `/insights?search=${encodeURIComponent(draft)}` : '/insights');
        }}
      >
        <label>
          Search by name
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {error ? <ErrorState error={error} /> : null}
      {insights === null && !error ? <Loading what="saved insights" /> : null}
      {insights !== null && insights.length === 0 ? <Empty>No saved insights yet: build a trend or a funnel and save it.</Empty> : null}
      {insights !== null && insights.length > 0 ? (
        <InsightList insights={insights} caption="Saved insights" timezone={timezone} testId="insights-table" />
      ) : null}
    </section>
  );
}

/** Insights as a table of links to their pages: the saved list, and the recently viewed one (most recent first). */
function InsightList({ insights, caption, timezone, testId }: { insights: Insight[]; caption: string; timezone: string; testId: string }) {
  return (
    <ListView
      items={insights}
      error={null}
      what="insights"
      empty={null}
      caption={caption}
      testId={testId}
      head={['Name', 'Type', `Last modified (${timezone})`]}
      row={(insight) => (
        <tr key={insight.id} data-insight={insightName(insight)}>
          <td>
            <a href={`/insights/${insight.id}`} onClick={linkHandler(`/insights/${insight.id}`)}>
              {insightName(insight)}
            </a>
          </td>
          <td>{insightKind(insight.filters)}</td>
          <td>{formatTime(insight.last_modified_at, timezone)}</td>
        </tr>
      )}
    />
  );
}

/** A saved insight's result drawn as its builder draws it, or null when no view can show it. */
export function InsightResult({
  filters,
  result,
  timezone,
  table,
}: {
  filters: Record<string, unknown>;
  result: unknown;
  timezone: string;
  /** A table insight's columns (its rows are `result`). */
  table?: Pick<Insight, 'columns' | 'types'>;
}) {
  if (Array.isArray(table?.columns) && Array.isArray(result)) {
    return <RowsTable columns={table.columns} types={table.types} results={result as unknown[][]} caption="Rows of the insight" />;
  }
  const kind = legacyKind(filters);
  if (kind === 'FUNNELS') {
    const query = funnelQueryFromFilters(filters);
    if (query) return <FunnelResultView answer={funnelAnswer(query.viz ?? 'steps', result)} timezone={timezone} interval={query.interval} />;
  } else if (kind === 'PATHS') {
    return <PathsResultView result={result} />;
  } else if (kind === 'RETENTION') {
    return <RetentionResultView result={result} filters={filters} timezone={timezone} />;
  } else if (kind === 'STICKINESS') {
    return <StickinessResultView result={result} />;
  } else if (kind === 'LIFECYCLE') {
    return <LifecycleResultView result={result} filters={filters} />;
  } else if (kind === 'TRENDS') {
    const query = trendQueryFromFilters(filters);
    if (query)
      return (
        <TrendView
          result={(result ?? []) as TrendSeries[]}
          display={query.display}
          interval={query.interval}
          timezone={timezone}
          rangeLabel={describeRange(query.date_from, query.date_to)}
        />
      );
  }
  return <Empty>This insight uses features the app cannot show yet.</Empty>;
}

/** One saved insight: opening it records the view (recently viewed); rename, describe, delete, or edit it in its builder. */
export function InsightPage({ projectId, timezone, id }: { projectId: number; timezone: string; id: string }) {
  const [insight, setInsight] = useState<Insight | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [refreshing, setRefreshing] = useState(false);
  const saving = useSaveStatus();
  const path = `/api/environments/${projectId}/insights/${encodeURIComponent(id)}/`;
  useEffect(() => {
    setInsight(null);
    setError(null);
    api<Insight>(path)
      .then((loaded) => {
        setInsight(loaded);
        setName(loaded.name ?? '');
        setDescription(loaded.description ?? '');
      })
      .catch(setError);
  }, [path]);
  // The retrieve answers the cached result; `refresh=true` computes it again.
  const refresh = () => {
    setRefreshing(true);
    api<Insight>(`${path}?refresh=true`)
      .then((loaded) => setInsight(loaded))
      .catch(setError)
      .finally(() => setRefreshing(false));
  };
  if (error)
    return (
      <LoadFailure
        error={error}
        retry={() => location.reload()}
        what="No insight with this id exists in this project."
        back={{ href: '/insights', label: 'Back to saved insights' }}
      />
    );
  if (!insight) return <Loading what="the insight" />;
  const builder = sqlPathOf(insight) ?? insightPath(insight.filters ?? {}, insight.id);
  const save = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      const saved = await api<Insight>(path, { method: 'PATCH', body: { name, description } });
      setInsight({ ...insight, name: saved.name, description: saved.description, last_modified_at: saved.last_modified_at });
      return 'Saved.';
    });
  };
  return (
    <section aria-labelledby="insight-title">
      <p>
        <a href="/insights" onClick={linkHandler('/insights')}>
          ← Saved insights
        </a>
      </p>
      <h1 id="insight-title">{insightName(insight)}</h1>
      <p class="hint">
        {insightKind(insight.filters)} · last modified {formatTime(insight.last_modified_at, timezone)} ({timezone})
        {builder ? (
          <>
            {' · '}
            <a href={builder} onClick={linkHandler(builder)}>
              Edit the query
            </a>
          </>
        ) : null}
      </p>
      <form class="filters" onSubmit={save} aria-label="Rename insight">
        <label>
          Name
          <input name="name" maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit">Save</button>
        {saving.line}
      </form>
      {insight.description ? <p>{insight.description}</p> : null}
      <AddToDashboard projectId={projectId} insight={insight} onChange={setInsight} />
      <ComputedAt lastRefresh={insight.last_refresh} isCached={insight.is_cached} timezone={timezone} onRefresh={refresh} refreshing={refreshing} />
      <InsightResult filters={insight.filters ?? {}} result={insight.result} timezone={timezone} table={insight} />
      <p />
      <ConfirmDelete
        what="this insight"
        onConfirm={async () => {
          await api(path, { method: 'PATCH', body: { deleted: true } });
          navigate('/insights');
        }}
      />
    </section>
  );
}

const NEW_DASHBOARD = 'new';

/**
 * "Add to dashboard": the insight itself goes on a dashboard picked from the project's, or on one
 * created here; its `dashboards` list grows, so the insight is never copied.
 */
function AddToDashboard({ projectId, insight, onChange }: { projectId: number; insight: Insight; onChange: (insight: Insight) => void }) {
  const [dashboards, setDashboards] = useState<{ id: number; name: string }[]>([]);
  const [chosen, setChosen] = useState('');
  const [newName, setNewName] = useState('');
  const saving = useSaveStatus();
  useEffect(() => {
    api<Page<{ id: number; name: string }>>(`/api/environments/${projectId}/dashboards/?limit=100`)
      .then((page) => setDashboards(page.results))
      .catch(() => setDashboards([]));
  }, [projectId]);
  const on = insight.dashboards ?? [];
  const offered = dashboards.filter((d) => !on.includes(d.id));
  const add = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      let target = dashboards.find((d) => String(d.id) === chosen);
      if (chosen === NEW_DASHBOARD) {
        const created = await api<{ id: number; name: string }>(`/api/environments/${projectId}/dashboards/`, { method: 'POST', body: { name: newName } });
        // From the list as it is now: the project's list may have arrived while this was sent.
        setDashboards((list) => [...list, created]);
        target = created;
      }
      if (!target) return 'Choose a dashboard.';
      const saved = await api<Insight>(`/api/environments/${projectId}/insights/${insight.id}/`, {
        method: 'PATCH',
        body: { dashboards: [...on, target.id] },
      });
      onChange({ ...insight, dashboards: saved.dashboards });
      setChosen('');
      setNewName('');
      return `Added to “${target.name}”.`;
    });
  };
  return (
    <form class="filters" onSubmit={add} aria-label="Dashboards of this insight">
      {on.length > 0 ? (
        <p class="hint" data-testid="insight-dashboards">
          On{' '}
          {on.map((id, i) => {
            const dashboard = dashboards.find((d) => d.id === id);
            return (
              <span key={id}>
                {i > 0 ? ', ' : ''}
                <a href={`/dashboards/${id}`} onClick={linkHandler(`/dashboards/${id}`)}>
                  {dashboard?.name ?? `dashboard ${id}`}
                </a>
              </span>
            );
          })}
        </p>
      ) : null}
      <label>
        Add to dashboard
        <select name="add_to_dashboard" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
          <option value="">Choose a dashboard…</option>
          {offered.map((d) => (
            <option key={d.id} value={String(d.id)}>
              {d.name}
            </option>
          ))}
          <option value={NEW_DASHBOARD}>New dashboard…</option>
        </select>
      </label>
      {chosen === NEW_DASHBOARD ? (
        <label>
          New dashboard name
          <input name="new_dashboard_name" required maxLength={400} value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
        </label>
      ) : null}
      <button type="submit" class="secondary" disabled={!chosen}>
        Add
      </button>
      {saving.line}
    </form>
  );
}
