import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { afterFirstResult } from '../first-result';
import { useSaveStatus } from '../components';
import { insightName, type Insight } from '../saved-insight';

const NEW_DASHBOARD = 'new';

/** Saves what a builder shows as a named insight, onto a dashboard picked or created here. */
export function SaveInsight({ projectId, filters, editing }: { projectId: number; filters: Record<string, unknown>; editing?: string | null }) {
  const [name, setName] = useState('');
  const [dashboards, setDashboards] = useState<{ id: number; name: string }[]>([]);
  const [dashboard, setDashboard] = useState('');
  const [newDashboard, setNewDashboard] = useState('');
  useEffect(() => {
    afterFirstResult(() => api<Page<{ id: number; name: string }>>(`/api/environments/${projectId}/dashboards/?limit=100`))
      .then((page) => setDashboards(page.results))
      .catch(() => setDashboards([]));
  }, [projectId]);
  // The insight being edited, by name, so the page says which one a save changes.
  const [editingName, setEditingName] = useState<string | null>(null);
  useEffect(() => {
    setEditingName(null);
    if (!editing) return;
    afterFirstResult(() => api<Insight>(`/api/environments/${projectId}/insights/${encodeURIComponent(editing)}/`))
      .then((insight) => setEditingName(insightName(insight)))
      .catch(() => setEditingName(null));
  }, [projectId, editing]);
  const saving = useSaveStatus();
  const save = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      // "New dashboard…": created first, then the insight is saved onto it.
      let target = dashboard;
      if (dashboard === NEW_DASHBOARD) {
        const created = await api<{ id: number; name: string }>(`/api/environments/${projectId}/dashboards/`, { method: 'POST', body: { name: newDashboard } });
        // From the list as it is now: the project's list may have arrived while this was sent.
        setDashboards((list) => [...list, created]);
        target = String(created.id);
      }
      await api(`/api/environments/${projectId}/insights/`, {
        method: 'POST',
        body: { name, filters, saved: true, dashboards: target ? [Number(target)] : undefined },
      });
      setName('');
      setDashboard(target);
      setNewDashboard('');
      return `Saved as “${name}”.`;
    });
  };
  const update = () =>
    saving.run(async () => {
      const saved = await api<Insight>(`/api/environments/${projectId}/insights/${encodeURIComponent(editing!)}/`, { method: 'PATCH', body: { filters } });
      return `Saved changes to “${insightName(saved)}”.`;
    });
  return (
    <form class="filters save-insight" onSubmit={save}>
      {editing ? (
        <p class="editing" data-testid="editing-insight">
          Editing <strong>{editingName ?? `insight ${editing}`}</strong>
        </p>
      ) : null}
      {editing ? (
        <button type="button" onClick={update}>
          Save changes to the insight
        </button>
      ) : null}
      <label>
        Insight name
        <input name="insight_name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Add to dashboard
        <select name="dashboard" value={dashboard} onChange={(e) => setDashboard(e.currentTarget.value)}>
          <option value="">None</option>
          {dashboards.map((d) => (
            <option key={d.id} value={String(d.id)}>
              {d.name}
            </option>
          ))}
          <option value={NEW_DASHBOARD}>New dashboard…</option>
        </select>
      </label>
      {dashboard === NEW_DASHBOARD ? (
        <label>
          New dashboard name
          <input name="new_dashboard_name" required maxLength={400} value={newDashboard} onInput={(e) => setNewDashboard(e.currentTarget.value)} />
        </label>
      ) : null}
      <button type="submit" class="secondary">
        {editing ? 'Save as a new insight' : 'Save as insight'}
      </button>
      {saving.line}
    </form>
  );
}
