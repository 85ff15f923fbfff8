/**
 * Web app benchmark: first meaningful paint of Trends, Funnels and a dashboard over the analytics
 * bench data (10 million events, bench/analytics-data.ts), with every cache cold: the api app keeps
 * no answers (insightCacheTtlMs 0) and each run starts with the browser's HTTP cache cleared.
 *
 *   npm run bench:web-paint       (BENCH_EVENTS, default 10,000,000; BENCH_RUNS, default 3)
 *
 * "Meaningful" is the moment the page first shows its result: the trend's chart, the funnel's
 * steps, every tile of the dashboard drawn (the next animation frame after it appears in the
 * page), in milliseconds from the navigation's start. Beside each it prints the same query's
 * time over HTTP alone (POST with refresh, no browser), so the browser's own share is visible on
 * a loaded machine. Target: under 1 s.
 */
import { issueFirstStartPasswordToken } from '@sightline/accounts';
import { launchChromium } from '@sightline/testkit';
import { PERSONAL_KEY, startAnalyticsBench, NOW } from './analytics-data';
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
declare const window: { __meaningfulPaint?: number };

/**
 * Runs in the page before its own script: the first time `ready()` holds after a DOM change, the
 * time of the next frame is kept in window.__meaningfulPaint.
 */
const PAINT_PROBE = `(() => {
  const ready = () => {
    const path = location.pathname;
    if (path === '/trends') return !!document.querySelector('[data-testid="trend-result"] canvas, [data-testid="trend-result"] table');
    if (path === '/funnels') return !!document.querySelector('[data-testid="funnel-result"]');
    const tiles = [...document.querySelectorAll('[data-testid="dashboard-tile"]')];
    return tiles.length > 0 && tiles.every((t) => t.querySelector('[data-testid="trend-result"], [data-testid="funnel-result"]'));
  };
  const observer = new MutationObserver(() => {
    if (!ready()) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.__meaningfulPaint = performance.now(); });
  });
  observer.observe(document, { childList: true, subtree: true });
})();`;

async function main(): Promise<void> {
  const bench = await startAnalyticsBench(EVENTS);
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

    const pages: { name: string; path: string; http: () => Promise<unknown> }[] = [
      {
        name: 'Trends',
        path: `/trends?q=${encodeURIComponent(JSON.stringify(TREND))}`,
        http: () => api('POST', '/api/environments/1/insights/trend/', { ...trendBody(), refresh: true }),
      },
      {
        name: 'Funnels',
        path: `/funnels?q=${encodeURIComponent(JSON.stringify(FUNNEL))}`,
        http: () => api('POST', '/api/environments/1/insights/funnel/', { ...funnelBody(), refresh: true }),
      },
      { name: 'Dashboard', path: `/dashboards/${dashboard.id}`, http: () => Promise.all([pages[0]!.http(), pages[1]!.http()]) },
    ];
    const rows: string[][] = [];
    for (const page of pages) {
      const paints: number[] = [];
      const https: number[] = [];
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
        if (TRACE && run === RUNS - 1) console.log(`\n${page.name}: requests until the paint\n${await waterfall(tab)}`);
        await tab.close();
        const started = performance.now();
        await page.http();
        https.push(performance.now() - started);
      }
      const paint = median(paints);
      rows.push([page.name, paint.toFixed(0), median(https).toFixed(0), paint <= TARGET_MS ? 'yes' : 'NO']);
    }
    console.log(`\nFirst meaningful paint, cold caches, ${EVENTS.toLocaleString('en-US')} events, median of ${RUNS} runs (1440 × 900):`);
    console.log(`${'page'.padEnd(10)} ${'paint ms'.padStart(9)} ${'HTTP ms'.padStart(8)}  under ${TARGET_MS} ms`);
    for (const [name, paint, http, ok] of rows) console.log(`${name!.padEnd(10)} ${paint!.padStart(9)} ${http!.padStart(8)}  ${ok}`);
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
function funnelBody() {
  return { insight: 'FUNNELS', events: FUNNEL.steps.map((id, order) => ({ id, order, type: 'events' })), funnel_window_days: 14, date_from: '-30d' };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
