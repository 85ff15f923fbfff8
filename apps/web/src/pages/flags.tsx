import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, ListView, LoadFailure, Loading } from '../components';
import { formatNumber, formatTime } from '../format';
import type { PropertyFilter } from '../property-filter';
import { describeFlagChange } from '../flag-changes';
import { PropertyFiltersEditor } from '../property-filters-editor';
import { linkHandler, navigate } from '../router';

interface FlagGroup {
  properties: PropertyFilter[];
  rollout_percentage: number | null;
  variant?: string | null;
  [key: string]: unknown;
}

interface Variant {
  key: string;
  name?: string;
  rollout_percentage: number;
}

interface FlagFilters {
  groups?: FlagGroup[];
  multivariate?: { variants: Variant[] } | null;
  payloads?: Record<string, unknown>;
  [key: string]: unknown;
}

interface Flag {
  id: number;
  key: string;
  name: string;
  active: boolean;
  created_at: string;
  created_by: { email: string; first_name: string } | null;
  last_called_at: string | null;
  filters: FlagFilters;
}

interface FlagStatus {
  status: string;
  reason: string;
}

interface Activity {
  id: string | number;
  activity: string;
  user: { first_name: string; email: string | null } | null;
  created_at: string;
  detail: { changes?: { field?: string; before?: unknown; after?: unknown }[] | null } | null;
}

/** Variants with 100 % shared evenly, the first taking what does not divide. */
function evenSplit(variants: Variant[]): Variant[] {
  const share = Math.floor(100 / variants.length);
  return variants.map((v, i) => ({ ...v, rollout_percentage: i === 0 ? 100 - share * (variants.length - 1) : share }));
}

function variantsOf(filters: FlagFilters): Variant[] {
  return filters.multivariate?.variants ?? [];
}

function rolloutSummary(flag: Flag): string {
  const groups = flag.filters.groups ?? [];
  if (groups.length === 0) return 'No release conditions';
  return groups.map((g) => `${g.rollout_percentage ?? 100}%${g.properties.length ? ' of matching users' : ' of all users'}`).join('; ');
}

function flagType(flag: Flag): string {
  const variants = variantsOf(flag.filters);
  return variants.length ? `Multivariate (${variants.length})` : 'Boolean';
}

function listAddress(params: URLSearchParams): string {
  const query = params.toString();
  return query ? `/feature_flags?${query}` : '/feature_flags';
}

export function FlagsPage({ projectId, url }: { projectId: number; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const active = url.searchParams.get('active') ?? '';
  const type = url.searchParams.get('type') ?? '';
  const [draft, setDraft] = useState(search);
  const [flags, setFlags] = useState<Flag[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => setDraft(search), [search]);
  useEffect(() => {
    setFlags(null);
    setError(null);
    const params = new URLSearchParams({ limit: '100' });
    if (search) params.set('search', search);
    if (active) params.set('active', active);
    if (type) params.set('type', type);
    api<Page<Flag>>(`/api/projects/${projectId}/feature_flags/?${params}`)
      .then((page) => setFlags(page.results))
      .catch(setError);
  }, [projectId, search, active, type, attempt]);

  /** The list's address with one filter changed (the URL holds the filters, so they survive a reload). */
  const withFilter = (name: string, value: string) => {
    const params = new URLSearchParams(url.search);
    if (value) params.set(name, value);
    else params.delete(name);
    return listAddress(params);
  };

  const toggle = async (flag: Flag) => {
    try {
      const updated = await api<Flag>(`/api/projects/${projectId}/feature_flags/${flag.id}/`, { method: 'PATCH', body: { active: !flag.active } });
      setFlags((current) => current?.map((f) => (f.id === flag.id ? updated : f)) ?? null);
    } catch (failure) {
      setError(failure);
    }
  };

  const filtered = Boolean(search || active || type);
  return (
    <section aria-labelledby="flags-title">
      <h1 id="flags-title">Feature flags</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(withFilter('search', draft));
        }}
      >
        <label>
          Search by key or name
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
        <label>
          Status
          <select name="active" value={active} onChange={(e) => navigate(withFilter('active', e.currentTarget.value))}>
            <option value="">Any</option>
            <option value="true">Enabled</option>
            <option value="false">Disabled</option>
          </select>
        </label>
        <label>
          Type
          <select name="type" value={type} onChange={(e) => navigate(withFilter('type', e.currentTarget.value))}>
            <option value="">Any</option>
            <option value="boolean">Boolean</option>
            <option value="multivariant">Multivariate</option>
          </select>
        </label>
        <a class="button secondary" href="/feature_flags/new" onClick={linkHandler('/feature_flags/new')}>
          New flag
        </a>
      </form>
      <ListView
        items={flags}
        error={error}
        retry={() => setAttempt(attempt + 1)}
        what="feature flags"
        empty={filtered ? 'No flag matches these filters.' : 'No feature flags yet.'}
        caption="Feature flags"
        testId="flags-table"
        // Enabled comes right after the key, so a phone shows it without scrolling the table.
        head={['Key', 'Enabled', 'Name', 'Type', 'Release']}
        headClasses={[undefined, undefined, undefined, undefined, 'hide-narrow']}
        row={(flag) => (
          <tr key={flag.id} data-flag={flag.key}>
            <td class="flag-key">
              <a href={`/feature_flags/${flag.id}`} onClick={linkHandler(`/feature_flags/${flag.id}`)}>
                <code>{flag.key}</code>
              </a>
            </td>
            <td>
              <label class="switch">
                <input type="checkbox" role="switch" checked={flag.active} onChange={() => toggle(flag)} aria-label={`${flag.key} active`} />
                <span>{flag.active ? 'On' : 'Off'}</span>
              </label>
            </td>
            <td>{flag.name}</td>
            <td>{flagType(flag)}</td>
            <td class="hide-narrow">{rolloutSummary(flag)}</td>
          </tr>
        )}
      />
    </section>
  );
}

