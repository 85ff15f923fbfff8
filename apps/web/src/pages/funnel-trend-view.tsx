import { useMemo } from 'preact/hooks';
import { ChartCanvas } from '../chart';
import { Empty } from '../components';
import { formatNumber } from '../format';
import type { FunnelQuery } from '../insight-query';

/** The funnel's conversion over time: per entrance period, its start, label and conversion rate (%). */
export interface FunnelTrendAnswer {
  viz: 'trends';
  days: string[];
  labels: string[];
  data: number[];
}

/** Opens the persons who entered the funnel in the period starting at `start` and converted, or dropped off. */
export type OpenPeriodActors = (start: string, label: string, dropOff: boolean) => void;

/** A period's start as the actors query names it (`YYYY-MM-DD HH:mm:ss`, PostHog's FunnelLineGraph format). */
export function periodStart(day: string): string {
  const [date = '', time = ''] = day.replace('T', ' ').split(' ');
  return `${date} ${(time.slice(0, 8) || '00:00:00').padEnd(8, ':00')}`;
}

/**
 * The legacy actors route (`persons/funnel/`, which runs FunnelsActorsQuery) for one entrance
 * period of a funnel trend: `entrance_period_start` and `drop_off`, as PostHog's funnelTrendsEntrancePeriodStart
 * and funnelTrendsDropOff, beside the funnel's own filters.
 */
export function funnelPeriodPeopleUrl(projectId: number, filters: Record<string, unknown>, start: string, dropOff: boolean): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (value === undefined || value === null) continue;
    params.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  params.set('entrance_period_start', start);
  params.set('drop_off', String(dropOff));
  return `/api/projects/${projectId}/persons/funnel/?${params.toString()}`;
}

/**
 * The conversion rate of the persons who entered in each period, drawn and in a table. A point
 * opens who converted (PostHog's funnel line graph); each row also opens who dropped off.
 */
export function ConversionTrendView({
  answer,
  timezone,
  interval,
  onPeriodActors,
}: {
  answer: FunnelTrendAnswer;
  timezone: string;
  interval: NonNullable<FunnelQuery['interval']>;
  onPeriodActors?: OpenPeriodActors;
}) {
  const series = useMemo(() => [{ label: 'Conversion rate (%)', values: answer.data }], [answer]);
  if (answer.days.length === 0) return <Empty>No conversion data in this date range.</Empty>;
  const label = (i: number) => answer.labels[i] ?? answer.days[i]!;
  return (
    <div class="funnel" data-testid="funnel-trends">
      <ChartCanvas
        kind="line"
        labels={answer.days}
        series={series}
        title="Conversion rate over time"
        time={{ timezone, unit: interval }}
        onPoint={onPeriodActors ? (_dataset, i) => onPeriodActors(periodStart(answer.days[i]!), label(i), false) : undefined}
      />
      <div class="table-scroll">
        <table class="list" data-testid="funnel-trend-values">
          <caption>Conversion rate of the persons who entered in each period</caption>
          <thead>
            <tr>
              <th scope="col">Entered ({timezone})</th>
              <th scope="col">Conversion rate</th>
              {onPeriodActors ? <th scope="col">Persons</th> : null}
            </tr>
          </thead>
          <tbody>
            {answer.days.map((day, i) => (
              <tr key={day} data-day={day} data-rate={answer.data[i]}>
                <th scope="row">{label(i)}</th>
                <td>{formatNumber(answer.data[i])}%</td>
                {onPeriodActors ? (
                  <td>
                    <button
                      type="button"
                      class="link"
                      aria-label={`Persons who entered ${label(i)} and converted`}
                      onClick={() => onPeriodActors(periodStart(day), label(i), false)}
                    >
                      Converted
                    </button>{' '}
                    ·{' '}
                    <button
                      type="button"
                      class="link"
                      aria-label={`Persons who entered ${label(i)} and dropped off`}
                      onClick={() => onPeriodActors(periodStart(day), label(i), true)}
                    >
                      Dropped off
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
