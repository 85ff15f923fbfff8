import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ChartCanvas } from '../chart';
import { ChartSkeleton, CommitInput, Empty, ErrorState, NameOptions } from '../components';
import { formatNumber } from '../format';
import {
  DISPLAYS,
  queryFromUrl,
  trendFilters,
  trendRequestBody,
  trendsQueryNode,
  WORLD_MAP_BREAKDOWN,
  type Display,
  type SeriesQuery,
  type TrendQuery,
} from '../insight-query';
import { useHoldUntilFirstResult, afterFirstResult } from '../first-result';
import { navigate } from '../router';
import { usePost } from '../use-post';
import { WorldMap } from '../world-map';
import {
  ActorsModal,
  BreakdownPicker,
  describeRange,
  BUILDER_FILTERS,
  ComputedAt,
  DateRangePicker,
  SaveInsight,
  EventPicker,
  useEventDefinitions,
  UnknownName,
  PropertyPicker,
} from '../query-builder';
import { PropertyFiltersEditor } from '../property-filters-editor';

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
  action: { name?: string; order?: number } | null;
}

/** The trend endpoint's answer: the series, and when they were computed. */
export interface TrendAnswer {
  result: TrendSeries[];
  last_refresh?: string | null;
  is_cached?: boolean;
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

/** The project's actions, for series built from an action instead of one event. */
function useActions(projectId: number): { id: number; name: string }[] {
  const [actions, setActions] = useState<{ id: number; name: string }[]>([]);
  useEffect(() => {
    afterFirstResult(() => api<Page<{ id: number; name: string }>>(`/api/projects/${projectId}/actions/?limit=500`))
      .then((page) => setActions(page.results))
      .catch(() => setActions([]));
  }, [projectId]);
  return actions;
}

export function TrendsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const query = useMemo(() => queryFromUrl(url), [url.search]);
  // Asked again only when the request changes (not for a filter still being filled in).
  // An action series without its action yet (the list still loading, or none picked) asks nothing.
  const unchosen = query.series.findIndex((s) => s.kind === 'actions' && !/^\d+$/.test(s.event));
  const requestBody = trendRequestBody(query);
  const { answer, error, refresh, refreshing } = usePost<TrendAnswer>(`/api/environments/${projectId}/insights/trend/`, requestBody);
  // The pickers' lists wait until the chart is drawn: they would queue before its query.
  useHoldUntilFirstResult(answer !== null || error !== null || unchosen !== -1);
  const [actors, setActors] = useState<{ title: string; node: Record<string, unknown> } | null>(null);
  // The persons behind a point: an InsightActorsQuery over the trend as the query API takes it.
  const openActors = (point: TrendPoint, title: string) =>
    setActors({ title: `Persons: ${title}`, node: { kind: 'InsightActorsQuery', source: trendsQueryNode(query), ...point } });
  const result = answer?.result ?? null;
  const eventDefinitions = useEventDefinitions(projectId);
  const eventNames = useMemo(() => eventDefinitions.map((d) => d.name), [eventDefinitions]);
  const actions = useActions(projectId);
  const editing = url.searchParams.get('insight');
  // The query in the address; `insight` names the saved insight being edited, kept while editing.
  const setQuery = (next: TrendQuery) =>
    navigate(`/trends?q=${encodeURIComponent(JSON.stringify(next))}${editing ? `&insight=${encodeURIComponent(editing)}` : ''}`, true);

  const updateSeries = (index: number, patch: Partial<SeriesQuery>) =>
    setQuery({ ...query, series: query.series.map((s, i) => (i === index ? { ...s, ...patch } : s)) });

