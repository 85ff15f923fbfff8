import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, Loading, useSaveStatus } from '../components';
import { funnelFilters, funnelQueryFromFilters, trendFilters, trendQueryFromFilters } from '../insight-query';
import { linkHandler, navigate } from '../router';
import { insightName, type Insight } from '../saved-insight';
import { InsightResult } from './insights';

interface Dashboard {
  id: number;
  name: string;
  description: string;
  tiles?: Tile[];
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

interface Tile {
  id: number;
  layouts?: { sm?: { x?: number; y?: number; w?: number; h?: number } } | null;
  insight: (Insight & { dashboards?: number[] }) | null;
}

/** Tiles in reading order of their saved grid positions (PostHog's 12-column `sm` layout); unplaced ones last. */
function byLayout(a: Tile, b: Tile): number {
  const at = (t: Tile) => [t.layouts?.sm?.y ?? Number.MAX_SAFE_INTEGER, t.layouts?.sm?.x ?? 0, t.id] as const;
  const [ay, ax, aid] = at(a);
  const [by, bx, bid] = at(b);
  return ay - by || ax - bx || aid - bid;
}

export function DashboardPage({ projectId, id, timezone }: { projectId: number; id: string; timezone: string }) {
  const [dashboard, setDashboard] = useState<Dashboard | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const saving = useSaveStatus();
  const path = `/api/environments/${projectId}/dashboards/${encodeURIComponent(id)}/`;
  const load = () =>
    api<Dashboard>(path)
      .then((loaded) => {
        setDashboard(loaded);
        setName(loaded.name);
      })
      .catch(setError);
  useEffect(() => {
    load();
  }, [path]);
  if (error) return <ErrorState error={error} retry={() => (setError(null), load())} />;
  if (!dashboard) return <Loading what="the dashboard" />;
  const tiles = (dashboard.tiles ?? []).filter((t) => t.insight !== null).sort(byLayout);
  const rename = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      const saved = await api<Dashboard>(path, { method: 'PATCH', body: { name } });
      setDashboard({ ...dashboard, name: saved.name });
      return 'Saved.';
    });
  };
  // A tile goes by taking this dashboard off its insight's list of dashboards.
  const removeTile = async (tile: Tile) => {
    const insight = tile.insight!;
    await api(`/api/environments/${projectId}/insights/${insight.id}/`, {
      method: 'PATCH',
      body: { dashboards: (insight.dashboards ?? []).filter((d) => d !== dashboard.id) },
    });
    await load();
  };
  return (
    <section aria-labelledby="dashboard-title">
      <p>
        <a href="/dashboards" onClick={linkHandler('/dashboards')}>
          ← Dashboards
        </a>
      </p>
      <h1 id="dashboard-title">{dashboard.name}</h1>
      <form class="filters" onSubmit={rename} aria-label="Rename dashboard">
        <label>
          Dashboard name
          <input name="dashboard_name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" class="secondary">
          Rename
        </button>
        {saving.line}
      </form>
      <p class="hint">Tiles are computed now; dates in {timezone}.</p>
      {tiles.length === 0 ? <Empty>No insights on this dashboard yet: save a trend or funnel and pick this dashboard.</Empty> : null}
      <div class="tiles">
        {tiles.map((tile) => (
          <InsightTile key={tile.id} projectId={projectId} tile={tile} timezone={timezone} onRemove={() => removeTile(tile)} />
        ))}
      </div>
      <p />
      <ConfirmDelete
        what="this dashboard"
        onConfirm={async () => {
          await api(path, { method: 'PATCH', body: { deleted: true } });
          navigate('/dashboards');
        }}
      >
        <p class="hint">The insights on it stay saved.</p>
      </ConfirmDelete>
    </section>
  );
}

/** One saved insight, computed now from its filters, in the same view its builder shows; wide tiles span both columns. */
function InsightTile({ projectId, tile, timezone, onRemove }: { projectId: number; tile: Tile; timezone: string; onRemove: () => Promise<void> }) {
  const insight = tile.insight!;
  const name = insightName(insight);
  const [result, setResult] = useState<unknown>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [removing, setRemoving] = useState(false);
  useEffect(() => {
    const filters = insight.filters ?? {};
    const funnel = filters['insight'] === 'FUNNELS' ? funnelQueryFromFilters(filters) : null;
    const trend = funnel ? null : trendQueryFromFilters(filters);
    const request = funnel
      ? api<{ result: unknown }>(`/api/environments/${projectId}/insights/funnel/`, { method: 'POST', body: funnelFilters(funnel) })
      : trend
        ? api<{ result: unknown }>(`/api/environments/${projectId}/insights/trend/`, { method: 'POST', body: trendFilters(trend) })
        : Promise.resolve({ result: null });
    request.then((answer) => setResult(answer.result)).catch(setError);
  }, [projectId, insight.id]);
  const wide = (tile.layouts?.sm?.w ?? 6) > 6;
  return (
    <article class={wide ? 'tile wide' : 'tile'} aria-label={name} data-testid="dashboard-tile" data-insight={name}>
      <div class="tile-head">
        <h2>
          <a href={`/insights/${insight.id}`} onClick={linkHandler(`/insights/${insight.id}`)}>
            {name}
          </a>
        </h2>
        <button
          type="button"
          class="link"
          disabled={removing}
          aria-label={`Remove ${name} from this dashboard`}
          onClick={() => {
            setRemoving(true);
            onRemove().catch((failure) => (setError(failure), setRemoving(false)));
          }}
        >
          Remove
        </button>
      </div>
      {error ? (
        <ErrorState error={error} />
      ) : result === undefined ? (
        <Loading what={name} />
      ) : (
        <InsightResult filters={insight.filters ?? {}} result={result} timezone={timezone} table={insight} />
      )}
    </article>
  );
}
