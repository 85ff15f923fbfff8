import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ChartCanvas } from '../chart';
import { Empty, ErrorState, Loading, NameOptions } from '../components';
import { formatNumber } from '../format';
import { navigate } from '../router';
import { SaveInsight } from './insights';

interface SeriesQuery {
  event: string;
  math: string;
  math_property?: string;
}

export interface TrendQuery {
  series: SeriesQuery[];
  breakdown: string;
  interval: 'hour' | 'day' | 'week' | 'month';
  date_from: string;
  display: Display;
  /** Also the previous period of the same length. */
  compare?: boolean;
}

export type Display = 'line' | 'cumulative' | 'bar' | 'bar_value' | 'table' | 'number' | 'pie';

const DISPLAYS: Record<Display, { label: string; api: string }> = {
  line: { label: 'Line', api: 'ActionsLineGraph' },
  cumulative: { label: 'Cumulative line', api: 'ActionsLineGraphCumulative' },
  bar: { label: 'Bar', api: 'ActionsBar' },
  bar_value: { label: 'Bar (totals)', api: 'ActionsBarValue' },
  table: { label: 'Table', api: 'ActionsTable' },
  number: { label: 'Number', api: 'BoldNumber' },
  pie: { label: 'Pie', api: 'ActionsPie' },
};

const MATHS: { value: string; label: string; property?: boolean }[] = [
  { value: 'total', label: 'Total count' },
  { value: 'dau', label: 'Unique users' },
  { value: 'weekly_active', label: 'Weekly active users' },
  { value: 'monthly_active', label: 'Monthly active users' },
  { value: 'sum', label: 'Sum of property', property: true },
  { value: 'avg', label: 'Average of property', property: true },
  { value: 'min', label: 'Minimum of property', property: true },
  { value: 'max', label: 'Maximum of property', property: true },
  { value: 'median', label: 'Median of property', property: true },
];

export const DATE_RANGES = [
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-14d', label: 'Last 14 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
];

const DEFAULT_QUERY: TrendQuery = { series: [{ event: '$pageview', math: 'total' }], breakdown: '', interval: 'day', date_from: '-7d', display: 'line' };

/** The query the URL holds (`?q=`), or the default one. */
export function queryFromUrl(url: URL): TrendQuery {
  const raw = url.searchParams.get('q');
  if (!raw) return DEFAULT_QUERY;
  try {
    const parsed = JSON.parse(raw) as Partial<TrendQuery>;
    return { ...DEFAULT_QUERY, ...parsed, series: Array.isArray(parsed.series) && parsed.series.length > 0 ? parsed.series : DEFAULT_QUERY.series };
  } catch {
    return DEFAULT_QUERY;
  }
}

export interface TrendSeries {
  label: string;
  data: number[] | null;
  labels?: string[];
  days: string[];
  count: number;
  aggregated_value?: number;
  breakdown_value?: string | number | (string | number)[];
  compare_label?: 'current' | 'previous';
  /** The series' event or action; with a breakdown, `label` is the breakdown value, as PostHog answers. */
  action: { name?: string } | null;
}

function seriesName(series: TrendSeries): string {
  const period = series.compare_label ? ` (${series.compare_label} period)` : '';
  return baseSeriesName(series) + period;
}

function baseSeriesName(series: TrendSeries): string {
  const breakdown = series.breakdown_value;
  if (breakdown === undefined || breakdown === '') return series.label;
  const value = Array.isArray(breakdown) ? breakdown.join(', ') : String(breakdown);
  return `${series.action?.name ?? series.label} · ${value === '$$_posthog_breakdown_null_$$' ? '(none)' : value === '$$_posthog_breakdown_other_$$' ? 'Other' : value}`;
}

function seriesTotal(series: TrendSeries): number {
  return series.aggregated_value ?? series.count;
}

/** The trend as PostHog's insight filters: the trend endpoint's body and a saved insight's `filters`. */
export function trendFilters(query: TrendQuery): Record<string, unknown> {
  return {
    insight: 'TRENDS',
    events: query.series.map((s, order) => ({ id: s.event, type: 'events', order, math: s.math, math_property: s.math_property || undefined })),
    breakdown: query.breakdown || undefined,
    breakdown_type: query.breakdown ? 'event' : undefined,
    interval: query.interval,
    date_from: query.date_from,
    display: DISPLAYS[query.display].api,
    compare: query.compare || undefined,
  };
}

