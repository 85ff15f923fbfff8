import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, ListView, Loading, LoadFailure, PropertiesTable } from '../components';
import { formatNumber, formatTime } from '../format';
import { linkHandler, navigate } from '../router';
import { PropertyPicker } from '../query-builder';
import { EventsTable, type EventRow } from './events';

interface Person {
  id: number;
  uuid: string;
  name: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
}

const PAGE_SIZE = 50;
/** The latest events shown on a person's page. */
const PERSON_EVENTS = 50;

/** Where the person property columns a user picked are remembered, per project, in this browser. */
const columnsKey = (projectId: number) => `sightline:persons-columns:${projectId}`;

function storedColumns(projectId: number): string[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(columnsKey(projectId)) ?? '[]');
    return Array.isArray(parsed) ? parsed.filter((c): c is string => typeof c === 'string') : [];
  } catch {
    return [];
  }
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '–';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function PersonsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  // `?distinct_id=` (an event's link to its person) opens that person's page.
  const distinctId = url.searchParams.get('distinct_id') ?? '';
  const [draft, setDraft] = useState(search);
  const [page, setPage] = useState<Page<Person> | null>(null);
  const [persons, setPersons] = useState<Person[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [columns, setColumns] = useState<string[]>(() => storedColumns(projectId));
  const [newColumn, setNewColumn] = useState('');
  const listQuery = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (search) listQuery.set('search', search);
  if (distinctId) listQuery.set('distinct_id', distinctId);

  useEffect(() => setDraft(search), [search]);
  useEffect(() => {
    setPage(null);
    setPersons(null);
    setError(null);
    api<Page<Person>>(`/api/environments/${projectId}/persons/?${listQuery}`)
      .then((first) => {
        if (distinctId && first.results.length === 1) return navigate(`/persons/${encodeURIComponent(first.results[0]!.uuid)}`, true);
        setPage(first);
        setPersons(first.results);
      })
      .catch(setError);
  }, [projectId, search, distinctId, attempt]);

  const chooseColumns = (next: string[]) => {
    setColumns(next);
    try {
      localStorage.setItem(columnsKey(projectId), JSON.stringify(next));
    } catch {
      // Storage refused (private mode): the choice lasts for this page only.
    }
  };
  const loadMore = async () => {
    if (!page?.next) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      // `next` is an absolute address on this origin; its path and query are what the API reads.
      const next = new URL(page.next, location.origin);
      const more = await api<Page<Person>>(`${next.pathname}${next.search}`);
      setPage(more);
      setPersons((current) => [...(current ?? []), ...more.results]);
    } catch (failure) {
      setMoreError(failure);
    } finally {
      setLoadingMore(false);
    }
  };

  const csv = new URLSearchParams({ format: 'csv' });
  if (search) csv.set('search', search);
  return (
    <section aria-labelledby="persons-title">
      <h1 id="persons-title">Persons</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(draft ? `/persons?search=${encodeURIComponent(draft)}` : '/persons');
        }}
      >
        <label>
          Search by e-mail, name or distinct id
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
        <a class="button secondary" href={`/api/environments/${projectId}/persons/?${csv}`} download="persons.csv">
          Export CSV
        </a>
      </form>
      <details class="columns" data-testid="person-columns">
        <summary>Columns ({columns.length ? columns.join(', ') : 'no property columns'})</summary>
        <ul class="chips">
          {columns.map((column) => (
            <li key={column}>
              <code>{column}</code>{' '}
              <button type="button" class="link" aria-label={`Remove column ${column}`} onClick={() => chooseColumns(columns.filter((c) => c !== column))}>
                remove
              </button>
            </li>
          ))}
        </ul>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            const name = newColumn.trim();
            if (name && !columns.includes(name)) chooseColumns([...columns, name]);
            setNewColumn('');
          }}
        >
          <PropertyPicker
            // A new picker once a column is added: its text starts empty again.
            key={columns.join('\n')}
            projectId={projectId}
            type="person"
            name="column"
            label="Person property to show as a column"
            apply="as-typed"
            value={newColumn}
            onCommit={setNewColumn}
          />
          <button type="submit" class="secondary">
            Add column
          </button>
        </form>
      </details>
      {persons !== null && persons.length > 0 ? <p class="hint">{formatNumber(page?.count ?? persons.length)} persons</p> : null}
      <ListView
        items={persons}
        error={error}
        retry={() => setAttempt(attempt + 1)}
        what="persons"
        empty={search ? `No person matches “${search}”.` : 'No persons yet.'}
        caption="Persons"
        testId="persons-table"
        head={['Person', 'Distinct ids', ...columns, `First seen (${timezone})`]}
        row={(person) => (
          <tr key={person.uuid}>
            <td>
              <a href={`/persons/${person.uuid}`} onClick={linkHandler(`/persons/${person.uuid}`)}>
                {person.name}
              </a>
            </td>
            <td class="truncate">{person.distinct_ids.join(', ')}</td>
            {columns.map((column) => (
              <td key={column} data-column={column}>
                {cellText(person.properties[column])}
              </td>
            ))}
            <td>{formatTime(person.created_at, timezone)}</td>
          </tr>
        )}
      />
      {moreError ? <ErrorState error={moreError} retry={loadMore} /> : null}
      {page?.next && persons?.length ? (
        <button type="button" class="secondary" disabled={loadingMore} onClick={loadMore}>
          {loadingMore ? 'Loading…' : 'Load more persons'}
        </button>
      ) : null}
    </section>
  );
}