const NEW_FLAG: Flag = {
  id: 0,
  key: '',
  name: '',
  active: true,
  created_at: '',
  created_by: null,
  last_called_at: null,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
};

/** A payload as the editor holds it: the JSON text the user types (stored as JSON text by the API). */
function payloadText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The JSON problem of a payload's text, or null when it is empty or valid. */
function payloadProblem(text: string): string | null {
  if (text.trim() === '') return null;
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return `Not valid JSON: ${(error as Error).message}`;
  }
}

/**
 * A flag's editor: description, enabled, release conditions (person property filters and a
 * rollout per condition set), variants with their split, payloads (JSON, checked as typed),
 * status, activity and soft delete. `id` "new" creates a flag.
 */
export function FlagDetailPage({ projectId, id, timezone = 'UTC' }: { projectId: number; id: string; timezone?: string }) {
  const isNew = id === 'new';
  const [flag, setFlag] = useState<Flag | null>(isNew ? NEW_FLAG : null);
  const [draft, setDraft] = useState<Flag | null>(isNew ? NEW_FLAG : null);
  const [payloads, setPayloads] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>(null);
  const [saveError, setSaveError] = useState<unknown>(null);
  const [status, setStatus] = useState<string>('');
  const [cohorts, setCohorts] = useState<{ id: number; name: string }[]>([]);
  const [revision, setRevision] = useState(0);

  const adopt = (loaded: Flag) => {
    setFlag(loaded);
    setDraft(loaded);
    const stored = loaded.filters.payloads ?? {};
    setPayloads(Object.fromEntries(Object.entries(stored).map(([key, value]) => [key, payloadText(value)])));
  };
  // The address whose flag the form holds: the first render already holds the new flag's, and
  // adopting it again once the page is up would drop what was typed meanwhile (the key's input is
  // `required`, so "Create flag" then sent nothing).
  const shownId = useRef<string | null>(isNew ? id : null);
  useEffect(() => {
    const shown = shownId.current;
    shownId.current = id;
    if (isNew) {
      if (shown !== id) adopt(NEW_FLAG);
      return;
    }
    setFlag(null);
    api<Flag>(`/api/projects/${projectId}/feature_flags/${encodeURIComponent(id)}/`)
      .then(adopt)
      .catch(setError);
  }, [projectId, id]);
  useEffect(() => {
    api<Page<{ id: number; name: string }>>(`/api/projects/${projectId}/cohorts/?limit=500`)
      .then((page) => setCohorts(page.results))
      .catch(() => setCohorts([]));
  }, [projectId]);

  if (error && !flag)
    return (
      <LoadFailure
        error={error}
        retry={() => location.reload()}
        what="No feature flag with this id exists in this project."
        back={{ href: '/feature_flags', label: 'Back to feature flags' }}
      />
    );
  // Until the flag this address names is loaded (after "Create flag" the form's state is still the new one's).
  if (!flag || !draft || (!isNew && String(flag.id) !== id)) return <Loading what="the flag" />;

  const groups = draft.filters.groups ?? [];
  const variants = variantsOf(draft.filters);
  const setFilters = (filters: FlagFilters) => setDraft({ ...draft, filters });
  const setGroups = (next: FlagGroup[]) => setFilters({ ...draft.filters, groups: next });
  const setGroup = (index: number, change: Partial<FlagGroup>) => setGroups(groups.map((g, i) => (i === index ? { ...g, ...change } : g)));
  const setVariants = (next: Variant[]) => setFilters({ ...draft.filters, multivariate: next.length ? { variants: next } : null });
  const variantTotal = variants.reduce((sum, v) => sum + (Number(v.rollout_percentage) || 0), 0);
  const payloadKeys = variants.length ? variants.map((v) => v.key) : ['true'];
  const problems = payloadKeys.map((key) => payloadProblem(payloads[key] ?? '')).filter(Boolean);
  const variantProblem = variants.length && variantTotal !== 100 ? `The variants' rollout adds up to ${variantTotal}%, it must be 100%.` : null;

  const save = async (event: Event) => {
    event.preventDefault();
    if (problems.length || variantProblem) {
      setSaveError(new Error(variantProblem ?? 'A payload is not valid JSON.'));
      return;
    }
    setStatus('Saving…');
    setSaveError(null);
    const filters: FlagFilters = {
      ...draft.filters,
      groups: groups.map((g) => ({ ...g, variant: g.variant || null })),
      payloads: Object.fromEntries(payloadKeys.filter((key) => (payloads[key] ?? '').trim() !== '').map((key) => [key, payloads[key]!])),
    };
    try {
      const saved = isNew
        ? await api<Flag>(`/api/projects/${projectId}/feature_flags/`, {
            method: 'POST',
            body: { key: draft.key, name: draft.name, active: draft.active, filters },
          })
        : await api<Flag>(`/api/projects/${projectId}/feature_flags/${flag.id}/`, {
            method: 'PATCH',
            body: { name: draft.name, active: draft.active, filters },
          });
      if (isNew) {
        navigate(`/feature_flags/${saved.id}`, true);
        return;
      }
      adopt(saved);
      setRevision(revision + 1);
      setStatus('Saved.');
    } catch (failure) {
      setStatus('');
      setSaveError(failure);
    }
  };

  return (
    <section aria-labelledby="flag-title">
      <p>
        <a href="/feature_flags" onClick={linkHandler('/feature_flags')}>
          ← Feature flags
        </a>
      </p>
      <h1 id="flag-title">{isNew ? 'New feature flag' : <code>{flag.key}</code>}</h1>
      {isNew ? null : <FlagStatusPanel projectId={projectId} flag={flag} timezone={timezone} revision={revision} />}
      <form class="card wide editor flag-editor" onSubmit={save}>
        {isNew ? (
          <label>
            Key (what SDKs ask for)
            <input name="key" required pattern="[a-zA-Z0-9_\-]+" value={draft.key} onInput={(e) => setDraft({ ...draft, key: e.currentTarget.value })} />
          </label>
        ) : null}
        <label>
          Description
          <input name="name" value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </label>
        <label class="inline">
          <input type="checkbox" name="active" checked={draft.active} onChange={(e) => setDraft({ ...draft, active: e.currentTarget.checked })} /> Enabled
        </label>

        <h2>Release conditions</h2>
        <p class="hint">A user gets the flag when any condition set matches: all its property filters hold, and they fall in its rollout.</p>
        {groups.length === 0 ? <Empty>No condition sets: the flag is off for everyone.</Empty> : null}
        {groups.map((group, index) => (
          <fieldset key={index} data-testid="condition-set">
            <legend>
              Condition set {index + 1}: {group.properties.length ? `${group.properties.length} property filter(s)` : 'all users'}
            </legend>
            <PropertyFiltersEditor
              filters={group.properties}
              onChange={(properties) => setGroup(index, { properties })}
              label={`Property filters of set ${index + 1}`}
              rowLabel={(ci) => `Set ${index + 1} filter ${ci + 1}`}
              addLabel={`Add property filter to set ${index + 1}`}
              newFilter={{ key: '', type: 'person', operator: 'exact', value: [] }}
              apply="as-typed"
              types={['person', 'cohort']}
              projectId={projectId}
              cohorts={cohorts}
            />
            <label>
              Rollout percentage
              <input
                type="number"
                name={`rollout-${index}`}
                min={0}
                max={100}
                step={1}
                value={group.rollout_percentage ?? 100}
                onInput={(e) => setGroup(index, { rollout_percentage: Number(e.currentTarget.value) })}
              />
            </label>
            {variants.length ? (
              <label>
                Variant for this set
                <select value={group.variant ?? ''} onChange={(e) => setGroup(index, { variant: e.currentTarget.value || null })}>
                  <option value="">Split by the variants' rollout</option>
                  {variants.map((v) => (
                    <option key={v.key} value={v.key}>
                      Always {v.key}
                    </option>
                  ))}
                </select>
              </label>
            ) : null}
            <div class="row">
              <button type="button" class="secondary" onClick={() => setGroups(groups.filter((_, i) => i !== index))}>
                Remove condition set {index + 1}
              </button>
            </div>
          </fieldset>
        ))}
        <div class="row">
          <button type="button" class="secondary" onClick={() => setGroups([...groups, { properties: [], rollout_percentage: 100 }])}>
            Add condition set
          </button>
        </div>

        <h2>Variants</h2>
        {variants.length === 0 ? <p class="hint">A boolean flag: true for matching users. Add variants to serve one of several values instead.</p> : null}
        {variants.length ? (
          <div class="table-scroll">
            <table class="list" data-testid="variants-table">
              <caption class="sr-only">Variants</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Description</th>
                  <th scope="col">Rollout %</th>
                  <th scope="col">Remove</th>
                </tr>
              </thead>
              <tbody>
                {variants.map((variant, vi) => {
                  const change = (patch: Partial<Variant>) => setVariants(variants.map((v, i) => (i === vi ? { ...v, ...patch } : v)));
                  return (
                    <tr key={vi}>
                      <td>
                        <input
                          aria-label={`Variant ${vi + 1} key`}
                          required
                          value={variant.key}
                          onInput={(e) => {
                            const key = e.currentTarget.value;
                            setPayloads(Object.fromEntries(Object.entries(payloads).map(([k, v]) => [k === variant.key ? key : k, v])));
                            change({ key });
                          }}
                        />
                      </td>
                      <td>
                        <input
                          aria-label={`Variant ${vi + 1} description`}
                          value={variant.name ?? ''}
                          onInput={(e) => change({ name: e.currentTarget.value })}
                        />
                      </td>
                      <td>
                        <input
                          aria-label={`Variant ${vi + 1} rollout`}
                          type="number"
                          min={0}
                          max={100}
                          step={1}
                          value={variant.rollout_percentage}
                          onInput={(e) => change({ rollout_percentage: Number(e.currentTarget.value) })}
                        />
                      </td>
                      <td>
                        <button type="button" class="secondary" onClick={() => setVariants(variants.filter((_, i) => i !== vi))}>
                          Remove {variant.key || `variant ${vi + 1}`}
                        </button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        ) : null}
        {variants.length ? (
          <p class={variantTotal === 100 ? 'hint' : 'error'} data-testid="variant-total">
            Rollout adds up to {formatNumber(variantTotal)}%{variantTotal === 100 ? '.' : ': it must be 100%.'}
          </p>
        ) : null}
        <div class="row">
          <button
            type="button"
            class="secondary"
            onClick={() =>
              // A new variant takes an even share, as PostHog's editor splits on adding one.
              setVariants(evenSplit([...variants, { key: variants.length === 0 ? 'control' : `variant-${variants.length}`, name: '', rollout_percentage: 0 }]))
            }
          >
            Add variant
          </button>{' '}
          {variants.length > 1 ? (
            <button type="button" class="secondary" onClick={() => setVariants(evenSplit(variants))}>
              Split evenly
            </button>
          ) : null}
        </div>

        <h2>Payloads</h2>
        <p class="hint">JSON the SDKs return with the flag ({variants.length ? 'one per variant' : 'when it is true'}); empty for none.</p>
        {payloadKeys.map((key) => {
          const problem = payloadProblem(payloads[key] ?? '');
          const fieldId = `payload-${key}`;
          return (
            <label key={key}>
              Payload for {key}
              <textarea
                id={fieldId}
                rows={3}
                value={payloads[key] ?? ''}
                aria-invalid={problem ? 'true' : undefined}
                aria-describedby={problem ? `${fieldId}-problem` : undefined}
                onInput={(e) => setPayloads({ ...payloads, [key]: e.currentTarget.value })}
              />
              {problem ? (
                <span class="error" id={`${fieldId}-problem`}>
                  {problem}
                </span>
              ) : null}
            </label>
          );
        })}
        {saveError ? <ErrorState error={saveError} /> : null}
        <div>
          <button type="submit">{isNew ? 'Create flag' : 'Save'}</button>{' '}
          <span role="status" aria-live="polite">
            {status}
          </span>
        </div>
      </form>
      {isNew ? null : (
        <>
          <FlagActivity projectId={projectId} flagId={flag.id} timezone={timezone} revision={revision} />
          <h2>Delete</h2>
          <p class="hint">A deleted flag stops being served at once; its key can then be used again.</p>
          <ConfirmDelete
            what="this flag"
            onConfirm={async () => {
              await api(`/api/projects/${projectId}/feature_flags/${flag.id}/`, { method: 'PATCH', body: { deleted: true } });
              navigate('/feature_flags');
            }}
          />
        </>
      )}
    </section>
  );
}

/** The flag's lifecycle status (PostHog's: active, stale or deleted) and when it was last evaluated. */
function FlagStatusPanel({ projectId, flag, timezone, revision }: { projectId: number; flag: Flag; timezone: string; revision: number }) {
  const [status, setStatus] = useState<FlagStatus | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setError(null);
    api<FlagStatus>(`/api/projects/${projectId}/feature_flags/${flag.id}/status/`).then(setStatus).catch(setError);
  }, [projectId, flag.id, revision]);
  return (
    <dl class="facts" data-testid="flag-status">
      <div>
        <dt>Serving</dt>
        <dd>{flag.active ? 'Enabled' : 'Disabled'}</dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>{statusText(flag, status, error)}</dd>
      </div>
      <div>
        <dt>Last evaluated</dt>
        <dd>{flag.last_called_at ? formatTime(flag.last_called_at, timezone) : 'not recorded'}</dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>
          {formatTime(flag.created_at, timezone)}
          {flag.created_by ? ` by ${flag.created_by.email}` : ''}
        </dd>
      </div>
    </dl>
  );
}

/**
 * The status line: a disabled flag is off for everyone, whatever the lifecycle status says (the
 * API answers PostHog's "active" for any flag neither stale nor deleted, enabled or not).
 */
function statusText(flag: Flag, status: FlagStatus | null, error: unknown): string {
  if (!flag.active) return 'Disabled: off for everyone';
  if (error) return 'could not be read';
  if (!status) return 'loading…';
  return `${status.status}: ${status.reason}`;
}

/** Who changed what on the flag, newest first (its activity log). */
function FlagActivity({ projectId, flagId, timezone, revision }: { projectId: number; flagId: number; timezone: string; revision: number }) {
  const [entries, setEntries] = useState<Activity[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    setError(null);
    api<Page<Activity>>(`/api/projects/${projectId}/feature_flags/${flagId}/activity/?limit=20`)
      .then((page) => setEntries(page.results))
      .catch(setError);
  }, [projectId, flagId, revision, attempt]);
  return (
    <>
      <h2>Activity</h2>
      <ListView
        items={entries}
        error={error}
        retry={() => setAttempt(attempt + 1)}
        what="activity"
        empty="No activity recorded."
        caption="Activity on this flag"
        testId="flag-activity"
        head={[`When (${timezone})`, 'Who', 'What', 'Changes']}
        row={(entry) => (
          <tr key={entry.id} data-activity={entry.activity}>
            <td>{formatTime(entry.created_at, timezone)}</td>
            <td>{entry.user?.email ?? entry.user?.first_name ?? '–'}</td>
            <td>{entry.activity}</td>
            <td class="changes">
              <ul>
                {(entry.detail?.changes ?? [])
                  .flatMap((change) => describeFlagChange(change, entry.activity === 'created'))
                  .map((line, i) => (
                    <li key={i}>{line}</li>
                  ))}
              </ul>
            </td>
          </tr>
        )}
      />
    </>
  );
}
