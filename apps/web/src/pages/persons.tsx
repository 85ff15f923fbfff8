import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, Loading, PropertiesTable } from '../components';
import { formatNumber, formatTime } from '../format';
import { linkHandler, navigate } from '../router';
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

export function PersonsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  const [page, setPage] = useState<Page<Person> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  const listQuery = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (search) listQuery.set('search', search);

  useEffect(() => {
    setPage(null);
    setError(null);
    api<Page<Person>>(`/api/environments/${projectId}/persons/?${listQuery}`).then(setPage).catch(setError);
  }, [projectId, search, attempt]);

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
      {error ? <ErrorState error={error} retry={() => setAttempt(attempt + 1)} /> : null}
      {page === null && !error ? <Loading what="persons" /> : null}
      {page !== null && page.results.length === 0 ? <Empty>{search ? `No person matches “${search}”.` : 'No persons yet.'}</Empty> : null}
      {page !== null && page.results.length > 0 ? (
        <>
          <p class="hint">{formatNumber(page.count ?? page.results.length)} persons</p>
          <div class="table-scroll">
            <table class="list" data-testid="persons-table">
              <caption class="sr-only">Persons</caption>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Distinct ids</th>
                  <th scope="col">First seen ({timezone})</th>
                </tr>
              </thead>
              <tbody>
                {page.results.map((person) => (
                  <tr key={person.uuid}>
                    <td>
                      <a href={`/persons/${person.uuid}`} onClick={linkHandler(`/persons/${person.uuid}`)}>
                        {person.name}
                      </a>
                    </td>
                    <td class="truncate">{person.distinct_ids.join(', ')}</td>
                    <td>{formatTime(person.created_at, timezone)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
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
  if (error) return <ErrorState error={error} />;
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
