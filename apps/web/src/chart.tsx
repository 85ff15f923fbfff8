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
import { formatNumber } from './format';

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

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
  /** Names the colour: a breakdown value keeps its colour across charts. Absent: by position. */
  colorKey?: string;
}

/** A colour chosen by a name (FNV-1a over its characters), so the same value is drawn alike everywhere. */
export function colorOf(key: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return PALETTE[(hash >>> 0) % PALETTE.length]!;
}

const seriesColor = (s: ChartSeries, i: number) => (s.colorKey === undefined ? PALETTE[i % PALETTE.length]! : colorOf(s.colorKey));

/** A pie slice's legend: its value and its share of the whole. */
function sliceLabel(label: string, value: number, whole: number): string {
  const share = whole === 0 ? 0 : (value / whole) * 100;
  return `${label}: ${formatNumber(value)} (${formatNumber(share)}%)`;
}

/** A Chart.js canvas; the numbers it draws are also in the caller's hidden table (a canvas cannot be read). */
export function ChartCanvas({
  kind,
  labels,
  series,
  title,
  time,
  onPoint,
}: {
  kind: 'line' | 'bar' | 'pie';
  labels: string[];
  series: ChartSeries[];
  title: string;
  /** Labels are bucket starts (`yyyy-MM-dd[ HH:mm:ss]` in `timezone`): drawn on a time scale. */
  time?: ChartTime;
  /** A click on a point, bar or slice: its dataset and its index in the labels. */
  onPoint?: (datasetIndex: number, index: number) => void;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  // The latest handler, read at click time: the chart is not rebuilt when only the handler changes.
  const pointHandler = useRef(onPoint);
  pointHandler.current = onPoint;
  useEffect(() => {
    const x = time ? timeAxis(time) : undefined;
    const config: ChartConfiguration =
      kind === 'pie'
        ? {
            type: 'pie',
            data: {
              labels: series.map((s) =>
                sliceLabel(
                  s.label,
                  sum(s.values),
                  series.reduce((all, t) => all + sum(t.values), 0),
                ),
              ),
              datasets: [{ data: series.map((s) => sum(s.values)), backgroundColor: series.map(seriesColor) }],
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
                borderColor: seriesColor(s, i),
                backgroundColor: seriesColor(s, i),
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
    config.options = {
      ...config.options,
      onClick: (event, _elements, chart) => {
        if (!pointHandler.current || !event.native) return;
        const [hit] = chart.getElementsAtEventForMode(event.native, 'nearest', { intersect: true }, true);
        if (hit) pointHandler.current(hit.datasetIndex, hit.index);
      },
    } as typeof config.options;
    const chart = new Chart(canvas.current!, config);
    // What Chart.js was given, per dataset: a canvas cannot be read, so tests read this.
    canvas.current!.parentElement!.dataset['drawn'] = JSON.stringify({
      labels: config.data.labels,
      datasets: config.data.datasets.map((d) => d.data),
      colors: config.data.datasets.map((d) => d.backgroundColor),
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
    // Hours name their day too: a range over midnight reads without guessing.
    time: {
      unit: time.unit,
      tooltipFormat: time.unit === 'hour' ? 'd LLL yyyy HH:mm' : 'd LLL yyyy',
      displayFormats: { hour: 'd LLL HH:mm', day: 'd LLL', week: 'd LLL', month: 'LLL yyyy' },
    },
    title: { display: true, text: `Time (${time.timezone})` },
    ticks: { maxRotation: 0, autoSkip: true },
  };
}
