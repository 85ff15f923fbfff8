import { Chart } from 'chart.js';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
// chart.tsx registers the bar pieces with Chart.js.
import '../chart';
import { Empty, ErrorState, Loading } from '../components';
import { formatNumber } from '../format';
import { DateRangePicker, formFromAddress, SaveInsight, useEventDefinitions, EventPicker } from '../query-builder';
import { navigate } from '../router';
import { usePost } from '../use-post';
import { BarPersons } from './bar-persons';
import { firstEventOf } from './stickiness';

const STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;
type Status = (typeof STATUSES)[number];
/** PostHog's lifecycle colours: new blue, returning green, resurrecting purple, dormant red. */
const COLOURS: Record<Status, string> = { new: '#1d4aff', returning: '#2aa876', resurrecting: '#8a2be2', dormant: '#f04f58' };

/** The lifecycle builder's state, kept in the address (`?q=`). */
export interface LifecycleForm {
  event: string;
  interval: 'hour' | 'day' | 'week' | 'month';
  date_from: string;
  date_to?: string;
  /** The statuses drawn (PostHog's toggledLifecycles); the answer holds all four. */
  shown: Status[];
}

const DEFAULT_FORM: LifecycleForm = { event: '$pageview', interval: 'day', date_from: '-7d', shown: [...STATUSES] };

/** The LifecycleQuery node the form asks the query API for. */
export function lifecycleQuery(form: LifecycleForm): Record<string, unknown> {
  return {
    kind: 'LifecycleQuery',
    series: [{ kind: 'EventsNode', event: form.event || null }],
    dateRange: { date_from: form.date_from, ...(form.date_to ? { date_to: form.date_to } : {}) },
    interval: form.interval,
    lifecycleFilter: { toggledLifecycles: form.shown },
  };
}

const INTERVALS: readonly LifecycleForm['interval'][] = ['hour', 'day', 'week', 'month'];

/**
 * The legacy LIFECYCLE filter of the same query (what a saved insight keeps): the event as the one
 * series, the dates, the interval and the statuses shown as `toggledLifecycles`, as the API's
 * lifecycle filter reads them (lifecycle-filter.ts).
 */
export function lifecycleFilters(form: LifecycleForm): Record<string, unknown> {
  return {
    insight: 'LIFECYCLE',
    events: [{ id: form.event || null, name: form.event || 'All events', type: 'events', order: 0 }],
    date_from: form.date_from,
    date_to: form.date_to || undefined,
    interval: form.interval,
    toggledLifecycles: form.shown,
  };
}

/** A saved LIFECYCLE filter read back into the form (what the form does not edit is left out). */
export function lifecycleFormFromFilters(filters: Record<string, unknown>): LifecycleForm {
  const toggles = filters['toggledLifecycles'] ?? filters['lifecycle_toggles'];
  return {
    event: firstEventOf(filters, DEFAULT_FORM.event),
    interval: INTERVALS.find((i) => i === filters['interval']) ?? DEFAULT_FORM.interval,
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : DEFAULT_FORM.date_from,
    date_to: typeof filters['date_to'] === 'string' && filters['date_to'] !== '' ? filters['date_to'] : undefined,
    shown: Array.isArray(toggles) ? STATUSES.filter((s) => toggles.includes(s)) : [...STATUSES],
  };
}

interface LifecycleSeries {
  status: Status;
  label: string;
  data: number[];
  days: string[];
  labels: string[];
  count: number;
}