export function PersonDetailPage({ projectId, timezone, uuid }: { projectId: number; timezone: string; uuid: string }) {
  const [person, setPerson] = useState<Person | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [events, setEvents] = useState<EventRow[] | null>(null);
  const [eventsError, setEventsError] = useState<unknown>(null);
  const [withEvents, setWithEvents] = useState(false);
  useEffect(() => {
    api<Person>(`/api/environments/${projectId}/persons/${encodeURIComponent(uuid)}/`)
      .then(setPerson)
      .catch(setError);
    api<Page<EventRow>>(`/api/environments/${projectId}/events/?person_id=${encodeURIComponent(uuid)}&limit=${PERSON_EVENTS}`)
      .then((page) => setEvents(page.results))
      .catch(setEventsError);
  }, [projectId, uuid]);
  if (error)
    return (
      <LoadFailure
        error={error}
        retry={() => location.reload()}
        what="No person with this id exists in this project."
        back={{ href: '/persons', label: 'Back to persons' }}
      />
    );
  if (!person) return <Loading what="the person" />;
  return (
    <section aria-labelledby="person-title">
      <p>
        <a href="/persons" onClick={linkHandler('/persons')}>
          ← Persons
        </a>
      </p>
      <h1 id="person-title">{person.name}</h1>
      <p class="hint">
        First seen {formatTime(person.created_at, timezone)} ({timezone})
      </p>
      <h2>Distinct ids</h2>
      <ul data-testid="distinct-ids">
        {person.distinct_ids.map((id) => (
          <li key={id}>
            <code>{id}</code>
          </li>
        ))}
      </ul>
      <h2>Properties</h2>
      <PropertiesTable properties={person.properties} caption={`Properties of ${person.name}`} />
      <h2>Latest events</h2>
      {eventsError ? <ErrorState error={eventsError} /> : null}
      {events === null && !eventsError ? <Loading what="events" /> : null}
      {events !== null && events.length === 0 ? <Empty>No events from this person.</Empty> : null}
      {events !== null && events.length > 0 ? <EventsTable events={events} timezone={timezone} testId="person-events" /> : null}
      <h2>Delete</h2>
      <ConfirmDelete
        what="this person"
        onConfirm={async () => {
          await api(`/api/environments/${projectId}/persons/${encodeURIComponent(uuid)}/?delete_events=${withEvents}`, { method: 'DELETE' });
          navigate('/persons');
        }}
      >
        <label class="inline">
          <input type="checkbox" name="delete_events" checked={withEvents} onChange={(e) => setWithEvents(e.currentTarget.checked)} /> Also delete their events
          (at the next weekly deletion run)
        </label>
      </ConfirmDelete>
    </section>
  );
}
