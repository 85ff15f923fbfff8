import { useEffect, useMemo, useState } from 'preact/hooks';
import { ChartCanvas } from '../chart';
import { ChartSkeleton, Empty, ErrorState, Loading, NameOptions } from '../components';
import { formatNumber } from '../format';
import { convertSpan, funnelFilters, funnelQueryFromUrl, type FunnelQuery, type FunnelViz } from '../insight-query';
import { navigate } from '../router';
import { useHoldUntilFirstResult } from '../first-result';
import { usePost } from '../use-post';
import {
  ActorsModal,
  BreakdownPicker,
  BUILDER_FILTERS,
  ComputedAt,
  DateRangePicker,
  SaveInsight,
  EventPicker,
  useEventDefinitions,
  useTopEvents,
  UnknownName,
  PropertyPicker,
} from '../query-builder';
import { PropertyFiltersEditor } from '../property-filters-editor';
import { ConversionTrendView, funnelPeriodPeopleUrl, type FunnelTrendAnswer, type OpenPeriodActors } from './funnel-trend-view';

export interface FunnelStep {
  name: string;
  order: number;
  count: number;
  average_conversion_time: number | null;
  median_conversion_time: number | null;
  breakdown_value?: unknown;
  /** The actors route listing who reached this step, and who reached the previous one but not this. */
  converted_people_url?: string | null;
  dropped_people_url?: string | null;
}

/** Opens the persons behind a number: a title and the actors route that lists them. */
export type OpenActors = (title: string, url: string) => void;

/** The funnel endpoint's answer, one shape per view. */
export type FunnelAnswer =
  { viz: 'steps'; steps: FunnelStep[] | FunnelStep[][] } | { viz: 'time_to_convert'; bins: [number, number][]; average: number | null } | FunnelTrendAnswer;

export function funnelAnswer(viz: FunnelViz, result: unknown): FunnelAnswer {
  if (viz === 'time_to_convert') {
    const r = (result ?? {}) as { bins?: [number, number][]; average_conversion_time?: number | null };
    return { viz, bins: r.bins ?? [], average: r.average_conversion_time ?? null };
  }
  if (viz === 'trends') {
    const [series] = (Array.isArray(result) ? result : []) as { days?: string[]; labels?: string[]; data?: number[] }[];
    return { viz, days: series?.days ?? [], labels: series?.labels ?? [], data: series?.data ?? [] };
  }
  return { viz, steps: (Array.isArray(result) ? result : []) as FunnelStep[] | FunnelStep[][] };
}

