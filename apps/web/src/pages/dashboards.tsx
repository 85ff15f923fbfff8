import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Empty, ErrorState, Loading } from '../components';
import { linkHandler, navigate } from '../router';
import { funnelFilters, funnelQueryFromFilters, FunnelView, type FunnelStep } from './funnels';
import { insightPath } from './insights';
import { trendFilters, trendQueryFromFilters, TrendView, type TrendSeries } from './trends';

interface Dashboard {
  id: number;
  name: string;
  description: string;
  tiles?: { id: number; insight: { id: number; name: string | null; derived_name: string | null; filters: Record<string, unknown> } | null }[];
}

export function DashboardsPage({ projectId }: { projectId: number }) {
  const [dashboards, setDashboards] = useState<Dashboard[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  useEffect(() => {
    api<Page<Dashboard>>(`/api/environments/${projectId}/dashboards/?limit=100`)
      .then((page) => setDashboards(page.results))
      .catch(setError);
  }, [projectId]);
  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const created = await api<Dashboard>(`/api/environments/${projectId}/dashboards/`, { method: 'POST', body: { name } });
      navigate(`/dashboards/${created.id}`);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section aria-labelledby="dashboards-title">
      <h1 id="dashboards-title">Dashboards</h1>
      <form class="filters" onSubmit={create}>
        <label>
          New dashboard name
          <input name="dashboard_name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit">Create dashboard</button>
      </form>
      {error ? <ErrorState error={error} /> : null}
      {dashboards === null && !error ? <Loading what="dashboards" /> : null}
      {dashboards !== null && dashboards.length === 0 ? <Empty>No dashboards yet. Create one, then add insights to it when you save them.</Empty> : null}
      {dashboards !== null && dashboards.length > 0 ? (
        <ul class="cards" data-testid="dashboards-list">
          {dashboards.map((d) => (
            <li key={d.id}>
              <a href={`/dashboards/${d.id}`} onClick={linkHandler(`/dashboards/${d.id}`)}>
                {d.name}
              </a>
              {d.description ? <span class="hint"> · {d.description}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

export function DashboardPage({ projectId, id }: { projectId: number; id: string }) {
  const [dashboard, setDashboard] = useState<Dashboard | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api<Dashboard>(`/api/environments/${projectId}/dashboards/${encodeURIComponent(id)}/`)
      .then(setDashboard)
      .catch(setError);
  }, [projectId, id]);
  if (error) return <ErrorState error={error} />;
  if (!dashboard) return <Loading what="the dashboard" />;
  const tiles = (dashboard.tiles ?? []).filter((t) => t.insight !== null);
  return (
    <section aria-labelledby="dashboard-title">
      <p>
        <a href="/dashboards" onClick={linkHandler('/dashboards')}>
          ← Dashboards
        </a>
      </p>
      <h1 id="dashboard-title">{dashboard.name}</h1>
      {tiles.length === 0 ? <Empty>No insights on this dashboard yet: save a trend or funnel and pick this dashboard.</Empty> : null}
      <div class="tiles">
        {tiles.map((tile) => (
          <InsightTile key={tile.id} projectId={projectId} insight={tile.insight!} />
        ))}
      </div>
    </section>
  );
}

/** One saved insight, computed now from its filters, in the same view its builder shows. */
function InsightTile({ projectId, insight }: { projectId: number; insight: NonNullable<NonNullable<Dashboard['tiles']>[number]['insight']> }) {
  const name = insight.name || insight.derived_name || 'Untitled insight';
  const path = insightPath(insight.filters ?? {});
  const [view, setView] = useState<preact.JSX.Element | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const filters = insight.filters ?? {};
    const funnel = filters['insight'] === 'FUNNELS' ? funnelQueryFromFilters(filters) : null;
    const trend = funnel ? null : trendQueryFromFilters(filters);
    if (funnel) {
      api<{ result: FunnelStep[] }>(`/api/environments/${projectId}/insights/funnel/`, { method: 'POST', body: funnelFilters(funnel) })
        .then((answer) => setView(<FunnelView steps={answer.result} />))
        .catch(setError);
    } else if (trend) {
      api<{ result: TrendSeries[] }>(`/api/environments/${projectId}/insights/trend/`, { method: 'POST', body: trendFilters(trend) })
        .then((answer) => setView(<TrendView result={answer.result} display={trend.display} />))
        .catch(setError);
    } else setError(new Error('This insight uses features the app cannot show yet.'));
  }, [projectId, insight.id]);
  return (
    <article class="tile" aria-label={name} data-testid="dashboard-tile">
      <h2>
        {path ? (
          <a href={path} onClick={linkHandler(path)}>
            {name}
          </a>
        ) : (
          name
        )}
      </h2>
      {error ? <ErrorState error={error} /> : (view ?? <Loading what={name} />)}
    </article>
  );
}
