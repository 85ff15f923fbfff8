import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ChartSkeleton, ConfirmDelete, Empty, ErrorState, LoadFailure, Loading, useSaveStatus } from '../components';
import { takeEarlyRequest } from '../early-requests';
import { afterFirstResult, useHoldUntilFirstResult } from '../first-result';
import { formatTime } from '../format';
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
  /** Computed by the dashboard's retrieve: `result`, `last_refresh` (when), `is_cached`. */
  insight: (Insight & { dashboards?: number[]; last_refresh?: string | null; is_cached?: boolean }) | null;
  /** The tile's query was refused (an action deleted since, an answer too large). */
  error?: { code: string; detail: string } | null;
}

/** Tiles in reading order of their saved grid positions (PostHog's 12-column `sm` layout); unplaced ones last. */
function byLayout(a: Tile, b: Tile): number {
  const at = (t: Tile) => [t.layouts?.sm?.y ?? Number.MAX_SAFE_INTEGER, t.layouts?.sm?.x ?? 0, t.id] as const;
  const [ay, ax, aid] = at(a);
  const [by, bx, bid] = at(b);
  return ay - by || ax - bx || aid - bid;
}

/** How many tiles the page asks for at once, as the server computes a dashboard's (TILE_CONCURRENCY). */
const TILES_AT_ONCE = 3;

type TileInsight = NonNullable<Tile['insight']>;

