/**
 * Web app benchmark: first meaningful paint of Trends, Funnels and a dashboard over the analytics
 * bench data (10 million events, bench/analytics-data.ts), with every cache cold: the api app keeps
 * no answers (insightCacheTtlMs 0) and each run starts with a new session and the browser's HTTP
 * cache cleared.
 *
 *   npm run bench:web-paint       (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 3)
 *
 * The pages are opened as a user opens them: Trends and Funnels from the nav (no query in the
 * address, so the page's own default query and date range: the last 7 days of pageviews; a funnel
 * of the project's two most common events over 30 days, which the page looks up first), then a
 * heavier query of each given in the address, and a dashboard of two tiles.
 *
 * "Meaningful" is the next animation frame after the page shows its result with its numbers: the
 * trend's chart drawn by Chart.js (the chart's `data-drawn`, set once the canvas has been drawn,
 * not the skeleton or an empty canvas), the funnel's steps, on the dashboard its first tile and
 * then every tile; in milliseconds from the navigation's start. Beside each it prints the same
 * query's time over HTTP alone (POST with refresh, no browser), so the browser's and the page's
 * own share is visible on a loaded machine. Target: under 1 s.
 *
 * The data is written straight into ClickHouse, so the event and property definitions the worker
 * would have recorded (names and volumes, which the pickers and the new funnel read) are written
 * here too.
 */
import { issueFirstStartPasswordToken } from '@sightline/accounts';
import { collectDefinitionSightings, recordDefinitionSightings } from '@sightline/event-property-definitions';
import { launchChromium } from '@sightline/testkit';
import { PERSONAL_KEY, startAnalyticsBench, NOW, PERSONS } from './analytics-data';
import { median } from './bench-process';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 10_000_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
const TARGET_MS = 1000;
/** BENCH_TRACE=1: also print each page's requests (start and end, ms from the navigation) in its last run. */
const TRACE = process.env['BENCH_TRACE'] === '1';
const EMAIL = 'bench@example.com';
const PASSWORD = 'bench password long enough';

const TREND = { series: [{ event: '$pageview', math: 'total' }], breakdown: '$browser', interval: 'day', date_from: '-30d', display: 'line' };
const FUNNEL = { steps: ['$pageview', 'signup', 'purchase'], order: 'ordered', window_days: 14, date_from: '-30d' };

// What the page's own script sees, for the script the page runs (this file is compiled without the DOM types).
declare const window: { __meaningfulPaint?: number; __firstTilePaint?: number };

/**
 * Runs in the page before its own script. A result counts once its numbers are drawn: a trend's
 * chart once Chart.js has drawn it (ChartCanvas sets `data-drawn` after), a trend without a chart
 * (number, table) or a funnel as soon as it is in the page. After each DOM change, the first time
 * the page (or a dashboard's first tile) is ready, the time of the next frame is kept.
 */