/** Who is new, returning, resurrecting or dormant per interval: stacked bars, dormant below zero. */
export function LifecyclePage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const form = useMemo(() => formFromAddress(url, DEFAULT_FORM), [url.search]);
  const editing = url.searchParams.get('insight');
  const setForm = (next: LifecycleForm) =>
    navigate(`/lifecycle?q=${encodeURIComponent(JSON.stringify(next))}${editing ? `&insight=${encodeURIComponent(editing)}` : ''}`, true);
  const eventDefinitions = useEventDefinitions(projectId);
  const query = useMemo(() => lifecycleQuery(form), [form]);
  const { answer, error } = usePost<{ results: LifecycleSeries[] }>(`/api/environments/${projectId}/query/`, JSON.stringify({ query }));
  const [bar, setBar] = useState<{ day: string; status: Status; title: string; key: string } | null>(null);
  const formKey = JSON.stringify(query);
  const selected = bar && bar.key === formKey ? bar : null;
  const toggle = (status: Status, on: boolean) => setForm({ ...form, shown: STATUSES.filter((s) => (s === status ? on : form.shown.includes(s))) });
  return (
    <section aria-labelledby="lifecycle-title">
      <h1 id="lifecycle-title">Lifecycle</h1>
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
          <select name="interval" value={form.interval} onChange={(e) => setForm({ ...form, interval: e.currentTarget.value as LifecycleForm['interval'] })}>
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
      </div>
      <fieldset class="builder">
        <legend>Show</legend>
        {STATUSES.map((status) => (
          <label class="inline" key={status}>
            <input type="checkbox" name={`show-${status}`} checked={form.shown.includes(status)} onChange={(e) => toggle(status, e.currentTarget.checked)} />{' '}
            {status}
          </label>
        ))}
      </fieldset>
      <p class="hint">Intervals in {timezone}. Choose a number to see its persons.</p>
      <SaveInsight projectId={projectId} filters={lifecycleFilters(form)} editing={editing} />
      {error ? (
        <ErrorState error={error} />
      ) : answer === null ? (
        <Loading what="the lifecycle" />
      ) : (
        <>
          <LifecycleView
            results={answer.results.filter((s) => form.shown.includes(s.status))}
            onBar={(day, status, title) => setBar({ day, status, title, key: formKey })}
          />
          {selected ? (
            <BarPersons
              projectId={projectId}
              source={{ kind: 'InsightActorsQuery', source: query, day: selected.day, status: selected.status }}
              title={selected.title}
              testId="lifecycle-persons"
            />
          ) : null}
        </>
      )}
    </section>
  );
}

/** A lifecycle answer (a saved insight's, a dashboard tile's) as the page draws it, the statuses its filter shows, without the persons. */
export function LifecycleResultView({ result, filters }: { result: unknown; filters: Record<string, unknown> }) {
  const shown = lifecycleFormFromFilters(filters).shown;
  const results = useMemo(() => (Array.isArray(result) ? (result as LifecycleSeries[]) : []).filter((s) => shown.includes(s.status)), [result, shown.join()]);
  return <LifecycleView results={results} />;
}

/** The stacked bars and their numbers; without `onBar` (a saved insight) the numbers are not buttons. */
function LifecycleView({ results, onBar }: { results: LifecycleSeries[]; onBar?: (day: string, status: Status, title: string) => void }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const labels = results[0]?.labels ?? [];
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels, datasets: results.map((s) => ({ label: s.status, data: s.data, backgroundColor: COLOURS[s.status], stack: 'lifecycle' })) },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: 'index', intersect: false },
        scales: { x: { stacked: true }, y: { stacked: true } },
      },
    });
    return () => chart.destroy();
  }, [results]);
  if (results.length === 0) return <Empty>No status shown: tick one above.</Empty>;
  if (results.every((s) => s.data.every((v) => v === 0))) return <Empty>No matching events in this date range.</Empty>;
  return (
    <div class="trend" data-testid="lifecycle-result">
      <div class="chart">
        <canvas ref={canvas} role="img" aria-label="Lifecycle: new, returning, resurrecting and dormant persons per interval" />
      </div>
      {/* The numbers drawn, each a button opening its persons. */}
      <div class="table-scroll">
        <table class="list" data-testid="lifecycle-table">
          <caption>Persons per interval and status</caption>
          <thead>
            <tr>
              <th scope="col">Status</th>
              {labels.map((label) => (
                <th scope="col" key={label}>
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {results.map((s) => (
              <tr key={s.status} data-status={s.status} data-values={JSON.stringify(s.data)}>
                <th scope="row">{s.status}</th>
                {s.data.map((value, i) => (
                  <td key={i} data-day={s.days[i]}>
                    {onBar ? (
                      <button
                        type="button"
                        class="link"
                        disabled={value === 0}
                        onClick={() => onBar(s.days[i]!, s.status, `${s.status}, ${s.labels[i]}`)}
                        aria-label={`${s.status}, ${s.labels[i]}: ${formatNumber(Math.abs(value))} persons`}
                      >
                        {formatNumber(value)}
                      </button>
                    ) : (
                      formatNumber(value)
                    )}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