export function DashboardPage({ projectId, id, timezone }: { projectId: number; id: string; timezone: string }) {
  const [dashboard, setDashboard] = useState<Dashboard | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const saving = useSaveStatus();
  const [refreshing, setRefreshing] = useState(false);
  /** Tiles whose insight is being computed on its own; a failure stays on its tile. */
  const [computing, setComputing] = useState<ReadonlySet<number>>(new Set());
  const [tileErrors, setTileErrors] = useState<ReadonlyMap<number, unknown>>(new Map());
  const path = `/api/environments/${projectId}/dashboards/${encodeURIComponent(id)}/`;
  const settled = error !== null || (dashboard !== null && computing.size === 0);
  // The form's list of insights waits until the tiles are drawn: it would queue before their queries.
  useHoldUntilFirstResult(settled);
  const putInsight = (insight: TileInsight) =>
    setDashboard((current) => current && { ...current, tiles: current.tiles?.map((t) => (t.insight?.id === insight.id ? { ...t, insight } : t)) });
  /**
   * Draws the dashboard from what the server's cache holds (PostHog's force_cache: nothing is
   * computed), then asks for each tile it did not hold on its own (with `refresh`, every tile,
   * computed again), in reading order: each tile is drawn when its own query returns, not when
   * the slowest does. The first has the engine to itself (on one embedded engine, queries beside
   * it would only slow it), the rest go a few at a time.
   */
  const load = async (refresh = false) => {
    try {
      const url = `${path}?refresh=force_cache`;
      // The first read may have been started at boot, beside the user (early-requests.ts).
      const loaded = await (takeEarlyRequest<Dashboard>('GET', url, undefined) ?? api<Dashboard>(url));
      const missing = (loaded.tiles ?? [])
        .filter((t) => t.insight !== null && (refresh || (!t.error && (t.insight.result === null || t.insight.result === undefined))))
        .sort(byLayout)
        .map((t) => t.insight!.id);
      setComputing(new Set(missing));
      setTileErrors(new Map());
      setDashboard(loaded);
      setName(loaded.name);
      const next = missing.slice();
      const compute = (insightId: number) =>
        api<TileInsight>(`/api/environments/${projectId}/insights/${insightId}/?from_dashboard=${loaded.id}${refresh ? '&refresh=true' : ''}`)
          .then(putInsight)
          .catch((failure) => setTileErrors((errors) => new Map(errors).set(insightId, failure)))
          .finally(() =>
            setComputing((ids) => {
              const rest = new Set(ids);
              rest.delete(insightId);
              return rest;
            }),
          );
      const worker = async () => {
        for (let insightId = next.shift(); insightId !== undefined; insightId = next.shift()) await compute(insightId);
      };
      const first = next.shift();
      if (first !== undefined) await compute(first);
      await Promise.all(Array.from({ length: Math.min(TILES_AT_ONCE, next.length) }, worker));
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => {
    void load();
  }, [path]);
  const refreshAll = () => {
    setRefreshing(true);
    load(true).finally(() => setRefreshing(false));
  };
  if (error)
    return (
      <LoadFailure
        error={error}
        retry={() => (setError(null), load())}
        what="No dashboard with this id exists in this project."
        back={{ href: '/dashboards', label: 'Back to dashboards' }}
      />
    );
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
    // The other tiles come from the cache (or are computed on their own, each drawn when done).
    void load();
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
      <p class="hint computed-at">
        Each tile says when it was computed (results are kept for a while); dates in {timezone}.{' '}
        <button type="button" class="secondary" onClick={refreshAll} disabled={refreshing}>
          {refreshing ? 'Computing every tile…' : 'Refresh all tiles'}
        </button>
      </p>
      <AddInsight projectId={projectId} dashboardId={dashboard.id} onAdded={() => load()} />
      {tiles.length === 0 ? <Empty>No insights on this dashboard yet: add one above, or save a trend or funnel and pick this dashboard.</Empty> : null}
      <div class="tiles">
        {tiles.map((tile) => (
          <InsightTile
            key={tile.id}
            tile={tile}
            timezone={timezone}
            computing={computing.has(tile.insight!.id)}
            failure={tileErrors.get(tile.insight!.id) ?? null}
            onRemove={() => removeTile(tile)}
          />
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

/** A saved insight not on this dashboard yet, put on it (its `dashboards` list grows by this one: no copy is made). */
function AddInsight({ projectId, dashboardId, onAdded }: { projectId: number; dashboardId: number; onAdded: () => void }) {
  const [insights, setInsights] = useState<Insight[]>([]);
  const [chosen, setChosen] = useState('');
  const saving = useSaveStatus();
  useEffect(() => {
    afterFirstResult(() => api<Page<Insight>>(`/api/environments/${projectId}/insights/?saved=true&limit=200`))
      .then((page) => setInsights(page.results))
      .catch(() => setInsights([]));
  }, [projectId, dashboardId]);
  const offered = insights.filter((i) => !(i.dashboards ?? []).includes(dashboardId));
  // Every saved insight on it already: only the last add's outcome is left to say.
  if (offered.length === 0) return <p class="hint">{saving.line}</p>;
  const add = (event: Event) => {
    event.preventDefault();
    const insight = offered.find((i) => String(i.id) === chosen);
    if (!insight) return;
    void saving.run(async () => {
      const saved = await api<Insight>(`/api/environments/${projectId}/insights/${insight.id}/`, {
        method: 'PATCH',
        body: { dashboards: [...(insight.dashboards ?? []), dashboardId] },
      });
      setInsights(insights.map((i) => (i.id === saved.id ? saved : i)));
      setChosen('');
      onAdded();
      return `Added “${insightName(saved)}”.`;
    });
  };
  return (
    <form class="filters" onSubmit={add} aria-label="Add an insight to this dashboard">
      <label>
        Saved insight
        <select name="add_insight" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
          <option value="">Choose an insight…</option>
          {offered.map((i) => (
            <option key={i.id} value={String(i.id)}>
              {insightName(i)}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="secondary" disabled={!chosen}>
        Add to this dashboard
      </button>
      {saving.line}
    </form>
  );
}

/** One saved insight as the dashboard's retrieve computed it, in the same view its builder shows; wide tiles span both columns. */
function InsightTile({
  tile,
  timezone,
  computing,
  failure,
  onRemove,
}: {
  tile: Tile;
  timezone: string;
  /** Its insight is being computed on its own (the dashboard's read found it in no cache). */
  computing: boolean;
  /** Computing it on its own failed. */
  failure: unknown;
  onRemove: () => Promise<void>;
}) {
  const insight = tile.insight!;
  const name = insightName(insight);
  const [error, setError] = useState<unknown>(null);
  const [removing, setRemoving] = useState(false);
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
      <p class="hint" data-testid="tile-computed-at" data-last-refresh={insight.last_refresh ?? ''}>
        {computing
          ? insight.result === null || insight.result === undefined
            ? 'Computing…'
            : 'Refreshing…'
          : insight.last_refresh
            ? `Computed ${formatTime(insight.last_refresh, timezone)}${insight.is_cached ? ' (from the cache)' : ''}`
            : 'Not computed'}
      </p>
      {error || failure ? (
        <ErrorState error={error ?? failure} />
      ) : tile.error ? (
        <ErrorState error={new Error(tile.error.detail)} />
      ) : computing && (insight.result === null || insight.result === undefined) ? (
        <ChartSkeleton what={name} />
      ) : insight.result === null || insight.result === undefined ? (
        <Empty>Not computed on this read: open the insight to see it.</Empty>
      ) : (
        <InsightResult filters={insight.filters ?? {}} result={insight.result} timezone={timezone} table={insight} />
      )}
    </article>
  );
}