const PAINT_PROBE = `(() => {
  const drawn = (root) => {
    const trend = root.querySelector('[data-testid="trend-result"]');
    if (trend) return !trend.querySelector('.chart') || !!trend.querySelector('.chart[data-drawn]');
    return !!root.querySelector('[data-testid="funnel-result"]');
  };
  const at = (name) => requestAnimationFrame(() => { window[name] = performance.now(); });
  let firstTile = false;
  const check = () => {
    const path = location.pathname;
    if (path === '/trends' || path === '/funnels') return drawn(document);
    const tiles = [...document.querySelectorAll('[data-testid="dashboard-tile"]')];
    if (!firstTile && tiles.some(drawn)) { firstTile = true; at('__firstTilePaint'); }
    return tiles.length > 0 && tiles.every(drawn);
  };
  const observer = new MutationObserver(() => {
    if (!check()) return;
    observer.disconnect();
    at('__meaningfulPaint');
  });
  observer.observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-drawn'] });
})();`;

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
  await recordDefinitions(bench.db);
  const browser = await launchChromium();
  await browser.context.addInitScript({ content: PAINT_PROBE });
  try {
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${bench.base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };
    // The first user's password through the first-start link, then a session for the browser.
    const token = await issueFirstStartPasswordToken(bench.db, NOW);
    if (!token) throw new Error('no first-start link could be issued');
    const setup = await fetch(`${bench.base}/api/password_setup/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, email: EMAIL, password: PASSWORD }),
    });
    if (!setup.ok) throw new Error(`password setup: ${setup.status} ${await setup.text()}`);
    const signIn = async () => {
      const res = await fetch(`${bench.base}/api/login/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
      });
      if (!res.ok) throw new Error(`sign in: ${res.status}`);
      // The server's clock is the data's (January 2024), so its cookies' expiry is in the past for
      // the browser: they are given to the browser as session cookies instead.
      return res.headers.getSetCookie().map((cookie) => {
        const pair = cookie.split(';')[0]!;
        const at = pair.indexOf('=');
        return { name: pair.slice(0, at), value: pair.slice(at + 1), url: bench.base };
      });
    };

    const dashboard = await api<{ id: number }>('POST', '/api/environments/1/dashboards/', { name: 'Bench' });
    await api('POST', '/api/environments/1/insights/', {
      name: 'Pageviews by browser',
      saved: true,
      dashboards: [dashboard.id],
      filters: { insight: 'TRENDS', events: [{ id: '$pageview', type: 'events', math: 'total' }], breakdown: '$browser', interval: 'day', date_from: '-30d' },
    });
    await api('POST', '/api/environments/1/insights/', {
      name: 'Pageview to purchase',
      saved: true,
      dashboards: [dashboard.id],
      filters: {
        insight: 'FUNNELS',
        events: FUNNEL.steps.map((id, order) => ({ id, order, type: 'events' })),
        funnel_window_days: 14,
        date_from: '-30d',
      },
    });

    // What a new funnel starts from: the project's two most common events.
    const top = await api<{ results: { name: string }[] }>('GET', '/api/projects/1/event_definitions/?limit=2');
    const topSteps = top.results.map((d) => d.name);
    const trendPost = (body: Record<string, unknown>) => () => api('POST', '/api/environments/1/insights/trend/', { ...body, refresh: true });
    const funnelPost = (steps: string[]) => () => api('POST', '/api/environments/1/insights/funnel/', { ...funnelBody(steps), refresh: true });
    const pages: { name: string; path: string; http: () => Promise<unknown>; firstTile?: boolean }[] = [
      { name: 'Trends', path: '/trends', http: trendPost(DEFAULT_TREND_BODY) },
      { name: 'Trends by browser, 30 d', path: `/trends?q=${encodeURIComponent(JSON.stringify(TREND))}`, http: trendPost(trendBody()) },
      { name: `Funnels (${topSteps.join(' → ')})`, path: '/funnels', http: funnelPost(topSteps) },
      { name: '3-step funnel, 30 d', path: `/funnels?q=${encodeURIComponent(JSON.stringify(FUNNEL))}`, http: funnelPost(FUNNEL.steps) },
      {
        name: 'Dashboard',
        path: `/dashboards/${dashboard.id}`,
        http: () => Promise.all([trendPost(trendBody())(), funnelPost(FUNNEL.steps)()]),
        firstTile: true,
      },
    ];
    const rows: string[][] = [];
    for (const page of pages) {
      const paints: number[] = [];
      const https: number[] = [];
      const firstTiles: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        // A fresh session and an empty HTTP cache each run.
        await browser.context.clearCookies();
        await browser.context.addCookies(await signIn());
        const tab = await browser.context.newPage();
        await tab.setViewportSize({ width: 1440, height: 900 });
        const cdp = await browser.context.newCDPSession(tab);
        await cdp.send('Network.clearBrowserCache');
        await tab.goto(`${bench.base}${page.path}`);
        await tab.waitForFunction(() => window.__meaningfulPaint !== undefined, undefined, { timeout: 120_000 });
        paints.push(await tab.evaluate(() => window.__meaningfulPaint!));
        if (page.firstTile) firstTiles.push(await tab.evaluate(() => window.__firstTilePaint!));
        if (TRACE && run === RUNS - 1) console.log(`\n${page.name}: requests until the paint\n${await waterfall(tab)}`);
        await tab.close();
        const started = performance.now();
        await page.http();
        https.push(performance.now() - started);
      }
      const paint = median(paints);
      if (page.firstTile) {
        const first = median(firstTiles);
        rows.push([`${page.name}: first tile`, first.toFixed(0), '', first <= TARGET_MS ? 'yes' : 'NO']);
        rows.push([`${page.name}: every tile`, paint.toFixed(0), median(https).toFixed(0), paint <= TARGET_MS ? 'yes' : 'NO']);
      } else rows.push([page.name, paint.toFixed(0), median(https).toFixed(0), paint <= TARGET_MS ? 'yes' : 'NO']);
    }
    console.log(`\nFirst meaningful paint, cold caches, ${EVENTS.toLocaleString('en-US')} events, median of ${RUNS} runs (1440 × 900):`);
    const width = Math.max(...rows.map(([name]) => name!.length));
    console.log(`${'page'.padEnd(width)} ${'paint ms'.padStart(9)} ${'HTTP ms'.padStart(8)}  under ${TARGET_MS} ms`);
    for (const [name, paint, http, ok] of rows) console.log(`${name!.padEnd(width)} ${paint!.padStart(9)} ${http!.padStart(8)}  ${ok}`);
  } finally {
    await browser.close();
    await bench.close();
  }
}

