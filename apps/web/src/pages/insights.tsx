import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Empty, ErrorState, Loading } from '../components';
import { formatTime } from '../format';
import { linkHandler, navigate } from '../router';
import { funnelQueryFromFilters } from './funnels';
import { trendQueryFromFilters } from './trends';

interface Insight {
  id: number;
  short_id: string;
  name: string | null;
  derived_name: string | null;
  filters: Record<string, unknown>;
  last_modified_at: string;
}

/** Where the app shows a saved insight (its query in the address), or null when no page can. */
export function insightPath(filters: Record<string, unknown>): string | null {
  if (filters['insight'] === 'FUNNELS') {
    const query = funnelQueryFromFilters(filters);
    return query ? `/funnels?q=${encodeURIComponent(JSON.stringify(query))}` : null;
  }
  if (filters['insight'] === 'TRENDS' || filters['insight'] === undefined) {
    const query = trendQueryFromFilters(filters);
    return query ? `/trends?q=${encodeURIComponent(JSON.stringify(query))}` : null;
  }
  return null;
}

export function InsightsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  const [insights, setInsights] = useState<Insight[] | null>(null);
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
  return (
    <section aria-labelledby="insights-title">
      <h1 id="insights-title">Saved insights</h1>
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
        <div class="table-scroll">
          <table class="list" data-testid="insights-table">
            <caption class="sr-only">Saved insights</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Last modified ({timezone})</th>
              </tr>
            </thead>
            <tbody>
              {insights.map((insight) => {
                const path = insightPath(insight.filters ?? {});
                const name = insight.name || insight.derived_name || `Insight ${insight.short_id}`;
                return (
                  <tr key={insight.id}>
                    <td>
                      {path ? (
                        <a href={path} onClick={linkHandler(path)}>
                          {name}
                        </a>
                      ) : (
                        <span title="This insight uses features the app cannot show yet">{name}</span>
                      )}
                    </td>
                    <td>{insight.filters?.['insight'] === 'FUNNELS' ? 'Funnel' : insight.filters?.['insight'] === 'TRENDS' ? 'Trend' : 'Other'}</td>
                    <td>{formatTime(insight.last_modified_at, timezone)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** Saves what a builder shows as a named insight. */
export function SaveInsight({ projectId, filters }: { projectId: number; filters: Record<string, unknown> }) {
  const [name, setName] = useState('');
  const [dashboards, setDashboards] = useState<{ id: number; name: string }[]>([]);
  const [dashboard, setDashboard] = useState('');
  useEffect(() => {
    api<Page<{ id: number; name: string }>>(`/api/environments/${projectId}/dashboards/?limit=100`)
      .then((page) => setDashboards(page.results))
      .catch(() => setDashboards([]));
  }, [projectId]);
  const [status, setStatus] = useState('');
  const [failed, setFailed] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setStatus('Saving…');
    setFailed(false);
    try {
      await api(`/api/environments/${projectId}/insights/`, {
        method: 'POST',
        body: { name, filters, saved: true, dashboards: dashboard ? [Number(dashboard)] : undefined },
      });
      setStatus(`Saved as “${name}”.`);
      setName('');
    } catch (failure) {
      setFailed(true);
      setStatus((failure as Error).message);
    }
  };
  return (
    <form class="filters save-insight" onSubmit={save}>
      <label>
        Insight name
        <input name="insight_name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {dashboards.length > 0 ? (
        <label>
          Add to dashboard
          <select name="dashboard" value={dashboard} onChange={(e) => setDashboard(e.currentTarget.value)}>
            <option value="">None</option>
            {dashboards.map((d) => (
              <option key={d.id} value={String(d.id)}>
                {d.name}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <button type="submit" class="secondary">
        Save as insight
      </button>
      <span role="status" aria-live="polite" class={failed ? 'error' : undefined}>
        {status}
      </span>
    </form>
  );
}
