// The order the web app loads a page in, in headless Chromium against `npm start`'s all-in-one
// service: the page's own query goes out beside /api/users/@me/ (not after it), the pickers' lists
// only once the chart is drawn, and a dashboard draws each tile when its own query answers (a fast
// tile while a slow one still loads, on the first read and on a refresh). Requests are held with the browser's request interception:
// a response that is late on purpose, the only way to make one tile slow on cue.
import { randomUUID } from 'node:crypto';
import type { Page, Route } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations, setupLink } from './web-app-browser';

/** A route held until `release()`; `seen` resolves when the browser asks for it. */
function holdRoute(): { handler: (route: Route) => Promise<void>; seen: Promise<void>; release: () => void } {
  let markSeen!: () => void;
  let release!: () => void;
  const seen = new Promise<void>((resolve) => (markSeen = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    seen,
    release,
    handler: async (route) => {
      markSeen();
      await released;
      await route.continue();
    },
  };
}

/** The lists the Trends page's pickers and forms read, none of which its chart needs. */
const SECONDARY = /\/(event_definitions\/\?limit=500|property_definitions\/|groups_types\/|actions\/|dashboards\/\?limit)/;

describe('how the web app loads Trends and a dashboard', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    target = await startSdkTarget('web_paint');
    const now = Date.now();
    await sendBatch(
      target,
      ['alice', 'bob', 'carol'].flatMap((distinctId, i) => [
        { event: '$pageview', distinct_id: distinctId, uuid: randomUUID(), timestamp: new Date(now - (10 + i) * 60_000).toISOString(), properties: {} },
        { event: 'signed_up', distinct_id: distinctId, uuid: randomUUID(), timestamp: new Date(now - (5 + i) * 60_000).toISOString(), properties: {} },
      ]),
    );
    ({ browser, page, consoleErrors } = await openPage());
    await page.goto(setupLink(target)!);
    await page.getByLabel('E-mail').fill('paint@example.com');
    await page.getByLabel('Password (at least 8 characters)').fill('a long enough password');
    await page.getByRole('button', { name: 'Save and sign in' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await target?.close();
  });

  it('asks for the trend before /api/users/@me/ answers, and for the pickers’ lists only once the chart is drawn', async () => {
    const me = holdRoute();
    const trend = holdRoute();
    await page.route('**/api/users/@me/', me.handler);
    await page.route('**/insights/trend/', trend.handler);
    const asked: string[] = [];
    const onRequest = (request: { url(): string }) => asked.push(new URL(request.url()).pathname + new URL(request.url()).search);
    page.on('request', onRequest);
    try {
      const q = { series: [{ event: '$pageview', math: 'total' }], breakdown: '', interval: 'day', date_from: '-14d', display: 'line' };
      const opened = page.goto(`${target.base}/trends?q=${encodeURIComponent(JSON.stringify(q))}`);
      // The trend is asked for while @me is still held.
      await Promise.all([me.seen, trend.seen]);
      me.release();
      await page.getByRole('heading', { name: 'Trends' }).waitFor();
      // The page is drawn with its skeleton: every list a picker would have asked for on
      // rendering would have been asked by now; none is until the chart is drawn.
      await page.getByTestId('chart-skeleton').waitFor();
      expect(asked.filter((path) => SECONDARY.test(path))).toEqual([]);
      const answeredAt = asked.length;
      trend.release();
      await opened;
      await page.locator('[data-testid="trend-result"] .chart[data-drawn]').waitFor();
      await waitFor(() => asked.slice(answeredAt).some((path) => path.includes('/event_definitions/?limit=500')), {
        description: 'the event picker’s list asked for after the chart',
      });
      const total = await page.getByTestId('trend-series').locator('tbody tr').first().getAttribute('data-total');
      expect(Number(total)).toBe(3);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      page.off('request', onRequest);
      await page.unrouteAll();
    }
  });

  it('draws a dashboard’s fast tile while its slow tile is still computing, then the slow one', async () => {
    const dashboard = (await target.api('POST', '/api/environments/1/dashboards/', { name: 'Paint order' })).body as { id: number };
    // Ranges no other request asked for, so neither tile is in the server's cache.
    const fast = (
      await target.api('POST', '/api/environments/1/insights/', {
        name: 'Fast pageviews',
        saved: true,
        filters: { insight: 'TRENDS', events: [{ id: '$pageview', math: 'total', order: 0 }], date_from: '-3d', display: 'ActionsTable' },
        dashboards: [dashboard.id],
      })
    ).body as { id: number };
    const slow = (
      await target.api('POST', '/api/environments/1/insights/', {
        name: 'Slow funnel',
        saved: true,
        filters: {
          insight: 'FUNNELS',
          events: [
            { id: '$pageview', order: 0 },
            { id: 'signed_up', order: 1 },
          ],
          date_from: '-3d',
        },
        dashboards: [dashboard.id],
      })
    ).body as { id: number };
    const slowTile = holdRoute();
    await page.route((url) => url.pathname === `/api/environments/1/insights/${slow.id}/` && url.searchParams.has('from_dashboard'), slowTile.handler);
    try {
      await page.goto(`${target.base}/dashboards/${dashboard.id}`);
      const tile = (name: string) => page.locator(`[data-testid="dashboard-tile"][data-insight="${name}"]`);
      await tile('Fast pageviews').getByTestId('trend-series').waitFor({ state: 'attached' });
      await slowTile.seen;
      // The fast tile has its numbers while the slow one shows its skeleton.
      expect(Number(await tile('Fast pageviews').getByTestId('trend-series').locator('tbody tr').first().getAttribute('data-total'))).toBe(3);
      expect(await tile('Slow funnel').getByTestId('chart-skeleton').count()).toBe(1);
      expect(await tile('Slow funnel').getByTestId('tile-computed-at').textContent()).toBe('Computing…');
      expect(await seriousViolations(page)).toEqual([]);
      slowTile.release();
      await tile('Slow funnel').getByTestId('funnel-result').waitFor();
      const steps = await tile('Slow funnel')
        .locator('[data-testid="funnel-result"] li[data-count]')
        .evaluateAll((items) => items.map((item) => Number(item.getAttribute('data-count'))));
      expect(steps).toEqual([3, 3]);
      expect(await tile('Slow funnel').getByTestId('chart-skeleton').count()).toBe(0);
      expect(fast.id).toBeLessThan(slow.id);

      // Refreshing asks for each tile again on its own: the fast one is redrawn while the slow
      // one, held again, keeps its steps and says it is refreshing.
      const slowRefresh = holdRoute();
      await page.route((url) => url.pathname === `/api/environments/1/insights/${slow.id}/` && url.searchParams.get('refresh') === 'true', slowRefresh.handler);
      const computedAt = (name: string) => tile(name).getByTestId('tile-computed-at');
      const fastBefore = await computedAt('Fast pageviews').getAttribute('data-last-refresh');
      await page.getByRole('button', { name: 'Refresh all tiles' }).click();
      await slowRefresh.seen;
      await waitFor(async () => (await computedAt('Fast pageviews').getAttribute('data-last-refresh')) !== fastBefore, {
        description: 'the fast tile recomputed',
      });
      expect(await computedAt('Slow funnel').textContent()).toBe('Refreshing…');
      expect(await tile('Slow funnel').getByTestId('funnel-result').count()).toBe(1);
      slowRefresh.release();
      await waitFor(async () => (await computedAt('Slow funnel').textContent())!.startsWith('Computed'), { description: 'the slow tile recomputed' });
    } finally {
      await page.unrouteAll();
    }
    expect(consoleErrors).toEqual([]);
  });
});
