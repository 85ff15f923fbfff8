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
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

// Only the pieces the app draws, so the rest of Chart.js stays out of the bundle.
Chart.register(LineController, BarController, PieController, LineElement, BarElement, PointElement, ArcElement, CategoryScale, LinearScale, Tooltip, Legend);
Chart.defaults.animation = false;
Chart.defaults.font.family = 'system-ui, sans-serif';

export const PALETTE = ['#1d4aff', '#f04f58', '#2aa876', '#f7a501', '#8a2be2', '#00a3c4', '#e05d9f', '#6b7280', '#92400e', '#0f766e'];

export interface ChartSeries {
  label: string;
  values: number[];
}

/** A Chart.js canvas; the numbers it draws are also in the caller's hidden table (a canvas cannot be read). */
export function ChartCanvas({ kind, labels, series, title }: { kind: 'line' | 'bar' | 'pie'; labels: string[]; series: ChartSeries[]; title: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
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
              labels,
              datasets: series.map((s, i) => ({
                label: s.label,
                data: s.values,
                borderColor: PALETTE[i % PALETTE.length],
                backgroundColor: PALETTE[i % PALETTE.length],
                tension: 0,
                pointRadius: 2,
              })),
            },
            options: { responsive: true, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false }, scales: { y: { beginAtZero: true } } },
          };
    const chart = new Chart(canvas.current!, config);
    return () => chart.destroy();
  }, [kind, labels, series]);
  return (
    <div class="chart">
      <canvas ref={canvas} role="img" aria-label={title} />
    </div>
  );
}
