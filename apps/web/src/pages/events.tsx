import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorState, Loading, PropertiesTable } from '../components';
import { formatTime } from '../format';
import { PropertyPicker, PropertyValuePicker } from '../query-builder';
import { linkHandler } from '../router';

export interface EventRow {
  id: string;
  event: string;
  distinct_id: string;
  timestamp: string;
  properties: Record<string, unknown>;
}

/** How often the list asks for events newer than the ones shown. */
const REFRESH_MS = 3000;
const PAGE_SIZE = 50;

/** The windows the list reads (EventsQuery's `after`); PostHog's events table reads the last 24 hours by default. */
const WINDOWS = [
  { after: '-24h', label: 'Last 24 hours' },
  { after: '-7d', label: 'Last 7 days' },
  { after: '-30d', label: 'Last 30 days' },
  { after: 'all', label: 'All time' },
];

/** The EventsQuery answer the list reads: one `*` column, the event as an object. */
interface EventsAnswer {
  results: [{ uuid: string; event: string; distinct_id: string; timestamp: string; properties: Record<string, unknown> }][];
  hasMore: boolean;
}

/** A page of the project's events, newest first, through the query API's EventsQuery (as PostHog's events table reads them). */
async function queryEvents(projectId: number, filters: EventsFilters, offset: number): Promise<{ rows: EventRow[]; hasMore: boolean }> {
  const properties: Record<string, unknown>[] = [];
  if (filters.distinctId) properties.push({ type: 'event_metadata', key: 'distinct_id', operator: 'exact', value: filters.distinctId });
  if (filters.propertyKey) properties.push({ type: 'event', key: filters.propertyKey, operator: 'exact', value: filters.propertyValue });
  const answer = await api<EventsAnswer>(`/api/environments/${projectId}/query/`, {
    method: 'POST',
    body: {
      query: {
        kind: 'EventsQuery',
        select: ['*'],
        event: filters.event || undefined,
        properties,
        after: filters.after,
        orderBy: ['timestamp DESC'],
        limit: PAGE_SIZE,
        offset,
      },
    },
  });
  return {
    hasMore: answer.hasMore,
    rows: answer.results.map(([e]) => ({ id: e.uuid, event: e.event, distinct_id: e.distinct_id, timestamp: e.timestamp, properties: e.properties })),
  };
}

interface EventsFilters {
  event: string;
  distinctId: string;
  propertyKey: string;
  propertyValue: string;
  after: string;
}

