import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api';
import { Empty, ErrorState, Loading, NameOptions } from '../components';
import { formatNumber } from '../format';
import { navigate } from '../router';
import { SaveInsight } from './insights';
import { DATE_RANGES, useEventNames } from './trends';

export interface FunnelQuery {
  steps: string[];
  order: 'ordered' | 'strict' | 'unordered';
  window_days: number;
  date_from: string;
}

const DEFAULT_QUERY: FunnelQuery = { steps: ['$pageview', 'signed_up'], order: 'ordered', window_days: 14, date_from: '-30d' };

export function funnelQueryFromUrl(url: URL): FunnelQuery {
  const raw = url.searchParams.get('q');
  if (!raw) return DEFAULT_QUERY;
  try {
    const parsed = JSON.parse(raw) as Partial<FunnelQuery>;
    return { ...DEFAULT_QUERY, ...parsed, steps: Array.isArray(parsed.steps) && parsed.steps.length >= 2 ? parsed.steps : DEFAULT_QUERY.steps };
  } catch {
    return DEFAULT_QUERY;
  }
}

/** The funnel as PostHog's insight filters: the funnel endpoint's body and a saved insight's `filters`. */
export function funnelFilters(query: FunnelQuery): Record<string, unknown> {
  return {
    insight: 'FUNNELS',
    events: query.steps.map((id, order) => ({ id, type: 'events', order })),
    funnel_order_type: query.order,
    funnel_window_interval: query.window_days,
    funnel_window_interval_unit: 'day',
    funnel_viz_type: 'steps',
    date_from: query.date_from,
  };
}

/** A saved insight's filters back as this page's query, or null when the page cannot show them. */
export function funnelQueryFromFilters(filters: Record<string, unknown>): FunnelQuery | null {
  const events = filters['events'];
  if (!Array.isArray(events) || events.length < 2 || (Array.isArray(filters['actions']) && filters['actions'].length > 0)) return null;
  const order = (['ordered', 'strict', 'unordered'] as const).find((o) => o === filters['funnel_order_type']) ?? 'ordered';
  const windowDays =
    filters['funnel_window_interval_unit'] === 'day' || filters['funnel_window_interval_unit'] === undefined
      ? Number(filters['funnel_window_interval'] ?? 14)
      : 14;
  return {
    steps: (events as { id?: unknown; order?: unknown }[])
      .slice()
      .sort((a, b) => Number(a.order ?? 0) - Number(b.order ?? 0))
      .map((e) => String(e.id ?? '')),
    order,
    window_days: Number.isFinite(windowDays) && windowDays >= 1 ? windowDays : 14,
    date_from: typeof filters['date_from'] === 'string' ? filters['date_from'] : '-30d',
  };
}

export interface FunnelStep {
  name: string;
  order: number;
  count: number;
  average_conversion_time: number | null;
  median_conversion_time: number | null;
}

/** Seconds as the largest whole units: 90 → "1 min 30 s". */
function formatDuration(seconds: number | null): string {
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
  const setQuery = (next: FunnelQuery) => navigate(`/funnels?q=${encodeURIComponent(JSON.stringify(next))}`, true);
  const eventNames = useEventNames(projectId);
  const [steps, setSteps] = useState<FunnelStep[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const controller = new AbortController();
    setSteps(null);
    setError(null);
    const body = funnelFilters(query);
    api<{ result: FunnelStep[] }>(`/api/environments/${projectId}/insights/funnel/`, { method: 'POST', body, signal: controller.signal })
      .then((answer) => setSteps(answer.result))
      .catch((failure) => {
        if ((failure as Error).name !== 'AbortError') setError(failure);
      });
    return () => controller.abort();
  }, [projectId, url.search]);

  const setStep = (index: number, event: string) => setQuery({ ...query, steps: query.steps.map((s, i) => (i === index ? event : s)) });

  return (
    <section aria-labelledby="funnels-title">
      <h1 id="funnels-title">Funnels</h1>
      <NameOptions id="funnel-event-names" names={eventNames} />
      <fieldset class="builder">
        <legend>Steps</legend>
        {query.steps.map((step, index) => (
          <div class="series-row" key={index}>
            <span class="series-letter" aria-hidden="true">
              {index + 1}
            </span>
            <label>
              Step {index + 1} event
              <input list="funnel-event-names" name={`step-${index}`} value={step} onChange={(e) => setStep(index, e.currentTarget.value.trim())} />
            </label>
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
      </fieldset>
      <div class="filters">
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
      </div>
      <p class="hint">Dates in {timezone}.</p>
      <SaveInsight projectId={projectId} filters={funnelFilters(query)} />
      {error ? <ErrorState error={error} /> : steps === null ? <Loading what="the funnel" /> : <FunnelView steps={steps} />}
    </section>
  );
}

export function FunnelView({ steps }: { steps: FunnelStep[] }) {
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
                  {index > 0 ? ` · median time ${formatDuration(step.median_conversion_time)}, average ${formatDuration(step.average_conversion_time)}` : ''}
                </span>
              </div>
              <div class="funnel-bar" role="img" aria-label={`${formatNumber(ofFirst)}% of step 1`}>
                <div style={{ width: `${Math.max(ofFirst, 0.5)}%` }} />
              </div>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
