import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, ListView, Loading, LoadFailure, useSaveStatus } from '../components';
import { formatNumber, formatTime } from '../format';
import { PropertyFiltersEditor } from '../property-filters-editor';
import type { PropertyFilter } from '../property-filter';
import { linkHandler, navigate } from '../router';
import { useGet } from '../use-get';

/** A cohort's filters as PostHog stores them: groups ORed, each group's filters ANDed. */
interface CohortFilters {
  properties: { type: string; values: { type: string; values: PropertyFilter[] }[] | PropertyFilter[] };
}

interface Cohort {
  id: number;
  name: string;
  description: string;
  is_static: boolean;
  count: number | null;
  created_at: string;
  last_calculation: string | null;
  filters: CohortFilters;
}

interface CohortPerson {
  uuid: string;
  name: string;
  distinct_ids: string[];
}

/** The editor's groups from the stored filters: an OR of ANDs, a flat list read as one group. */
function groupsOf(filters: CohortFilters | undefined): PropertyFilter[][] {
  const values = filters?.properties?.values ?? [];
  if (values.length === 0) return [[]];
  if (values.every((v) => 'values' in v && Array.isArray((v as { values: unknown }).values)))
    return (values as { values: PropertyFilter[] }[]).map((g) => g.values);
  return [values as PropertyFilter[]];
}

const filtersOf = (groups: PropertyFilter[][]): CohortFilters => ({
  properties: { type: 'OR', values: groups.map((values) => ({ type: 'AND', values })) },
});

const NEW_FILTER: PropertyFilter = { key: '', type: 'person', operator: 'exact', value: [] };

/** /cohorts: the project's cohorts, searchable, with their kind and size. */
export function CohortsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  useEffect(() => setDraft(search), [search]);
  const listed = useGet<Page<Cohort>>(`/api/projects/${projectId}/cohorts/?limit=200${search ? `&search=${encodeURIComponent(search)}` : ''}`);
  return (
    <section aria-labelledby="cohorts-title">
      <h1 id="cohorts-title">Cohorts</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(draft.trim() ? `/cohorts?search=${encodeURIComponent(draft.trim())}` : '/cohorts');
        }}
      >
        <label>
          Search cohorts
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
        <a class="button secondary" href="/cohorts/new" onClick={linkHandler('/cohorts/new')}>
          New cohort
        </a>
      </form>
      <ListView
        items={listed.data?.results ?? (listed.error ? [] : null)}
        error={listed.error}
        retry={listed.reload}
        what="cohorts"
        empty={search ? `No cohort named like “${search}”.` : 'No cohorts yet: a cohort is a group of persons, by their properties or from a list.'}
        caption="Cohorts"
        testId="cohorts-table"
        head={['Name', 'Kind', 'Persons', `Created (${timezone})`]}
        row={(c) => (
          <tr key={c.id} data-cohort={c.name}>
            <td>
              <a href={`/cohorts/${c.id}`} onClick={linkHandler(`/cohorts/${c.id}`)}>
                {c.name}
              </a>
            </td>
            <td>{c.is_static ? 'Static (a list)' : 'Dynamic (filters)'}</td>
            <td>{formatNumber(c.count)}</td>
            <td>{formatTime(c.created_at, timezone)}</td>
          </tr>
        )}
      />
    </section>
  );
}