/** A saved insight's filters back as this page's query, or null when the page cannot show them. */
export function trendQueryFromFilters(filters: Record<string, unknown>): TrendQuery | null {
  const events = filters['events'];
  if (!Array.isArray(events) || events.length === 0 || (Array.isArray(filters['actions']) && filters['actions'].length > 0)) return null;
  const display = (Object.keys(DISPLAYS) as Display[]).find((key) => DISPLAYS[key].api === filters['display']) ?? 'line';
  return {
    series: (events as { id?: unknown; math?: unknown; math_property?: unknown }[]).map((e) => ({
      event: String(e.id ?? ''),
      math: typeof e.math === 'string' ? e.math : 'total',
      math_property: typeof e.math_property === 'string' ? e.math_property : undefined,
    })),
    breakdown: typeof filters['breakdown'] === 'string' ? filters['breakdown'] : '',
    interval: (['hour', 'day', 'week', 'month'] as const).find((i) => i === filters['interval']) ?? 'day',
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : '-7d',
    display,
    compare: filters['compare'] === true,
  };
}

/** Names for a picker from the event or property definitions the worker records, most seen first. */
function useDefinitionNames(path: string): string[] {
  const [names, setNames] = useState<string[]>([]);
  useEffect(() => {
    api<Page<{ name: string }>>(path)
      .then((page) => setNames(page.results.map((row) => row.name)))
      .catch(() => setNames([]));
  }, [path]);
  return names;
}

export const useEventNames = (projectId: number) => useDefinitionNames(`/api/projects/${projectId}/event_definitions/?limit=500`);
const useEventPropertyNames = (projectId: number) => useDefinitionNames(`/api/projects/${projectId}/property_definitions/?type=event&limit=500`);

