// deploy/grafana/sightline-dashboard.json against the metrics the apps export: every metric a
// panel queries is one a Sightline process registers (libs/metrics, with Node's default
// metrics), every label it filters or groups by is one that metric has. Reads repo files only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMetrics } from '@sightline/metrics';

interface Panel {
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(join(__dirname, '..', 'deploy', 'grafana', 'sightline-dashboard.json'), 'utf8')) as { panels: Panel[] };
const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** Labels Prometheus adds to every scraped series; a metric's own `job` label arrives as `exported_job` (honor_labels: false). */
const TARGET_LABELS = ['instance', 'job'];

/** Every series name the apps export, with its labels (a histogram's _bucket, _sum and _count). */
function exportedSeries(): Map<string, string[]> {
  const series = new Map<string, string[]>();
  for (const metric of createMetrics({ defaultMetrics: true }).registry.getMetricsAsArray()) {
    const { name, labelNames = [] } = metric as unknown as { name: string; labelNames?: string[] };
    const labels = labelNames.map((l) => (TARGET_LABELS.includes(l) ? `exported_${l}` : l));
    const type = (metric as unknown as { type?: string }).type ?? (metric.constructor.name === 'Histogram' ? 'histogram' : '');
    if (type === 'histogram') {
      series.set(`${name}_bucket`, [...labels, 'le']);
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else series.set(name, labels);
  }
  return series;
}
const exported = exportedSeries();

/** The metric selectors of a PromQL expression (`name{matchers}`) and the labels its `by (…)` clauses name. */
function parse(expr: string): { selectors: { name: string; labels: string[] }[]; grouping: string[]; bare: string[] } {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const selectors = [...withoutStrings.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)].map((m) => ({
    name: m[1]!,
    labels: [...m[2]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!),
  }));
  const grouping = [...withoutStrings.matchAll(/\b(?:by|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((l) => l.trim())
      .filter(Boolean),
  );
  // Anything else that is a name must be a function or aggregation (followed by "(") or a keyword:
  // a metric written without braces would escape the check above.
  const rest = withoutStrings
    .replace(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const bare = [...rest.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)].filter((m) => !m[2]).map((m) => m[1]!);
  return { selectors, grouping, bare };
}

describe('deploy/grafana/sightline-dashboard.json', () => {
  it('has panels, each with at least one query', () => {
    expect(dashboard.panels.length).toBeGreaterThan(0);
    expect(dashboard.panels.filter((p) => (p.targets ?? []).length === 0).map((p) => p.title)).toEqual([]);
  });

  it.each(exprs.map((e) => [e.panel, e.expr]))('%s: queries exported metrics by their own labels (%s)', (_panel, expr) => {
    const { selectors, grouping, bare } = parse(expr);
    expect(bare).toEqual([]);
    expect(selectors.length).toBeGreaterThan(0);
    const unknown = selectors.filter((s) => !exported.has(s.name)).map((s) => s.name);
    expect(unknown).toEqual([]);
    const labelsOf = new Set([...selectors.flatMap((s) => exported.get(s.name) ?? []), ...TARGET_LABELS]);
    const wrongLabels = [...selectors.flatMap((s) => s.labels), ...grouping].filter((l) => !labelsOf.has(l));
    expect(wrongLabels).toEqual([]);
  });

  it('covers ingest rate, drops by reason, lag, decide latency, query latency by kind and job runs', () => {
    const queried = new Set(exprs.flatMap((e) => parse(e.expr).selectors.map((s) => s.name)));
    for (const name of [
      'ingest_events_accepted_total',
      'ingest_events_dropped_total',
      'worker_consumer_lag_messages',
      'worker_consumer_group_lag_messages',
      'http_request_duration_seconds_bucket',
      'insight_query_duration_seconds_bucket',
      'job_runs_total',
    ]) {
      expect(queried).toContain(name);
    }
    // The decide panels select the routes decide is counted under (apps/api/src/decide/decide.route.ts).
    const decide = exprs.filter((e) => e.expr.includes('http_request_duration_seconds_bucket')).map((e) => /route=~"([^"]+)"/.exec(e.expr)?.[1]);
    expect(decide.length).toBeGreaterThan(0);
    for (const pattern of decide) for (const route of ['/decide', '/flags']) expect(new RegExp(`^(?:${pattern})$`).test(route)).toBe(true);
  });

  it('would catch a metric the apps do not export, or a label it does not have', () => {
    const { selectors } = parse('sum by (reason) (rate(ingest_events_refused_total{route="x"}[5m]))');
    expect(selectors.filter((s) => !exported.has(s.name)).map((s) => s.name)).toEqual(['ingest_events_refused_total']);
    expect(parse('rate(ingest_events_dropped_total[5m])').bare).toEqual(['ingest_events_dropped_total']);
    expect(exported.get('ingest_events_dropped_total')).not.toContain('route');
  });
});
