import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, Loading } from '../components';
import { linkHandler, navigate } from '../router';

interface FlagGroup {
  properties: unknown[];
  rollout_percentage: number | null;
  [key: string]: unknown;
}

interface Flag {
  id: number;
  key: string;
  name: string;
  active: boolean;
  filters: { groups?: FlagGroup[]; [key: string]: unknown };
}

function rolloutSummary(flag: Flag): string {
  const groups = flag.filters.groups ?? [];
  if (groups.length === 0) return 'No release conditions';
  return groups.map((g) => `${g.rollout_percentage ?? 100}%${g.properties.length ? ' of matching users' : ' of all users'}`).join('; ');
}

export function FlagsPage({ projectId, url }: { projectId: number; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  const [flags, setFlags] = useState<Flag[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    setFlags(null);
    setError(null);
    const params = new URLSearchParams({ limit: '100' });
    if (search) params.set('search', search);
    api<Page<Flag>>(`/api/projects/${projectId}/feature_flags/?${params}`)
      .then((page) => setFlags(page.results))
      .catch(setError);
  }, [projectId, search, attempt]);

  const toggle = async (flag: Flag) => {
    try {
      const updated = await api<Flag>(`/api/projects/${projectId}/feature_flags/${flag.id}/`, { method: 'PATCH', body: { active: !flag.active } });
      setFlags((current) => current?.map((f) => (f.id === flag.id ? updated : f)) ?? null);
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="flags-title">
      <h1 id="flags-title">Feature flags</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(draft ? `/feature_flags?search=${encodeURIComponent(draft)}` : '/feature_flags');
        }}
      >
        <label>
          Search by key or name
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {error ? <ErrorState error={error} retry={() => setAttempt(attempt + 1)} /> : null}
      {flags === null && !error ? <Loading what="feature flags" /> : null}
      {flags !== null && flags.length === 0 ? <Empty>{search ? `No flag matches “${search}”.` : 'No feature flags yet.'}</Empty> : null}
      {flags !== null && flags.length > 0 ? (
        <div class="table-scroll">
          <table class="list" data-testid="flags-table">
            <caption class="sr-only">Feature flags</caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Release</th>
                <th scope="col">Active</th>
              </tr>
            </thead>
            <tbody>
              {flags.map((flag) => (
                <tr key={flag.id} data-flag={flag.key}>
                  <td>
                    <a href={`/feature_flags/${flag.id}`} onClick={linkHandler(`/feature_flags/${flag.id}`)}>
                      <code>{flag.key}</code>
                    </a>
                  </td>
                  <td>{flag.name}</td>
                  <td>{rolloutSummary(flag)}</td>
                  <td>
                    <label class="switch">
                      <input type="checkbox" role="switch" checked={flag.active} onChange={() => toggle(flag)} aria-label={`${flag.key} active`} />
                      <span>{flag.active ? 'On' : 'Off'}</span>
                    </label>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** Edits what most changes are: the flag's name, whether it is active, and each condition set's rollout. */
export function FlagDetailPage({ projectId, id }: { projectId: number; id: string }) {
  const [flag, setFlag] = useState<Flag | null>(null);
  const [draft, setDraft] = useState<Flag | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string>('');
  useEffect(() => {
    api<Flag>(`/api/projects/${projectId}/feature_flags/${encodeURIComponent(id)}/`)
      .then((loaded) => {
        setFlag(loaded);
        setDraft(loaded);
      })
      .catch(setError);
  }, [projectId, id]);
  if (error && !flag) return <ErrorState error={error} />;
  if (!flag || !draft) return <Loading what="the flag" />;
  const groups = draft.filters.groups ?? [];
  const setRollout = (index: number, value: number) =>
    setDraft({ ...draft, filters: { ...draft.filters, groups: groups.map((g, i) => (i === index ? { ...g, rollout_percentage: value } : g)) } });
  const save = async (event: Event) => {
    event.preventDefault();
    setStatus('Saving…');
    setError(null);
    try {
      const saved = await api<Flag>(`/api/projects/${projectId}/feature_flags/${flag.id}/`, {
        method: 'PATCH',
        body: { name: draft.name, active: draft.active, filters: draft.filters },
      });
      setFlag(saved);
      setDraft(saved);
      setStatus('Saved.');
    } catch (failure) {
      setStatus('');
      setError(failure);
    }
  };
  return (
    <section aria-labelledby="flag-title">
      <p>
        <a href="/feature_flags" onClick={linkHandler('/feature_flags')}>
          ← Feature flags
        </a>
      </p>
      <h1 id="flag-title">
        <code>{flag.key}</code>
      </h1>
      <form class="card wide" onSubmit={save}>
        <label>
          Description
          <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </label>
        <label class="inline">
          <input type="checkbox" name="active" checked={draft.active} onChange={(e) => setDraft({ ...draft, active: e.currentTarget.checked })} /> Active
        </label>
        <h2>Release conditions</h2>
        {groups.length === 0 ? <Empty>No condition sets: the flag is off for everyone.</Empty> : null}
        {groups.map((group, index) => (
          <fieldset key={index}>
            <legend>
              Condition set {index + 1}: {group.properties.length ? `${group.properties.length} property filter(s)` : 'all users'}
            </legend>
            <label>
              Rollout percentage
              <input
                type="number"
                name={`rollout-${index}`}
                min={0}
                max={100}
                step={1}
                value={group.rollout_percentage ?? 100}
                onInput={(e) => setRollout(index, Number(e.currentTarget.value))}
              />
            </label>
          </fieldset>
        ))}
        {error ? <ErrorState error={error} /> : null}
        <button type="submit">Save</button>{' '}
        <span role="status" aria-live="polite">
          {status}
        </span>
      </form>
      <h2>Delete</h2>
      <p class="hint">A deleted flag stops being served at once; its key can then be used again.</p>
      <ConfirmDelete
        what="this flag"
        onConfirm={async () => {
          await api(`/api/projects/${projectId}/feature_flags/${flag.id}/`, { method: 'PATCH', body: { deleted: true } });
          navigate('/feature_flags');
        }}
      />
    </section>
  );
}