/** /cohorts/new and /cohorts/:id: a cohort created or edited; dynamic from property filters, static from a CSV of distinct ids. */
export function CohortPage({ projectId, timezone, id }: { projectId: number; timezone: string; id: string }) {
  const isNew = id === 'new';
  const base = `/api/projects/${projectId}/cohorts/`;
  const loaded = useGet<Cohort>(isNew ? null : `${base}${encodeURIComponent(id)}/`);
  const cohorts = useGet<Page<{ id: number; name: string }>>(`${base}?limit=500`);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [isStatic, setIsStatic] = useState(false);
  const [groups, setGroups] = useState<PropertyFilter[][]>([[NEW_FILTER]]);
  const [csv, setCsv] = useState<File | null>(null);
  const [revision, setRevision] = useState(0);
  const saving = useSaveStatus();
  const cohort = loaded.data;
  useEffect(() => {
    if (!cohort) return;
    setName(cohort.name);
    setDescription(cohort.description);
    setIsStatic(cohort.is_static);
    setGroups(groupsOf(cohort.filters));
  }, [cohort]);

  const back = { href: '/cohorts', label: 'Back to cohorts' };
  if (loaded.error) return <LoadFailure error={loaded.error} retry={loaded.reload} what="This cohort does not exist in this project." back={back} />;
  if (!isNew && !cohort) return <Loading what="the cohort" />;

  const save = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      let saved: Cohort;
      if (isStatic) {
        const form = new FormData();
        form.set('name', name);
        form.set('description', description);
        if (isNew) form.set('is_static', 'true');
        if (csv) form.set('csv', csv);
        saved = await api<Cohort>(isNew ? base : `${base}${cohort!.id}/`, { method: isNew ? 'POST' : 'PATCH', body: form });
      } else {
        const body = { name, description, filters: filtersOf(groups), ...(isNew ? { is_static: false } : {}) };
        saved = await api<Cohort>(isNew ? base : `${base}${cohort!.id}/`, { method: isNew ? 'POST' : 'PATCH', body });
      }
      setCsv(null);
      setRevision((n) => n + 1);
      if (isNew) navigate(`/cohorts/${saved.id}`, true);
      else loaded.set(saved);
      return 'Saved.';
    });
  };
  const setGroup = (index: number, filters: PropertyFilter[]) => setGroups(groups.map((g, i) => (i === index ? filters : g)));
  const otherCohorts = (cohorts.data?.results ?? []).filter((c) => c.id !== cohort?.id);

  return (
    <section aria-labelledby="cohort-title">
      <p>
        <a href={back.href} onClick={linkHandler(back.href)}>
          ← Cohorts
        </a>
      </p>
      <h1 id="cohort-title">{isNew ? 'New cohort' : cohort!.name}</h1>
      {cohort ? (
        <dl class="facts" data-testid="cohort-facts">
          <div>
            <dt>Kind</dt>
            <dd>{cohort.is_static ? 'Static' : 'Dynamic'}</dd>
          </div>
          <div>
            <dt>Persons</dt>
            <dd data-testid="cohort-count">{formatNumber(cohort.count)}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatTime(cohort.created_at, timezone)}</dd>
          </div>
        </dl>
      ) : null}
      <form class="card wide editor" onSubmit={save}>
        <label>
          Name
          <input name="name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        {isNew ? (
          <fieldset>
            <legend>Kind</legend>
            <label class="inline">
              <input type="radio" name="kind" checked={!isStatic} onChange={() => setIsStatic(false)} /> Dynamic: persons matching property filters
            </label>
            <label class="inline">
              <input type="radio" name="kind" checked={isStatic} onChange={() => setIsStatic(true)} /> Static: a list of persons from a CSV
            </label>
          </fieldset>
        ) : null}
        {isStatic ? (
          <label>
            {isNew ? 'CSV of distinct ids (one per line, or a distinct_id / email / person_id column)' : 'Add persons from a CSV of distinct ids'}
            <input type="file" name="csv" accept=".csv,text/csv" required={isNew} onChange={(e) => setCsv(e.currentTarget.files?.[0] ?? null)} />
          </label>
        ) : (
          <>
            <h2>Matching persons</h2>
            <p class="hint">A person is in the cohort when any group matches: every filter of that group holds.</p>
            {groups.map((filters, index) => (
              <fieldset key={index} data-testid="cohort-group">
                <legend>Group {index + 1}</legend>
                <PropertyFiltersEditor
                  filters={filters}
                  onChange={(next) => setGroup(index, next)}
                  label={`Filters of group ${index + 1}`}
                  rowLabel={(fi) => `Group ${index + 1} filter ${fi + 1}`}
                  addLabel={`Add filter to group ${index + 1}`}
                  newFilter={NEW_FILTER}
                  apply="as-typed"
                  types={['person', 'cohort']}
                  projectId={projectId}
                  cohorts={otherCohorts}
                />
                {groups.length > 1 ? (
                  <button type="button" class="secondary" onClick={() => setGroups(groups.filter((_, i) => i !== index))}>
                    Remove group {index + 1}
                  </button>
                ) : null}
              </fieldset>
            ))}
            <button type="button" class="secondary" onClick={() => setGroups([...groups, [NEW_FILTER]])}>
              Add group (OR)
            </button>
          </>
        )}
        <div class="row">
          <button type="submit">{isNew ? 'Create cohort' : 'Save'}</button>
          {saving.line}
        </div>
      </form>
      {cohort ? <CohortPersons projectId={projectId} cohortId={cohort.id} revision={revision} /> : null}
      {cohort ? (
        <ConfirmDelete
          what="cohort"
          onConfirm={async () => {
            await api(`${base}${cohort.id}/`, { method: 'PATCH', body: { deleted: true } });
            navigate('/cohorts');
          }}
        />
      ) : null}
    </section>
  );
}

function CohortPersons({ projectId, cohortId, revision }: { projectId: number; cohortId: number; revision: number }) {
  const [persons, setPersons] = useState<Page<CohortPerson> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setPersons(null);
    setError(null);
    api<Page<CohortPerson>>(`/api/projects/${projectId}/cohorts/${cohortId}/persons/?limit=50`).then(setPersons).catch(setError);
  }, [projectId, cohortId, revision]);
  return (
    <>
      <h2>Persons in the cohort</h2>
      {error ? <ErrorState error={error} /> : null}
      {!persons && !error ? <Loading what="the cohort's persons" /> : null}
      {persons && persons.results.length === 0 ? <Empty>No person is in this cohort yet.</Empty> : null}
      {persons && persons.results.length > 0 ? (
        <ul class="chips" data-testid="cohort-persons">
          {persons.results.map((p) => (
            <li key={p.uuid}>
              <a href={`/persons/${p.uuid}`} onClick={linkHandler(`/persons/${p.uuid}`)}>
                {p.name || p.distinct_ids[0]}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