/** Seconds as the largest whole units: 90 → "1 min 30 s". */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const units: [number, string][] = [
    [86_400, 'd'],
    [3_600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [size, unit] of units) {
    if (rest >= size && parts.length < 2) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  return parts.join(' ');
}

export function FunnelsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const query = useMemo(() => funnelQueryFromUrl(url), [url.search]);
  // A new funnel starts from the project's two most common events (asked for before anything runs).
  const fresh = !url.searchParams.get('q');
  const topEvents = useTopEvents(fresh ? projectId : null);
  useEffect(() => {
    if (fresh && topEvents && topEvents.length >= 2) setQuery({ ...query, steps: topEvents.slice(0, 2) });
  }, [fresh, topEvents]);
  const waiting = fresh && (topEvents === null || topEvents.length >= 2);
  // Asked again only when the request changes (not for a filter still being filled in).
  const requestBody = waiting ? null : JSON.stringify(funnelFilters(query));
  const editing = url.searchParams.get('insight');
  // The query in the address; `insight` names the saved insight being edited, kept while editing.
  const setQuery = (next: FunnelQuery) =>
    navigate(`/funnels?q=${encodeURIComponent(JSON.stringify(next))}${editing ? `&insight=${encodeURIComponent(editing)}` : ''}`, true);
  const eventDefinitions = useEventDefinitions(projectId);
  const eventNames = useMemo(() => eventDefinitions.map((d) => d.name), [eventDefinitions]);
  const viz = query.viz ?? 'steps';
  const response = usePost<{ result: unknown; last_refresh?: string | null; is_cached?: boolean }>(
    `/api/environments/${projectId}/insights/funnel/`,
    requestBody,
  );
  // The pickers' lists wait until the steps are drawn: they would queue before its query.
  useHoldUntilFirstResult(response.answer !== null || response.error !== null);
  const [actors, setActors] = useState<{ title: string; url: string } | null>(null);
  const answer = useMemo(() => (response.answer ? funnelAnswer(viz, response.answer.result) : null), [response.answer]);
  const error = response.error;

  const setStep = (index: number, event: string) => setQuery({ ...query, steps: query.steps.map((s, i) => (i === index ? event : s)) });

  return (
    <section aria-labelledby="funnels-title">
      <h1 id="funnels-title">Funnels</h1>
      <NameOptions id="funnel-event-names" names={eventNames} />
      <div class="filters query-bar" role="group" aria-label="Query">
        <label>
          Show
          <select name="viz" value={viz} onChange={(e) => setQuery({ ...query, viz: e.currentTarget.value as FunnelViz })}>
            <option value="steps">Conversion steps</option>
            <option value="time_to_convert">Time to convert</option>
            <option value="trends">Conversion over time</option>
          </select>
        </label>
        {viz === 'steps' ? (
          <BreakdownPicker
            projectId={projectId}
            name="funnel_breakdown"
            value={{ breakdown: query.breakdown ?? '', breakdown_type: query.breakdown_type, breakdown_group_type_index: query.breakdown_group_type_index }}
            onChange={(choice) => setQuery({ ...query, ...choice, breakdown: choice.breakdown || undefined })}
          />
        ) : null}
        {viz === 'time_to_convert' && query.steps.length > 2 ? (
          <>
            <label>
              From step
              <select
                name="from_step"
                value={String(convertSpan(query).funnel_from_step)}
                onChange={(e) => setQuery({ ...query, from_step: Number(e.currentTarget.value) })}
              >
                {query.steps.slice(0, -1).map((step, i) => (
                  <option key={i} value={String(i)}>
                    {i + 1}. {step}
                  </option>
                ))}
              </select>
            </label>
            <label>
              To step
              <select
                name="to_step"
                value={String(convertSpan(query).funnel_to_step)}
                onChange={(e) => setQuery({ ...query, to_step: Number(e.currentTarget.value) })}
              >
                {query.steps.map((step, i) =>
                  i === 0 ? null : (
                    <option key={i} value={String(i)}>
                      {i + 1}. {step}
                    </option>
                  ),
                )}
              </select>
            </label>
          </>
        ) : null}
        {viz === 'trends' ? (
          <label>
            Interval
            <select
              name="funnel_interval"
              value={query.interval ?? 'day'}
              onChange={(e) => setQuery({ ...query, interval: e.currentTarget.value as FunnelQuery['interval'] })}
            >
              <option value="hour">Hour</option>
              <option value="day">Day</option>
              <option value="week">Week</option>
              <option value="month">Month</option>
            </select>
          </label>
        ) : null}
        <label>
          Step order
          <select name="order" value={query.order} onChange={(e) => setQuery({ ...query, order: e.currentTarget.value as FunnelQuery['order'] })}>
            <option value="ordered">Sequential</option>
            <option value="strict">Strict order</option>
            <option value="unordered">Any order</option>
          </select>
        </label>
        <label>
          Conversion window (days)
          <input
            type="number"
            name="window_days"
            min={1}
            max={365}
            value={query.window_days}
            onChange={(e) => setQuery({ ...query, window_days: Math.max(1, Math.min(365, Number(e.currentTarget.value) || 14)) })}
          />
        </label>
        <DateRangePicker
          dateFrom={query.date_from}
          dateTo={query.date_to}
          onChange={(range) => setQuery({ ...query, date_from: range.date_from, date_to: range.date_to })}
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
      </div>
      <p class="hint">Dates in {timezone}.</p>
      {error ? (
        <ErrorState error={error} />
      ) : answer === null ? (
        <ChartSkeleton what="the funnel" />
      ) : (
        <>
          <ComputedAt
            lastRefresh={response.answer?.last_refresh}
            isCached={response.answer?.is_cached}
            timezone={timezone}
            onRefresh={response.refresh}
            refreshing={response.refreshing}
          />
          <FunnelResultView
            answer={answer}
            timezone={timezone}
            interval={query.interval}
            onActors={(title, url) => setActors({ title, url })}
            onPeriodActors={(start, label, dropOff) =>
              setActors({
                title: `Entered ${label}: ${dropOff ? 'dropped off' : 'converted'}`,
                url: funnelPeriodPeopleUrl(projectId, funnelFilters(query), start, dropOff),
              })
            }
          />
        </>
      )}
      {actors ? <ActorsModal key={actors.url} title={actors.title} source={{ url: actors.url }} onClose={() => setActors(null)} /> : null}
      {waiting ? (
        // Until the first steps are known, nothing to edit: an edit now would be replaced by them.
        <p class="hint" role="status">
          Starting from the project’s two most common events…
        </p>
      ) : (
        <fieldset class="builder">
          <legend>Steps</legend>
          {query.steps.map((step, index) => (
            <div class="series-row" key={index}>
              <span class="series-letter" aria-hidden="true">
                {index + 1}
              </span>
              <span class="picker-field">
                <EventPicker
                  label={`Step ${index + 1} event`}
                  name={`step-${index}`}
                  value={step}
                  definitions={eventDefinitions}
                  onCommit={(event) => setStep(index, event)}
                />
                <UnknownName name={step} known={eventNames} what="Event" />
              </span>
              {query.steps.length > 2 ? (
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Remove step ${index + 1}`}
                  onClick={() => setQuery({ ...query, steps: query.steps.filter((_, i) => i !== index) })}
                >
                  Remove
                </button>
              ) : null}
            </div>
          ))}
          <button type="button" class="secondary" onClick={() => setQuery({ ...query, steps: [...query.steps, '$pageview'] })}>
            Add step
          </button>
          <PropertyFiltersEditor
            filters={query.properties ?? []}
            onChange={(properties) => setQuery({ ...query, properties })}
            label="Filters on every step"
            {...BUILDER_FILTERS}
            projectId={projectId}
          />
        </fieldset>
      )}
      <SaveInsight projectId={projectId} filters={funnelFilters(query)} editing={editing} />
      {viz === 'steps' && answer !== null && !error ? <FunnelCorrelation projectId={projectId} query={query} /> : null}
    </section>
  );
}

/** Whichever view the funnel was asked for. */
export function FunnelResultView({
  answer,
  timezone,
  interval,
  onActors,
  onPeriodActors,
}: {
  answer: FunnelAnswer;
  timezone: string;
  interval?: FunnelQuery['interval'];
  /** Given: each step's counts open the persons behind them. */
  onActors?: OpenActors;
  /** Given: each period of the conversion over time opens who entered then and converted (or dropped off). */
  onPeriodActors?: OpenPeriodActors;
}) {
  if (answer.viz === 'time_to_convert') return <TimeToConvertView bins={answer.bins} average={answer.average} />;
  if (answer.viz === 'trends') return <ConversionTrendView answer={answer} timezone={timezone} interval={interval ?? 'day'} onPeriodActors={onPeriodActors} />;
  return <FunnelView steps={answer.steps} onActors={onActors} />;
}

const isBrokenDown = (steps: FunnelStep[] | FunnelStep[][]): steps is FunnelStep[][] => Array.isArray(steps[0]);

function breakdownName(value: unknown): string {
  const text = Array.isArray(value) ? value.join(', ') : String(value ?? '');
  return text === '' || text === '$$_posthog_breakdown_null_$$' ? '(none)' : text === '$$_posthog_breakdown_other_$$' ? 'Other' : text;
}

export function FunnelView({ steps: answer, onActors }: { steps: FunnelStep[] | FunnelStep[][]; onActors?: OpenActors }) {
  // Broken down: the bars show every value together, the table each value's funnel.
  const groups = isBrokenDown(answer) ? answer : null;
  const steps = groups
    ? (groups[0] ?? []).map((step, i) => ({ ...step, count: groups.reduce((sum, g) => sum + (g[i]?.count ?? 0), 0) }))
    : (answer as FunnelStep[]);
  const first = steps[0]?.count ?? 0;
  if (steps.length === 0 || first === 0) return <Empty>Nobody entered the funnel in this date range.</Empty>;
  const last = steps[steps.length - 1]!.count;
  return (
    <div class="funnel" data-testid="funnel-result">
      <p class="hint">
        Overall conversion: <strong>{formatNumber((last / first) * 100)}%</strong>
      </p>
      <ol class="funnel-steps">
        {steps.map((step, index) => {
          const previous = index === 0 ? step.count : steps[index - 1]!.count;
          const ofFirst = (step.count / first) * 100;
          const fromPrevious = previous === 0 ? 0 : (step.count / previous) * 100;
          return (
            <li key={index} data-step={step.name} data-count={step.count}>
              <div class="funnel-label">
                <strong>
                  {index + 1}. {step.name}
                </strong>
                <span>
                  {formatNumber(step.count)} {step.count === 1 ? 'person' : 'persons'} · {formatNumber(ofFirst)}% of step 1
                  {index > 0 ? ` · ${formatNumber(fromPrevious)}% from step ${index}` : ''}
                  {index > 0 && !groups
                    ? ` · median time ${formatDuration(step.median_conversion_time)}, average ${formatDuration(step.average_conversion_time)}`
                    : ''}
                </span>
              </div>
              <div class="funnel-bar" role="img" aria-label={`${formatNumber(ofFirst)}% of step 1`}>
                <div style={{ width: `${Math.max(ofFirst, 0.5)}%` }} />
              </div>
              {onActors && !groups ? <StepActors step={step} index={index} previous={previous} onActors={onActors} /> : null}
            </li>
          );
        })}
      </ol>
      {groups ? (
        <div class="table-scroll">
          <table class="list" data-testid="funnel-breakdown">
            <caption>Each breakdown value's funnel</caption>
            <thead>
              <tr>
                <th scope="col">Breakdown value</th>
                {steps.map((step, i) => (
                  <th scope="col" key={i}>
                    {i + 1}. {step.name}
                  </th>
                ))}
                <th scope="col">Conversion</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((group, g) => {
                const entered = group[0]?.count ?? 0;
                const converted = group[group.length - 1]?.count ?? 0;
                return (
                  <tr key={g} data-breakdown={breakdownName(group[0]?.breakdown_value)} data-counts={JSON.stringify(group.map((s) => s.count))}>
                    <th scope="row">{breakdownName(group[0]?.breakdown_value)}</th>
                    {group.map((step, i) => (
                      <td key={i}>
                        {onActors && step.converted_people_url && step.count > 0 ? (
                          <button
                            type="button"
                            class="link"
                            aria-label={`Persons of ${breakdownName(group[0]?.breakdown_value)} who reached step ${i + 1}`}
                            onClick={() =>
                              onActors(`${breakdownName(group[0]?.breakdown_value)}: reached step ${i + 1} (${step.name})`, step.converted_people_url!)
                            }
                          >
                            {formatNumber(step.count)}
                          </button>
                        ) : (
                          formatNumber(step.count)
                        )}
                      </td>
                    ))}
                    <td>{entered === 0 ? '–' : `${formatNumber((converted / entered) * 100)}%`}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}

/** A step's "converted" and "dropped off" persons, as PostHog's funnel bar offers them. */
function StepActors({ step, index, previous, onActors }: { step: FunnelStep; index: number; previous: number; onActors: OpenActors }) {
  const dropped = previous - step.count;
  return (
    <div class="step-actors">
      {step.converted_people_url && step.count > 0 ? (
        <button
          type="button"
          class="link"
          onClick={() => onActors(`Step ${index + 1} (${step.name}): ${index === 0 ? 'entered' : 'converted'}`, step.converted_people_url!)}
        >
          {index === 0 ? 'Entered' : 'Converted'}: {formatNumber(step.count)}
        </button>
      ) : null}
      {index > 0 && step.dropped_people_url && dropped > 0 ? (
        <button type="button" class="link" onClick={() => onActors(`Step ${index + 1} (${step.name}): dropped off`, step.dropped_people_url!)}>
          Dropped off: {formatNumber(dropped)}
        </button>
      ) : null}
    </div>
  );
}

/**
 * PostHog's time-to-convert histogram: each bin's lower edge and count, all bins one width wide
 * (the last one holds the slowest conversions, funnel_time_to_convert_udf.py); a lone bin is 60 s.
 */
function TimeToConvertView({ bins, average }: { bins: [number, number][]; average: number | null }) {
  const upperEdge = (i: number) => bins[i + 1]?.[0] ?? bins[i]![0] + (bins.length > 1 ? bins[1]![0] - bins[0]![0] : 60);
  const series = useMemo(() => [{ label: 'Persons converted', values: bins.map(([, count]) => count) }], [bins]);
  const labels = useMemo(() => bins.map(([start], i) => `${formatDuration(start)}–${formatDuration(upperEdge(i))}`), [bins]);
  // With no conversions PostHog (and Sightline) still answer the bins, every one empty.
  if (bins.every(([, count]) => count === 0)) return <Empty>Nobody converted in this date range.</Empty>;
  return (
    <div class="funnel" data-testid="funnel-time-to-convert">
      <p class="hint">
        Average time to convert: <strong>{formatDuration(average)}</strong>
      </p>
      <ChartCanvas kind="bar" labels={labels} series={series} title="Time to convert: persons per duration bin" />
      <div class="sr-only">
        <table data-testid="time-to-convert-bins">
          <caption>Persons per time to convert</caption>
          <thead>
            <tr>
              <th scope="col">Time to convert</th>
              <th scope="col">Persons</th>
            </tr>
          </thead>
          <tbody>
            {bins.map(([start, count], i) => (
              <tr key={start} data-from-seconds={start} data-to-seconds={upperEdge(i)} data-count={count}>
                <th scope="row">{labels[i]}</th>
                <td>{formatNumber(count)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

interface CorrelationRow {
  event: { event: string };
  success_count: number;
  failure_count: number;
  odds_ratio: number;
  correlation_type: 'success' | 'failure';
}

/**
 * Which events (or person property values) the persons who converted did more, or less, than
 * those who dropped off: PostHog's odds ratios with the success and failure counts.
 */
function FunnelCorrelation({ projectId, query }: { projectId: number; query: FunnelQuery }) {
  const [type, setType] = useState<'events' | 'properties'>('events');
  const [names, setNames] = useState('');
  const nameList = names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const asked = type === 'events' || nameList.length > 0;
  const body = {
    ...funnelFilters({ ...query, breakdown: undefined }),
    funnel_correlation_type: type,
    funnel_correlation_names: type === 'properties' ? nameList : undefined,
  };
  const { answer, error } = usePost<{ result: { events: CorrelationRow[]; skewed: boolean } }>(
    `/api/environments/${projectId}/insights/funnel/correlation/`,
    asked ? JSON.stringify(body) : null,
  );
  const rows = answer?.result ?? null;
  return (
    <section class="correlation" aria-labelledby="correlation-title">
      <h2 id="correlation-title">Correlation with converting</h2>
      <div class="filters">
        <label>
          Correlate
          <select name="correlation_type" value={type} onChange={(e) => setType(e.currentTarget.value as 'events' | 'properties')}>
            <option value="events">Events</option>
            <option value="properties">Person properties</option>
          </select>
        </label>
        {type === 'properties' ? (
          <PropertyPicker
            projectId={projectId}
            type="person"
            list
            name="correlation_names"
            label="Person properties (comma separated)"
            value={names}
            onCommit={setNames}
          />
        ) : null}
      </div>
      {!asked ? (
        <Empty>Name one or more person properties to correlate.</Empty>
      ) : error ? (
        <ErrorState error={error} />
      ) : rows === null ? (
        <Loading what="the correlation" />
      ) : rows.events.length === 0 ? (
        <Empty>{rows.skewed ? 'Everyone converted, or nobody did: there is nothing to compare.' : 'Nothing correlates with converting here.'}</Empty>
      ) : (
        <div class="table-scroll">
          {rows.skewed ? <p class="hint">One side outnumbers the other more than ten to one: read these ratios with care.</p> : null}
          <table class="list" data-testid="correlation-table">
            <caption class="sr-only">Correlated {type === 'events' ? 'events' : 'person properties'}</caption>
            <thead>
              <tr>
                <th scope="col">{type === 'events' ? 'Event' : 'Property = value'}</th>
                <th scope="col">Correlation</th>
                <th scope="col">Odds ratio</th>
                <th scope="col">Converted</th>
                <th scope="col">Dropped off</th>
              </tr>
            </thead>
            <tbody>
              {rows.events.map((row) => {
                const name = type === 'properties' ? row.event.event.replace('::', ' = ') : row.event.event;
                return (
                  <tr
                    key={row.event.event}
                    data-name={row.event.event}
                    data-type={row.correlation_type}
                    data-odds={row.odds_ratio}
                    data-success={row.success_count}
                    data-failure={row.failure_count}
                  >
                    <th scope="row">{name}</th>
                    <td>{row.correlation_type === 'success' ? 'More likely to convert' : 'Less likely to convert'}</td>
                    <td>{formatNumber(row.odds_ratio)}×</td>
                    <td>{formatNumber(row.success_count)}</td>
                    <td>{formatNumber(row.failure_count)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
