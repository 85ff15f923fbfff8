import { useMemo, useState } from 'preact/hooks';
import { ChartCanvas } from '../chart';
import { Empty, ErrorState, Loading } from '../components';
import { formatNumber } from '../format';
import { linkHandler, navigate } from '../router';
import { usePost } from '../use-post';
import { BreakdownPicker, DATE_RANGES, formFromAddress, SaveInsight, useEventDefinitions, EventPicker } from '../query-builder';
import type { BreakdownChoice } from '../query-builder/breakdown-picker';

/** The retention builder's state, kept in the address (`?q=`). */
export interface RetentionForm {
  target: string;
  returning: string;
  type: 'retention_recurring' | 'retention_first_time';
  period: 'Hour' | 'Day' | 'Week' | 'Month';
  intervals: number;
  cumulative: boolean;
  /** The range of start intervals (default: `intervals` of them up to now). */
  date_from?: string;
  date_to?: string;
  breakdown?: BreakdownChoice;
}

const DEFAULT_FORM: RetentionForm = {
  target: '$pageview',
  returning: '$pageview',
  type: 'retention_recurring',
  period: 'Day',
  intervals: 8,
  cumulative: false,
};

export function retentionFormFromUrl(url: URL): RetentionForm {
  return formFromAddress(url, DEFAULT_FORM);
}

/** The RetentionQuery node the form asks the query API for. */
export function retentionQuery(form: RetentionForm): Record<string, unknown> {
  const entity = (event: string) => ({ id: event || null, name: event || 'All events', type: 'events' });
  const breakdown = form.breakdown?.breakdown ? form.breakdown : null;
  return {
    kind: 'RetentionQuery',
    ...(form.date_from ? { dateRange: { date_from: form.date_from, date_to: form.date_to ?? null } } : {}),
    ...(breakdown
      ? {
          breakdownFilter: {
            breakdown: breakdown.breakdown,
            breakdown_type: breakdown.breakdown_type ?? 'event',
            ...(breakdown.breakdown_group_type_index !== undefined ? { breakdown_group_type_index: breakdown.breakdown_group_type_index } : {}),
          },
        }
      : {}),
    retentionFilter: {
      targetEntity: entity(form.target),
      returningEntity: entity(form.returning),
      retentionType: form.type,
      period: form.period,
      totalIntervals: form.intervals,
      cumulative: form.cumulative,
    },
  };
}

/**
 * The legacy RETENTION filter of the same query (what a saved insight keeps): PostHog's
 * target_entity, returning_entity, retention_type, period, total_intervals, cumulative, the dates
 * and the breakdown, as the API's retention filter reads them (retention-filter.ts).
 */
export function retentionFilters(form: RetentionForm): Record<string, unknown> {
  const entity = (event: string) => ({ id: event || null, name: event || 'All events', type: 'events' });
  const breakdown = form.breakdown?.breakdown ? form.breakdown : null;
  return {
    insight: 'RETENTION',
    target_entity: entity(form.target),
    returning_entity: entity(form.returning),
    retention_type: form.type,
    period: form.period,
    total_intervals: form.intervals,
    cumulative: form.cumulative,
    date_from: form.date_from || undefined,
    date_to: form.date_from ? form.date_to || undefined : undefined,
    breakdown: breakdown?.breakdown,
    breakdown_type: breakdown ? (breakdown.breakdown_type ?? 'event') : undefined,
    breakdown_group_type_index: breakdown?.breakdown_group_type_index,
  };
}

/** A saved RETENTION filter read back into the form (what the form does not edit is left out). */
export function retentionFormFromFilters(filters: Record<string, unknown>): RetentionForm {
  const event = (value: unknown) => {
    const entity = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
    const id = entity !== null && typeof entity === 'object' ? (entity as Record<string, unknown>)['id'] : undefined;
    return typeof id === 'string' ? id : id === null ? '' : DEFAULT_FORM.target;
  };
  const text = (key: string) => (typeof filters[key] === 'string' && filters[key] !== '' ? (filters[key] as string) : undefined);
  const period = text('period');
  const intervals = filters['total_intervals'];
  const breakdown = text('breakdown');
  let target = DEFAULT_FORM.target;
  let returning = DEFAULT_FORM.returning;
  try {
    target = event(filters['target_entity']);
    returning = event(filters['returning_entity']);
  } catch {
    // A target sent as text that is not JSON: the default entity, as the API reads an absent one.
  }
  return {
    target,
    returning,
    type: filters['retention_type'] === 'retention_first_time' ? 'retention_first_time' : 'retention_recurring',
    period: period === 'Hour' || period === 'Week' || period === 'Month' ? period : 'Day',
    intervals: typeof intervals === 'number' && intervals >= 1 ? Math.min(60, intervals) : 11,
    cumulative: filters['cumulative'] === true,
    date_from: text('date_from'),
    date_to: text('date_from') ? text('date_to') : undefined,
    breakdown: breakdown
      ? {
          breakdown,
          breakdown_type: text('breakdown_type') as BreakdownChoice['breakdown_type'],
          ...(typeof filters['breakdown_group_type_index'] === 'number' ? { breakdown_group_type_index: filters['breakdown_group_type_index'] } : {}),
        }
      : undefined,
  };
}