export function EventsPage({ projectId, timezone }: { projectId: number; timezone: string }) {
  const [filters, setFilters] = useState<EventsFilters>({ event: '', distinctId: '', propertyKey: '', propertyValue: '', after: '-24h' });
  const [draft, setDraft] = useState(filters);
  const [events, setEvents] = useState<EventRow[] | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState(true);
  const shown = useRef<EventRow[]>([]);
  /** How many rows of the newest-first order the first page and "load older" have read (new events shift it; duplicates are dropped). */
  const read = useRef(0);

  useEffect(() => {
    let cancelled = false;
    setEvents(null);
    setError(null);
    shown.current = [];
    read.current = 0;
    const load = async (first: boolean) => {
      try {
        const page = await queryEvents(projectId, filters, 0);
        if (cancelled) return;
        if (first) {
          shown.current = page.rows;
          read.current = page.rows.length;
          setHasMore(page.hasMore);
        } else {
          // New events go on top; the ones already shown stay where they are.
          const known = new Set(shown.current.map((row) => row.id));
          const fresh = page.rows.filter((row) => !known.has(row.id));
          if (fresh.length === 0) return;
          shown.current = [...fresh, ...shown.current];
        }
        setEvents(shown.current);
        setError(null);
      } catch (failure) {
        if (!cancelled) setError(failure);
      }
    };
    void load(true);
    const timer = live ? setInterval(() => void load(false), REFRESH_MS) : undefined;
    return () => {
      cancelled = true;
      clearInterval(timer);
    };
  }, [projectId, filters, live]);

  const loadMore = async () => {
    try {
      // Offsets never skip an event: events that arrived since only push older ones further, and repeats are dropped.
      const page = await queryEvents(projectId, filters, read.current);
      read.current += page.rows.length;
      const known = new Set(shown.current.map((row) => row.id));
      shown.current = [...shown.current, ...page.rows.filter((row) => !known.has(row.id))];
      setEvents(shown.current);
      setHasMore(page.hasMore);
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">Events</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        <label>
          Event name
          <input name="event" value={draft.event} onInput={(e) => setDraft({ ...draft, event: e.currentTarget.value })} placeholder="any event" />
        </label>
        <label>
          Distinct id
          <input name="distinct_id" value={draft.distinctId} onInput={(e) => setDraft({ ...draft, distinctId: e.currentTarget.value })} placeholder="any" />
        </label>
        <PropertyPicker
          projectId={projectId}
          type="event"
          apply="as-typed"
          name="property_key"
          label="Property"
          placeholder="key"
          value={draft.propertyKey}
          onCommit={(propertyKey) => setDraft((d) => ({ ...d, propertyKey }))}
        />
        <PropertyValuePicker
          projectId={projectId}
          type="event"
          propertyKey={draft.propertyKey}
          apply="as-typed"
          name="property_value"
          label="equals"
          placeholder="value"
          value={draft.propertyValue}
          onCommit={(propertyValue) => setDraft((d) => ({ ...d, propertyValue }))}
        />
        <label>
          Time range
          <select name="after" value={draft.after} onChange={(e) => setDraft({ ...draft, after: e.currentTarget.value })}>
            {WINDOWS.map((w) => (
              <option key={w.after} value={w.after}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Apply</button>
        <label class="inline">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live (every {REFRESH_MS / 1000} s)
        </label>
      </form>
      {error ? <ErrorState error={error} /> : null}
      {events === null && !error ? <Loading what="events" /> : null}
      {events !== null && events.length === 0 ? <Empty>No events match in this time range. Events appear here within seconds of being captured.</Empty> : null}
      {events !== null && events.length > 0 ? <EventsTable events={events} timezone={timezone} testId="events-table" /> : null}
      {hasMore ? (
        <button type="button" class="secondary" onClick={loadMore}>
          Load older events
        </button>
      ) : null}
    </section>
  );
}

/** An event's person: the persons page opens the one holding this distinct id. */
const personPath = (distinctId: string) => `/persons?distinct_id=${encodeURIComponent(distinctId)}`;

/** Events with their properties one click away (the button is keyboard reachable). */
export function EventsTable({ events, timezone, testId }: { events: EventRow[]; timezone: string; testId: string }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div class="table-scroll">
      <table class="list" data-testid={testId}>
        <caption class="sr-only">Events, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Distinct id</th>
            <th scope="col" class="hide-narrow">
              URL / screen
            </th>
            <th scope="col">Time ({timezone})</th>
          </tr>
        </thead>
        <tbody>
          {events.map((row) => (
            <Fragment key={row.id}>
              <tr data-event={row.event}>
                <td>
                  <button type="button" class="link" aria-expanded={open === row.id} onClick={() => setOpen(open === row.id ? null : row.id)}>
                    {row.event}
                  </button>
                </td>
                <td>
                  <a href={personPath(row.distinct_id)} onClick={linkHandler(personPath(row.distinct_id))} title="Open this person">
                    {row.distinct_id}
                  </a>
                </td>
                <td class="truncate hide-narrow">{String(row.properties['$current_url'] ?? row.properties['$screen_name'] ?? '')}</td>
                <td>{formatTime(row.timestamp, timezone)}</td>
              </tr>
              {open === row.id ? (
                <tr class="detail">
                  <td colSpan={4}>
                    <PropertiesTable properties={row.properties} caption={`Properties of ${row.event}`} />
                  </td>
                </tr>
              ) : null}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}