  return (
    <section aria-labelledby="trends-title">
      <h1 id="trends-title">Trends</h1>
      <NameOptions id="event-names" names={eventNames} />
      <div class="filters query-bar" role="group" aria-label="Query">
        <BreakdownPicker
          projectId={projectId}
          name="breakdown"
          value={
            query.display === 'world_map'
              ? { breakdown: WORLD_MAP_BREAKDOWN }
              : { breakdown: query.breakdown, breakdown_type: query.breakdown_type, breakdown_group_type_index: query.breakdown_group_type_index }
          }
          disabled={query.display === 'world_map'}
          onChange={(choice) => setQuery({ ...query, ...choice })}
        />
        <label>
          Interval
          <select name="interval" value={query.interval} onChange={(e) => setQuery({ ...query, interval: e.currentTarget.value as TrendQuery['interval'] })}>
            <option value="hour">Hour</option>
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </label>
        <DateRangePicker
          dateFrom={query.date_from}
          dateTo={query.date_to}
          onChange={(range) => setQuery({ ...query, date_from: range.date_from, date_to: range.date_to, interval: range.interval })}
        />
        <label class="inline">
          <input
            type="checkbox"
            name="filter_test_accounts"
            checked={query.filter_test_accounts === true}
            onChange={(e) => setQuery({ ...query, filter_test_accounts: e.currentTarget.checked || undefined })}
          />{' '}
          Filter out internal and test users
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
      {unchosen !== -1 ? (
        <Empty>Choose the action of series {String.fromCharCode(65 + unchosen)}.</Empty>
      ) : error ? (
        <ErrorState error={error} />
      ) : result === null ? (
        <ChartSkeleton what="the trend" />
      ) : (
        <>
          <ComputedAt lastRefresh={answer?.last_refresh} isCached={answer?.is_cached} timezone={timezone} onRefresh={refresh} refreshing={refreshing} />
          <TrendView
            result={result}
            display={query.display}
            interval={query.interval}
            timezone={timezone}
            onPoint={query.formula ? undefined : openActors}
            rangeLabel={describeRange(query.date_from, query.date_to)}
          />
        </>
      )}
      {actors ? (
        <ActorsModal key={JSON.stringify(actors.node)} title={actors.title} source={{ projectId, node: actors.node }} onClose={() => setActors(null)} />
      ) : null}
      <fieldset class="builder">
        <legend>Series</legend>
        {query.series.map((s, index) => (
          <div class="series-row" key={index}>
            <span class="series-letter" aria-hidden="true">
              {String.fromCharCode(65 + index)}
            </span>
            <label>
              Series {String.fromCharCode(65 + index)} from
              <select
                name={`series-${index}-kind`}
                value={s.kind ?? 'events'}
                onChange={(e) =>
                  updateSeries(
                    index,
                    e.currentTarget.value === 'actions' ? { kind: 'actions', event: String(actions[0]?.id ?? '') } : { kind: undefined, event: '$pageview' },
                  )
                }
              >
                <option value="events">Event</option>
                <option value="actions">Action</option>
              </select>
            </label>
            {s.kind === 'actions' ? (
              <label>
                Action
                <select name={`series-${index}-action`} value={s.event} onChange={(e) => updateSeries(index, { event: e.currentTarget.value })}>
                  {actions.length === 0 ? (
                    <option value="">No actions defined</option>
                  ) : s.event === '' ? (
                    <option value="" disabled>
                      Choose an action…
                    </option>
                  ) : null}
                  {actions.map((action) => (
                    <option key={action.id} value={String(action.id)}>
                      {action.name}
                    </option>
                  ))}
                </select>
              </label>
            ) : (
              <span class="picker-field">
                <EventPicker
                  label="Event"
                  name={`series-${index}-event`}
                  value={s.event}
                  definitions={eventDefinitions}
                  onCommit={(event) => updateSeries(index, { event })}
                />
                <UnknownName name={s.event} known={eventNames} what="Event" />
              </span>
            )}
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
              <PropertyPicker
                projectId={projectId}
                type="event"
                label="Property"
                name={`series-${index}-math-property`}
                value={s.math_property ?? ''}
                onCommit={(math_property) => updateSeries(index, { math_property })}
              />
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
            <PropertyFiltersEditor
              filters={s.properties ?? []}
              onChange={(properties) => updateSeries(index, { properties })}
              label={`Filters of series ${String.fromCharCode(65 + index)}`}
              {...BUILDER_FILTERS}
              projectId={projectId}
            />
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => setQuery({ ...query, series: [...query.series, { event: '$pageview', math: 'total' }] })}>
          Add series
        </button>
      </fieldset>
      <fieldset class="builder">
        <legend>Filters on every series</legend>
        <PropertyFiltersEditor
          filters={query.properties ?? []}
          onChange={(properties) => setQuery({ ...query, properties })}
          label="Filters on every series"
          {...BUILDER_FILTERS}
          projectId={projectId}
        />
        <label>
          Formula (series by letter, e.g. A / B * 100)
          <CommitInput
            name="formula"
            value={query.formula ?? ''}
            placeholder="none"
            onCommit={(formula) => setQuery({ ...query, formula: formula || undefined })}
          />
        </label>
      </fieldset>
      <SaveInsight projectId={projectId} filters={trendFilters(query)} editing={editing} />
    </section>
  );
}

/** One point of a trend, as PostHog's InsightActorsQuery names it: whose actors to list. */
export interface TrendPoint {
  series: number;
  /** The bucket (a `days` entry); null: the whole range (total-value displays). */
  day: string | null;
  breakdown?: string | number | (string | number)[];
  compare?: 'current' | 'previous';
}

/** The point behind result `s` (at bucket `index`), or null when its actors cannot be listed (a formula). */
function pointOf(s: TrendSeries, day: string | null): TrendPoint | null {
  if (s.action?.order === undefined) return null;
  return { series: s.action.order, day, breakdown: s.breakdown_value === '' ? undefined : s.breakdown_value, compare: s.compare_label };
}

export function TrendView({
  result,
  display,
  interval = 'day',
  timezone,
  onPoint,
  rangeLabel,
}: {
  result: TrendSeries[];
  display: Display;
  interval?: TrendQuery['interval'];
  timezone: string;
  /** The date range in words, for the number display's caption. */
  rangeLabel?: string;
  /** Given: a click on a point, bar, slice or table row opens the persons behind it. */
  onPoint?: (point: TrendPoint, title: string) => void;
}) {
  // A pie draws each series' total (aggregated displays answer no per-interval data); a bar of
  // totals one bar per series (or breakdown value), its height the server's aggregated_value.
  const series = useMemo(
    () =>
      display === 'bar_value'
        ? [{ label: 'Total', values: result.map(seriesTotal) }]
        : result.map((s) => ({
            label: seriesName(s),
            values: display === 'pie' ? [seriesTotal(s)] : (s.data ?? []),
            colorKey: s.breakdown_value === undefined || s.breakdown_value === '' ? undefined : String(s.breakdown_value),
          })),
    [result, display],
  );
  const countries = useMemo(
    () => new Map(display === 'world_map' ? result.map((s) => [String(s.breakdown_value ?? ''), seriesTotal(s)] as const) : []),
    [result, display],
  );
  // Under the world map the table reads as a ranking: the largest value first (ties by value name).
  const rows = useMemo(
    () =>
      display === 'world_map'
        ? [...result].sort((a, b) => seriesTotal(b) - seriesTotal(a) || String(a.breakdown_value ?? '').localeCompare(String(b.breakdown_value ?? '')))
        : result,
    [result, display],
  );
  const labels = result[0]?.labels ?? result[0]?.days ?? [];
  const days = result[0]?.days ?? [];
  if (result.length === 0) return <Empty>No series to show: pick an event.</Empty>;
  if (result.every((s) => seriesTotal(s) === 0)) return <Empty>No matching events in this date range.</Empty>;
  const timeSeries = display === 'line' || display === 'cumulative' || display === 'bar';
  const title = `Trend: ${result.map(seriesName).join(', ')}`;
  return (
    <div class="trend" data-testid="trend-result" data-display={display} data-days={JSON.stringify(days)}>
      {display === 'number' ? (
        <NumberView result={result} rangeLabel={rangeLabel} />
      ) : display === 'table' ? null : display === 'world_map' ? (
        <WorldMap values={countries} title={title} />
      ) : (
        <ChartCanvas
          kind={display === 'bar' || display === 'bar_value' ? 'bar' : timeSeries ? 'line' : 'pie'}
          labels={display === 'bar_value' ? result.map(seriesName) : timeSeries ? days : labels}
          series={series}
          title={title}
          time={timeSeries ? { timezone, unit: interval } : undefined}
          onPoint={
            onPoint
              ? (datasetIndex, index) => {
                  // Totals (bar of totals, pie): one dataset, a bar or slice per result; otherwise a dataset per result.
                  const s = timeSeries ? result[datasetIndex] : result[index];
                  const day = timeSeries ? (s?.days[index] ?? null) : null;
                  const point = s ? pointOf(s, day) : null;
                  if (s && point) onPoint(point, `${seriesName(s)}${day ? ` on ${s.labels?.[index] ?? day}` : ''}`);
                }
              : undefined
          }
        />
      )}
      {/* The numbers drawn: visible as the table display and under the map, otherwise hidden from view but read by tests and screen readers. */}
      {/* A table is as wide as its cells whatever its own width: the hidden one sits in a clipping box. */}
      <div class={display === 'table' || display === 'world_map' ? 'table-scroll' : 'sr-only'}>
        <table class="list" data-testid="trend-series">
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
            {rows.map((s, index) => (
              <tr
                key={index}
                data-series={seriesName(s)}
                data-breakdown={s.breakdown_value === undefined ? '' : String(s.breakdown_value)}
                data-total={seriesTotal(s)}
                data-values={JSON.stringify(s.data ?? [])}
              >
                <th scope="row">{seriesName(s)}</th>
                {timeSeries ? (s.data ?? []).map((value, i) => <td key={i}>{formatNumber(value)}</td>) : null}
                <td>
                  {onPoint && display === 'table' && pointOf(s, null) && seriesTotal(s) > 0 ? (
                    <button type="button" class="link" aria-label={`Persons behind ${seriesName(s)}`} onClick={() => onPoint(pointOf(s, null)!, seriesName(s))}>
                      {formatNumber(seriesTotal(s))}
                    </button>
                  ) : (
                    formatNumber(seriesTotal(s))
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

/**
 * The number display: the total, what it counts over which range, and with "compare" its change
 * from the previous period (PostHog's BoldNumber caption).
 */
function NumberView({ result, rangeLabel }: { result: TrendSeries[]; rangeLabel?: string }) {
  const current = result.filter((s) => s.compare_label !== 'previous');
  const previous = result.filter((s) => s.compare_label === 'previous');
  const total = current.reduce((sum, s) => sum + seriesTotal(s), 0);
  const before = previous.reduce((sum, s) => sum + seriesTotal(s), 0);
  const what = [...new Set(current.map((s) => baseSeriesName(s)))].join(', ');
  const change = previous.length === 0 ? null : before === 0 ? null : ((total - before) / before) * 100;
  return (
    <figure class="number-display">
      <p class="big-number">{formatNumber(total)}</p>
      <figcaption class="hint" data-testid="number-caption">
        {what}
        {rangeLabel ? ` · ${rangeLabel}` : ''}
        {previous.length > 0
          ? change === null
            ? ` · previous period ${formatNumber(before)}`
            : ` · ${change >= 0 ? '▲' : '▼'} ${formatNumber(Math.abs(change))}% vs the previous period (${formatNumber(before)})`
          : ''}
      </figcaption>
    </figure>
  );
}