interface RetentionRow {
  label: string;
  date: string;
  values: { count: number; label: string }[];
  breakdown_value?: string;
}

/** A breakdown value as shown: PostHog's "other" sentinel and an empty value named. */
const breakdownName = (value: string) => (value === '$$_posthog_breakdown_other_$$' ? 'Other' : value === '' ? '(none)' : value);

/** The share of a cohort still there, in percent (0 for an empty cohort). */
const percent = (count: number, size: number) => (size === 0 ? 0 : (count / size) * 100);

/** A cohort's start as the period reads it, in the project's timezone. */
function cohortName(row: RetentionRow, period: RetentionForm['period'], timezone: string): string {
  const options: Intl.DateTimeFormatOptions =
    period === 'Hour'
      ? { timeZone: timezone, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }
      : period === 'Month'
        ? { timeZone: timezone, month: 'short', year: 'numeric' }
        : { timeZone: timezone, month: 'short', day: 'numeric', year: 'numeric' };
  return new Intl.DateTimeFormat('en-GB', options).format(new Date(row.date));
}

export function RetentionPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const form = useMemo(() => retentionFormFromUrl(url), [url.search]);
  const editing = url.searchParams.get('insight');
  const setForm = (next: RetentionForm) =>
    navigate(`/retention?q=${encodeURIComponent(JSON.stringify(next))}${editing ? `&insight=${encodeURIComponent(editing)}` : ''}`, true);
  const eventDefinitions = useEventDefinitions(projectId);
  const query = useMemo(() => retentionQuery(form), [form]);
  const { answer, error } = usePost<{ results: RetentionRow[] }>(`/api/environments/${projectId}/query/`, JSON.stringify({ query }));
  const [cell, setCell] = useState<{ row: number; offset: number; key: string } | null>(null);
  const [pickedValue, setPickedValue] = useState<{ value: string; key: string } | null>(null);
  const formKey = JSON.stringify(query);
  // Broken down, the answer holds every value's rows in turn: one value's triangle is shown at a time.
  const values = useMemo(() => [...new Set((answer?.results ?? []).flatMap((r) => (r.breakdown_value === undefined ? [] : [r.breakdown_value])))], [answer]);
  const value = values.length === 0 ? null : pickedValue && pickedValue.key === formKey && values.includes(pickedValue.value) ? pickedValue.value : values[0]!;
  const rows = useMemo(() => (answer ? answer.results.filter((r) => value === null || r.breakdown_value === value) : null), [answer, value]);
  const selected = cell && cell.key === `${formKey}|${value}` ? cell : null;

  return (
    <section aria-labelledby="retention-title">
      <h1 id="retention-title">Retention</h1>
      <fieldset class="builder">
        <legend>Who comes back</legend>
        <EventPicker
          label="Cohort: persons who did"
          name="target"
          value={form.target}
          placeholder="any event"
          definitions={eventDefinitions}
          onCommit={(target) => setForm({ ...form, target })}
        />
        <EventPicker
          label="Came back when they did"
          name="returning"
          value={form.returning}
          placeholder="any event"
          definitions={eventDefinitions}
          onCommit={(returning) => setForm({ ...form, returning })}
        />
      </fieldset>
      <div class="filters">
        <label>
          Cohorts by
          <select name="retention_type" value={form.type} onChange={(e) => setForm({ ...form, type: e.currentTarget.value as RetentionForm['type'] })}>
            <option value="retention_recurring">Every time they did it</option>
            <option value="retention_first_time">The first time they did it</option>
          </select>
        </label>
        <label>
          Period
          <select name="period" value={form.period} onChange={(e) => setForm({ ...form, period: e.currentTarget.value as RetentionForm['period'] })}>
            <option value="Hour">Hour</option>
            <option value="Day">Day</option>
            <option value="Week">Week</option>
            <option value="Month">Month</option>
          </select>
        </label>
        <label>
          Periods
          <input
            type="number"
            name="intervals"
            min={1}
            max={60}
            value={form.intervals}
            onChange={(e) => setForm({ ...form, intervals: Math.max(1, Math.min(60, Number(e.currentTarget.value) || DEFAULT_FORM.intervals)) })}
          />
        </label>
        <label>
          <input type="checkbox" name="cumulative" checked={form.cumulative} onChange={(e) => setForm({ ...form, cumulative: e.currentTarget.checked })} />
          Cumulative (on or after)
        </label>
        <label>
          Cohorts from
          <select
            name="date_range"
            value={form.date_from ? `${form.date_from}|${form.date_to ?? ''}` : ''}
            onChange={(e) => {
              const [dateFrom, dateTo] = e.currentTarget.value.split('|');
              setForm({ ...form, date_from: dateFrom || undefined, date_to: dateTo || undefined });
            }}
          >
            <option value="">The last {form.intervals} periods</option>
            {DATE_RANGES.map((range) => (
              <option key={range.label} value={`${range.date_from}|${range.date_to ?? ''}`}>
                {range.label}
              </option>
            ))}
          </select>
        </label>
        <BreakdownPicker
          projectId={projectId}
          name="retention_breakdown"
          value={form.breakdown ?? { breakdown: '' }}
          onChange={(breakdown) => setForm({ ...form, breakdown: breakdown.breakdown ? breakdown : undefined })}
        />
        {values.length > 0 ? (
          <label>
            Breakdown value
            <select name="breakdown_value" value={value ?? ''} onChange={(e) => setPickedValue({ value: e.currentTarget.value, key: formKey })}>
              {values.map((v) => (
                <option key={v} value={v}>
                  {breakdownName(v)}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </div>
      <p class="hint">Cohorts in {timezone}. Choose a cell to see its persons.</p>
      <SaveInsight projectId={projectId} filters={retentionFilters(form)} editing={editing} />
      {error ? (
        <ErrorState error={error} />
      ) : rows === null ? (
        <Loading what="retention" />
      ) : (
        <>
          <RetentionView rows={rows} period={form.period} timezone={timezone} onCell={(row, offset) => setCell({ row, offset, key: `${formKey}|${value}` })} />
          {selected ? (
            <CellPersons
              projectId={projectId}
              query={query}
              breakdownValue={value}
              row={selected.row}
              offset={selected.offset}
              title={`${cohortName(rows[selected.row]!, form.period, timezone)}, ${form.period} ${selected.offset}${value === null ? '' : `, ${breakdownName(value)}`}`}
            />
          ) : null}
        </>
      )}
    </section>
  );
}

/** A retention answer (a saved insight's, a dashboard tile's) as the page draws it, one breakdown value at a time, without the persons. */
export function RetentionResultView({ result, filters, timezone }: { result: unknown; filters: Record<string, unknown>; timezone: string }) {
  const period = retentionFormFromFilters(filters).period;
  const all = (Array.isArray(result) ? result : []) as RetentionRow[];
  const values = [...new Set(all.flatMap((r) => (r.breakdown_value === undefined ? [] : [r.breakdown_value])))];
  const [picked, setPicked] = useState<string | null>(null);
  const value = values.length === 0 ? null : picked !== null && values.includes(picked) ? picked : values[0]!;
  const rows = all.filter((r) => value === null || r.breakdown_value === value);
  if (rows.length === 0) return <Empty>No cohort in this date range.</Empty>;
  return (
    <>
      {values.length > 0 ? (
        <div class="filters">
          <label>
            Breakdown value
            <select name="breakdown_value" value={value ?? ''} onChange={(e) => setPicked(e.currentTarget.value)}>
              {values.map((v) => (
                <option key={v} value={v}>
                  {breakdownName(v)}
                </option>
              ))}
            </select>
          </label>
        </div>
      ) : null}
      <RetentionView rows={rows} period={period} timezone={timezone} />
    </>
  );
}

/** The triangle of cohorts (size, then the share back in each later period) and a line per cohort. */
function RetentionView({
  rows,
  period,
  timezone,
  onCell,
}: {
  rows: RetentionRow[];
  period: RetentionForm['period'];
  timezone: string;
  /** Without it (a saved insight), the cells are not buttons. */
  onCell?: (row: number, offset: number) => void;
}) {
  const width = rows[0]?.values.length ?? 0;
  const series = useMemo(
    () =>
      rows
        .map((row, i) => ({ row, i }))
        .filter(({ row }) => (row.values[0]?.count ?? 0) > 0)
        .slice(-10)
        .map(({ row, i }) => ({
          label: cohortName(row, period, timezone),
          // Periods not yet reached are left off the line.
          values: row.values.slice(0, Math.max(1, rows.length - i)).map((v) => percent(v.count, row.values[0]!.count)),
        })),
    [rows],
  );
  const labels = useMemo(() => Array.from({ length: width }, (_, i) => `${period} ${i}`), [width, period]);
  if (rows.every((row) => (row.values[0]?.count ?? 0) === 0)) return <Empty>No cohort in this date range.</Empty>;
  return (
    <div class="retention" data-testid="retention-result">
      <ChartCanvas kind="line" labels={labels} series={series} title="Share of each cohort back in each period" />
      <div class="table-scroll">
        <table class="list retention-table" data-testid="retention-table">
          <caption class="sr-only">Retention by cohort: its size, then the share back in each later period</caption>
          <thead>
            <tr>
              <th scope="col">Cohort ({timezone})</th>
              <th scope="col">Persons</th>
              {labels.map((label) => (
                <th scope="col" key={label}>
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, i) => {
              const size = row.values[0]?.count ?? 0;
              return (
                <tr key={row.date} data-date={row.date} data-counts={JSON.stringify(row.values.map((v) => v.count))}>
                  <th scope="row">{cohortName(row, period, timezone)}</th>
                  <td>{formatNumber(size)}</td>
                  {row.values.map((value, offset) =>
                    // Periods after the last cohort's have not happened yet.
                    i + offset >= rows.length ? (
                      <td key={offset} class="future" />
                    ) : (
                      <td key={offset} data-offset={offset} data-count={value.count} data-percent={percent(value.count, size)}>
                        {onCell ? (
                          <button
                            type="button"
                            class="cell"
                            style={{ '--share': `${percent(value.count, size)}%` }}
                            aria-label={`${cohortName(row, period, timezone)}, ${value.label}: ${formatNumber(value.count)} persons, ${formatNumber(percent(value.count, size))}%`}
                            onClick={() => onCell(i, offset)}
                          >
                            {formatNumber(percent(value.count, size))}%
                          </button>
                        ) : (
                          <span class="cell" style={{ '--share': `${percent(value.count, size)}%` }}>
                            {formatNumber(percent(value.count, size))}%
                          </span>
                        )}
                      </td>
                    ),
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}

interface ActorsAnswer {
  results: [{ id: string; properties?: Record<string, unknown>; distinct_ids?: string[] }, number[]][];
  hasMore: boolean;
}

/** The persons of one cell: the cohort's persons (a page of the first 1,000) back in that period. */
function CellPersons({
  projectId,
  query,
  breakdownValue,
  row,
  offset,
  title,
}: {
  projectId: number;
  query: Record<string, unknown>;
  breakdownValue: string | null;
  row: number;
  offset: number;
  title: string;
}) {
  const source = { kind: 'InsightActorsQuery', interval: row, ...(breakdownValue === null ? {} : { breakdown: breakdownValue }), source: query };
  const body = JSON.stringify({ query: { kind: 'ActorsQuery', select: ['person', 'appearances'], limit: 1000, source } });
  const { answer, error } = usePost<ActorsAnswer>(`/api/environments/${projectId}/query/`, body);
  const persons = answer ? answer.results.filter(([, appearances]) => appearances.includes(offset)) : null;
  return (
    <section class="cell-persons" aria-labelledby="cell-persons-title" data-testid="retention-persons">
      <h2 id="cell-persons-title">Persons: {title}</h2>
      {error ? (
        <ErrorState error={error} />
      ) : persons === null ? (
        <Loading what="the persons" />
      ) : persons.length === 0 ? (
        <Empty>Nobody in this cell.</Empty>
      ) : (
        <>
          {answer!.hasMore ? <p class="hint">The first 1,000 persons of the cohort are looked at.</p> : null}
          <ul class="person-list">
            {persons.map(([person, appearances]) => {
              const name = String(person.properties?.['email'] ?? person.distinct_ids?.[0] ?? person.id);
              return (
                <li key={person.id} data-person={person.id} data-appearances={JSON.stringify(appearances)}>
                  <a href={`/persons/${encodeURIComponent(person.id)}`} onClick={linkHandler(`/persons/${encodeURIComponent(person.id)}`)}>
                    {name}
                  </a>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}
