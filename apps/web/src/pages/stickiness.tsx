import { useMemo, useState } from 'preact/hooks';
import { ChartCanvas } from '../chart';
import { Empty, ErrorState, Loading } from '../components';
import { formatNumber } from '../format';
import { DateRangePicker, formFromAddress, SaveInsight, useEventDefinitions, EventPicker } from '../query-builder';
import { navigate } from '../router';
import { usePost } from '../use-post';
import { BarPersons } from './bar-persons';

/** The stickiness builder's state, kept in the address (`?q=`). */
export interface StickinessForm {
  event: string;
  interval: 'hour' | 'day' | 'week' | 'month';
  date_from: string;
  date_to?: string;
  cumulative: boolean;
}

const DEFAULT_FORM: StickinessForm = { event: '$pageview', interval: 'day', date_from: '-7d', cumulative: false };

/** The StickinessQuery node the form asks the query API for. */
export function stickinessQuery(form: StickinessForm): Record<string, unknown> {
  return {
    kind: 'StickinessQuery',
    series: [{ kind: 'EventsNode', event: form.event || null }],
    dateRange: { date_from: form.date_from, ...(form.date_to ? { date_to: form.date_to } : {}) },
    interval: form.interval,
    stickinessFilter: form.cumulative ? { computedAs: 'cumulative' } : {},
  };
}

const INTERVALS: readonly StickinessForm['interval'][] = ['hour', 'day', 'week', 'month'];

/**
 * The legacy STICKINESS filter of the same query (what a saved insight keeps): the event as the
 * one series, the dates, the interval, and `stickiness_computed_as` as the API's stickiness filter
 * reads it (stickiness-filter.ts).
 */
export function stickinessFilters(form: StickinessForm): Record<string, unknown> {
  return {
    insight: 'STICKINESS',
    events: [{ id: form.event || null, name: form.event || 'All events', type: 'events', order: 0 }],
    date_from: form.date_from,
    date_to: form.date_to || undefined,
    interval: form.interval,
    stickiness_computed_as: form.cumulative ? 'cumulative' : undefined,
  };
}

/** A saved STICKINESS filter's first event series, or '' for any event (an action keeps the default). */
export function firstEventOf(filters: Record<string, unknown>, fallback: string): string {
  const events = Array.isArray(filters['events']) ? (filters['events'] as unknown[]) : [];
  const first = events[0] as Record<string, unknown> | undefined;
  const id = first?.['id'];
  return typeof id === 'string' ? id : first && id === null ? '' : fallback;
}

/** A saved STICKINESS filter read back into the form (what the form does not edit is left out). */
export function stickinessFormFromFilters(filters: Record<string, unknown>): StickinessForm {
  const interval = INTERVALS.find((i) => i === filters['interval']) ?? DEFAULT_FORM.interval;
  return {
    event: firstEventOf(filters, DEFAULT_FORM.event),
    interval,
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : DEFAULT_FORM.date_from,
    date_to: typeof filters['date_to'] === 'string' && filters['date_to'] !== '' ? filters['date_to'] : undefined,
    cumulative: filters['stickiness_computed_as'] === 'cumulative',
  };
}

interface StickinessSeries {
  label: string;
  labels: string[];
  days: number[];
  data: number[];
  count: number;
}

