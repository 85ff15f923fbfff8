import {
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PieController,
  PointElement,
  TimeScale,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
// Luxon adapter: the time scale reads and labels dates in the project's timezone (its `zone` option).
import 'chartjs-adapter-luxon';
import { DateTime } from 'luxon';
import { useEffect, useRef } from 'preact/hooks';

// Only the pieces the app draws, so the rest of Chart.js stays out of the bundle.
Chart.register(
  LineController,
  BarController,
  PieController,
  LineElement,
  BarElement,
  PointElement,
  ArcElement,
  CategoryScale,
  LinearScale,
  TimeScale,
  Tooltip,
  Legend,
);
Chart.defaults.animation = false;
Chart.defaults.font.family = 'system-ui, sans-serif';

export const PALETTE = ['#1d4aff', '#f04f58', '#2aa876', '#f7a501', '#8a2be2', '#00a3c4', '#e05d9f', '#6b7280', '#92400e', '#0f766e'];

export interface ChartSeries {
  label: string;
  values: number[];
}

/** A Chart.js canvas; the numbers it draws are also in the caller's hidden table (a canvas cannot be read). */
export function ChartCanvas({
  kind,
  labels,
  series,
  title,
  time,
}: {
  kind: 'line' | 'bar' | 'pie';
  labels: string[];
  series: ChartSeries[];
  title: string;
  /** Labels are bucket starts (`yyyy-MM-dd[ HH:mm:ss]` in `timezone`): drawn on a time scale. */
  time?: ChartTime;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const x = time ? timeAxis(time) : undefined;
    const config: ChartConfiguration =
      kind === 'pie'
        ? {
            type: 'pie',
            data: {
              labels: series.map((s) => s.label),
              datasets: [{ data: series.map((s) => s.values.reduce((a, b) => a + b, 0)), backgroundColor: series.map((_, i) => PALETTE[i % PALETTE.length]!) }],
            },
            options: { responsive: true, maintainAspectRatio: false },
          }
        : {
            type: kind,
            data: {
              labels: x ? labels.map((label) => bucketMillis(label, time!.timezone)) : labels,
              datasets: series.map((s, i) => ({
                label: s.label,
                data: s.values,
                borderColor: PALETTE[i % PALETTE.length],
                backgroundColor: PALETTE[i % PALETTE.length],
                tension: 0,
                pointRadius: 2,
              })),
            },
            options: {
              responsive: true,
              maintainAspectRatio: false,
              interaction: { mode: 'index', intersect: false },
              scales: x ? { x, y: { beginAtZero: true } } : { y: { beginAtZero: true } },
            },
          };
    const chart = new Chart(canvas.current!, config);
    // What Chart.js was given, per dataset: a canvas cannot be read, so tests read this.
    canvas.current!.parentElement!.dataset['drawn'] = JSON.stringify({
      labels: config.data.labels,
      datasets: config.data.datasets.map((d) => d.data),
    });
    return () => chart.destroy();
  }, [kind, labels, series, time?.timezone, time?.unit]);
  return (
    <div class="chart" data-x-axis={kind === 'pie' ? undefined : time ? 'time' : 'category'}>
      <canvas ref={canvas} role="img" aria-label={title} />
    </div>
  );
}

export interface ChartTime {
  timezone: string;
  unit: 'hour' | 'day' | 'week' | 'month';
}

/** A bucket start as the server labels it (wall time in the project's timezone) in epoch milliseconds. */
export function bucketMillis(label: string, timezone: string): number {
  return DateTime.fromISO(label.replace(' ', 'T'), { zone: timezone }).toMillis();
}

function timeAxis(time: ChartTime) {
  return {
    type: 'time' as const,
    adapters: { date: { zone: time.timezone } },
    time: { unit: time.unit, tooltipFormat: time.unit === 'hour' ? 'd LLL yyyy HH:mm' : 'd LLL yyyy' },
    title: { display: true, text: `Time (${time.timezone})` },
    ticks: { maxRotation: 0, autoSkip: true },
  };
}