export function TrendsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const query = useMemo(() => queryFromUrl(url), [url.search]);
  const [result, setResult] = useState<TrendSeries[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const eventNames = useEventNames(projectId);
  const propertyNames = useEventPropertyNames(projectId);
  const setQuery = (next: TrendQuery) => navigate(`/trends?q=${encodeURIComponent(JSON.stringify(next))}`, true);

  useEffect(() => {
    const controller = new AbortController();
    setResult(null);
    setError(null);
    const body = trendFilters(query);
    api<{ result: TrendSeries[] }>(`/api/environments/${projectId}/insights/trend/`, { method: 'POST', body, signal: controller.signal })
      .then((answer) => setResult(answer.result))
      .catch((failure) => {
        if ((failure as Error).name !== 'AbortError') setError(failure);
      });
    return () => controller.abort();
  }, [projectId, url.search]);

  const updateSeries = (index: number, patch: Partial<SeriesQuery>) =>
    setQuery({ ...query, series: query.series.map((s, i) => (i === index ? { ...s, ...patch } : s)) });

  return (
    <section aria-labelledby="trends-title">
      <h1 id="trends-title">Trends</h1>
      <NameOptions id="event-names" names={eventNames} />
      <NameOptions id="event-property-names" names={propertyNames} />
      <fieldset class="builder">
        <legend>Series</legend>
        {query.series.map((s, index) => (
          <div class="series-row" key={index}>
            <span class="series-letter" aria-hidden="true">
              {String.fromCharCode(65 + index)}
            </span>
            <label>
              Event
              <input
                list="event-names"
                name={`series-${index}-event`}
                value={s.event}
                onChange={(e) => updateSeries(index, { event: e.currentTarget.value })}
              />
            </label>
            <label>
              Math
              <select name={`series-${index}-math`} value={s.math} onChange={(e) => updateSeries(index, { math: e.currentTarget.value })}>
                {MATHS.map((m) => (
                  <option key={m.value} value={m.value}>
                    {m.label}
                  </option>
                ))}
              </select>
            </label>
            {MATHS.find((m) => m.value === s.math)?.property ? (
              <label>
                Property
                <input
                  list="event-property-names"
                  name={`series-${index}-math-property`}
                  value={s.math_property ?? ''}
                  onChange={(e) => updateSeries(index, { math_property: e.currentTarget.value })}
                />
              </label>
            ) : null}
            {query.series.length > 1 ? (
              <button
                type="button"
                class="secondary"
                aria-label={`Remove series ${String.fromCharCode(65 + index)}`}
                onClick={() => setQuery({ ...query, series: query.series.filter((_, i) => i !== index) })}
              >
                Remove
              </button>
            ) : null}
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => setQuery({ ...query, series: [...query.series, { event: '$pageview', math: 'total' }] })}>
          Add series
        </button>
      </fieldset>
      <div class="filters">
        <label>
          Breakdown by event property
          <input
            list="event-property-names"
            name="breakdown"
            value={query.breakdown}
            placeholder="none"
            onChange={(e) => setQuery({ ...query, breakdown: e.currentTarget.value.trim() })}
          />
        </label>
        <label>
          Interval
          <select name="interval" value={query.interval} onChange={(e) => setQuery({ ...query, interval: e.currentTarget.value as TrendQuery['interval'] })}>
            <option value="hour">Hour</option>
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </label>
        <label>
          Date range
          <select name="date_from" value={query.date_from} onChange={(e) => setQuery({ ...query, date_from: e.currentTarget.value })}>
            {DATE_RANGES.map((range) => (
              <option key={range.value} value={range.value}>
                {range.label}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <input type="checkbox" name="compare" checked={query.compare === true} onChange={(e) => setQuery({ ...query, compare: e.currentTarget.checked })} />{' '}
          Compare to previous period
        </label>
        <label>
          Display
          <select name="display" value={query.display} onChange={(e) => setQuery({ ...query, display: e.currentTarget.value as Display })}>
            {(Object.keys(DISPLAYS) as Display[]).map((key) => (
              <option key={key} value={key}>
                {DISPLAYS[key].label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <p class="hint">Dates in {timezone}.</p>
      <SaveInsight projectId={projectId} filters={trendFilters(query)} />
      {error ? <ErrorState error={error} /> : result === null ? <Loading what="the trend" /> : <TrendView result={result} display={query.display} />}
    </section>
  );
}

export function TrendView({ result, display }: { result: TrendSeries[]; display: Display }) {
  // A pie draws each series' total (aggregated displays answer no per-interval data).
  const series = useMemo(() => result.map((s) => ({ label: seriesName(s), values: display === 'pie' ? [seriesTotal(s)] : (s.data ?? []) })), [result, display]);
  const labels = result[0]?.labels ?? result[0]?.days ?? [];
  if (result.length === 0) return <Empty>No series to show: pick an event.</Empty>;
  if (result.every((s) => seriesTotal(s) === 0)) return <Empty>No matching events in this date range.</Empty>;
  const timeSeries = display === 'line' || display === 'cumulative' || display === 'bar';
  return (
    <div class="trend" data-testid="trend-result" data-display={display}>
      {display === 'number' ? (
        <p class="big-number">{formatNumber(result.reduce((sum, s) => sum + seriesTotal(s), 0))}</p>
      ) : display === 'table' ? null : (
        <ChartCanvas
          kind={display === 'bar' || display === 'bar_value' ? 'bar' : timeSeries ? 'line' : 'pie'}
          labels={display === 'bar_value' ? ['Total'] : labels}
          series={series}
          title={`Trend: ${series.map((s) => s.label).join(', ')}`}
        />
      )}
      {/* The numbers drawn: visible as the table display, otherwise hidden from view but read by tests and screen readers. */}
      <table class={display === 'table' ? 'list' : 'sr-only'} data-testid="trend-series">
        <caption>Series values</caption>
        <thead>
          <tr>
            <th scope="col">Series</th>
            {timeSeries
              ? labels.map((label) => (
                  <th scope="col" key={label}>
                    {label}
                  </th>
                ))
              : null}
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {result.map((s, index) => (
            <tr
              key={index}
              data-series={seriesName(s)}
              data-breakdown={s.breakdown_value === undefined ? '' : String(s.breakdown_value)}
              data-total={seriesTotal(s)}
              data-values={JSON.stringify(s.data ?? [])}
            >
              <th scope="row">{seriesName(s)}</th>
              {timeSeries ? (s.data ?? []).map((value, i) => <td key={i}>{formatNumber(value)}</td>) : null}
              <td>{formatNumber(seriesTotal(s))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