/** How often persons come back: the persons who did the event on 1, 2, … N intervals of the range, as bars. */
export function StickinessPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const form = useMemo(() => formFromAddress(url, DEFAULT_FORM), [url.search]);
  const editing = url.searchParams.get('insight');
  const setForm = (next: StickinessForm) =>
    navigate(`/stickiness?q=${encodeURIComponent(JSON.stringify(next))}${editing ? `&insight=${encodeURIComponent(editing)}` : ''}`, true);
  const eventDefinitions = useEventDefinitions(projectId);
  const query = useMemo(() => stickinessQuery(form), [form]);
  const { answer, error } = usePost<{ results: StickinessSeries[] }>(`/api/environments/${projectId}/query/`, JSON.stringify({ query }));
  const [bar, setBar] = useState<{ day: number; key: string } | null>(null);
  const formKey = JSON.stringify(query);
  const selected = bar && bar.key === formKey ? bar : null;
  const series = answer?.results[0] ?? null;
  return (
    <section aria-labelledby="stickiness-title">
      <h1 id="stickiness-title">Stickiness</h1>
      <div class="filters">
        <EventPicker
          label="Persons who did"
          name="event"
          value={form.event}
          placeholder="any event"
          definitions={eventDefinitions}
          onCommit={(event) => setForm({ ...form, event })}
        />
        <label>
          Interval
          <select name="interval" value={form.interval} onChange={(e) => setForm({ ...form, interval: e.currentTarget.value as StickinessForm['interval'] })}>
            <option value="hour">Hour</option>
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </label>
        <DateRangePicker
          dateFrom={form.date_from}
          dateTo={form.date_to}
          onChange={(range) => setForm({ ...form, date_from: range.date_from, date_to: range.date_to, interval: range.interval })}
        />
        <label class="inline">
          <input type="checkbox" name="cumulative" checked={form.cumulative} onChange={(e) => setForm({ ...form, cumulative: e.currentTarget.checked })} />{' '}
          Cumulative (on N or more)
        </label>
      </div>
      <p class="hint">Intervals in {timezone}. Choose a bar to see its persons.</p>
      <SaveInsight projectId={projectId} filters={stickinessFilters(form)} editing={editing} />
      {error ? (
        <ErrorState error={error} />
      ) : series === null ? (
        answer === null ? (
          <Loading what="stickiness" />
        ) : (
          <Empty>No series to show: pick an event.</Empty>
        )
      ) : (
        <>
          <StickinessView series={series} onBar={(day) => setBar({ day, key: formKey })} />
          {selected ? (
            <BarPersons
              projectId={projectId}
              source={{ kind: 'InsightActorsQuery', source: query, day: selected.day }}
              title={series.labels[selected.day - 1] ?? String(selected.day)}
              testId="stickiness-persons"
            />
          ) : null}
        </>
      )}
    </section>
  );
}

/** A stickiness answer (a saved insight's, a dashboard tile's) as the page draws it, without the persons. */
export function StickinessResultView({ result }: { result: unknown }) {
  const series = Array.isArray(result) ? (result[0] as StickinessSeries | undefined) : undefined;
  if (!series) return <Empty>No series to show.</Empty>;
  return <StickinessView series={series} />;
}

/** The bars; without `onBar` (a saved insight) the numbers are not buttons. */
function StickinessView({ series, onBar }: { series: StickinessSeries; onBar?: (day: number) => void }) {
  const drawn = useMemo(() => [{ label: series.label, values: series.data }], [series]);
  if (series.count === 0) return <Empty>No matching events in this date range.</Empty>;
  return (
    <div class="trend" data-testid="stickiness-result">
      <ChartCanvas kind="bar" labels={series.labels} series={drawn} title={`Stickiness of ${series.label}`} />
      {/* The numbers drawn, each bar a button opening its persons. */}
      <div class="table-scroll">
        <table class="list" data-testid="stickiness-bars" data-values={JSON.stringify(series.data)}>
          <caption>Persons by how many intervals they were active on</caption>
          <thead>
            <tr>
              <th scope="col">Active on</th>
              <th scope="col">Persons</th>
            </tr>
          </thead>
          <tbody>
            {series.days.map((day, i) => (
              <tr key={day} data-day={day} data-value={series.data[i]}>
                <th scope="row">{series.labels[i]}</th>
                <td>
                  {onBar ? (
                    <button
                      type="button"
                      class="link"
                      onClick={() => onBar(day)}
                      disabled={series.data[i] === 0}
                      aria-label={`${series.labels[i]}: ${formatNumber(series.data[i]!)} persons`}
                    >
                      {formatNumber(series.data[i]!)}
                    </button>
                  ) : (
                    formatNumber(series.data[i]!)
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