/** The page's resource requests as the browser timed them: what the time before the paint went to. */
async function waterfall(tab: { evaluate<T>(fn: () => T): Promise<T> }): Promise<string> {
  const entries = await tab.evaluate(() =>
    (performance as unknown as { getEntriesByType(type: string): { name: string; startTime: number; responseEnd: number }[] })
      .getEntriesByType('resource')
      .map((e) => [e.name, e.startTime, e.responseEnd] as [string, number, number]),
  );
  return entries
    .map(([name, start, end]) => `  ${start.toFixed(0).padStart(6)} → ${end.toFixed(0).padStart(6)}  ${new URL(name).pathname.slice(0, 80)}`)
    .join('\n');
}

/** The Trends page's own default (what it asks with nothing in the address), as it sends it. */
const DEFAULT_TREND_BODY = { insight: 'TRENDS', events: [{ id: '$pageview', type: 'events', order: 0, math: 'total' }], interval: 'day', date_from: '-7d' };

/**
 * The definitions the worker records as it writes the events (analytics-data.ts writes them
 * straight into ClickHouse): each event name and property with its volume, in the generated
 * mix (3 in 5 events are pageviews, then signup and purchase).
 */
async function recordDefinitions(db: Parameters<typeof recordDefinitionSightings>[0]): Promise<void> {
  const sample = ['$pageview', '$pageview', '$pageview', 'signup', 'purchase'].map((event) => ({
    teamId: 1,
    event,
    properties: { $browser: 'Chrome', price: 1, $session_id: 's1' },
  }));
  const sightings = collectDefinitionSightings(sample);
  const scale = EVENTS / sample.length;
  await recordDefinitionSightings(db, {
    events: sightings.events.map((e) => ({ ...e, volume: e.volume * scale })),
    properties: [
      ...sightings.properties.map((p) => ({ ...p, volume: p.volume * scale })),
      { teamId: 1, type: 2, name: 'plan', propertyType: 'String', volume: PERSONS },
    ],
  });
}

/** The trend and funnel as the pages send them (their legacy filters), for the HTTP-only timing. */
function trendBody() {
  return {
    insight: 'TRENDS',
    events: [{ id: '$pageview', type: 'events', order: 0, math: 'total' }],
    breakdown: '$browser',
    interval: 'day',
    date_from: '-30d',
  };
}
function funnelBody(steps: string[]) {
  return { insight: 'FUNNELS', events: steps.map((id, order) => ({ id, order, type: 'events' })), funnel_window_days: 14, date_from: '-30d' };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
