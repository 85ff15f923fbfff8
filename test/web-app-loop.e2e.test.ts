// The analyst's loop in headless Chromium against `npm start`'s all-in-one service: a bar of totals
// drawn from the API's aggregated values, when a result was computed and a refresh that shows a
// new event (trends and dashboards), an existing insight put on dashboards (from its page and from
// the dashboard) without a copy, PostHog's date range presets and a custom range, a funnel step's
// persons (the actors modal and its CSV) equal to the API's actors query, a person-property
// breakdown (a row's persons as the trend actors query lists them) and the test-account filter. Screenshots 80 and up go to test-output/web-app/.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations as axeFindings, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';

const MINUTE = 60_000;

/**
 * Four people view pages; alice and bob sign up (plan pro / free), carol and dave do not (plan free
 * / none). pageviews: alice 3 × Chrome, bob 2 × Chrome + 1 × Firefox, carol 2 × Firefox, dave 1 × Safari.
 */
function generatedEvents(base: number) {
  const event = (name: string, distinctId: string, at: number, properties: Record<string, unknown> = {}) => ({
    event: name,
    distinct_id: distinctId,
    uuid: randomUUID(),
    timestamp: new Date(base + at * MINUTE).toISOString(),
    properties,
  });
  return [
    event('$pageview', 'alice', 0, { $browser: 'Chrome', $set: { plan: 'pro' } }),
    event('$pageview', 'alice', 1, { $browser: 'Chrome' }),
    event('$pageview', 'alice', 2, { $browser: 'Chrome' }),
    event('signed_up', 'alice', 10),
    event('$pageview', 'bob', 4, { $browser: 'Chrome', $set: { plan: 'free' } }),
    event('$pageview', 'bob', 5, { $browser: 'Chrome' }),
    event('$pageview', 'bob', 6, { $browser: 'Firefox' }),
    event('signed_up', 'bob', 34),
    event('$pageview', 'carol', 7, { $browser: 'Firefox', $set: { plan: 'free' } }),
    event('$pageview', 'carol', 8, { $browser: 'Firefox' }),
    event('$pageview', 'dave', 11, { $browser: 'Safari' }),
  ];
}

const trendUrl = (base: string, q: Record<string, unknown>) =>
  `${base}/trends?q=${encodeURIComponent(JSON.stringify({ series: [{ event: '$pageview', math: 'total' }], breakdown: '', interval: 'day', date_from: '-7d', display: 'line', ...q }))}`;

describe('the analysis loop in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];
  let base: number;

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_loop');
    // Within the hour before now (and after today's midnight unless the test runs just after it).
    base = Date.now() - 50 * MINUTE;
    await sendBatch(target, generatedEvents(base));
    await waitFor(async () => (await target.person('carol'))?.properties['plan'] === 'free', { timeoutMs: 30_000, description: "carol's plan" });
    ({ browser, page, consoleErrors } = await openPage());
    await page.goto(setupLink(target)!);
    await page.getByLabel('E-mail').fill('loop@example.com');
    await page.getByLabel('Password (at least 8 characters)').fill('a long enough password');
    await page.getByRole('button', { name: 'Save and sign in' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await target?.close();
  });

  const screenshot = (name: string) => page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`), fullPage: true });
  const seriousViolations = () => axeFindings(page);
  const trendRows = () =>
    page
      .getByTestId('trend-series')
      .first()
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-breakdown'), Number(r.getAttribute('data-total'))] as [string, number]));
  const trendApi = async (filters: Record<string, unknown>) => {
    const answer = await target.api('POST', '/api/environments/1/insights/trend/', filters);
    expect(answer.status).toBe(200);
    return answer.body.result as { label: string; breakdown_value?: unknown; aggregated_value?: number; count: number }[];
  };
  /** Sends one event now and waits until it is stored. */
  const captureOne = async (distinctId: string) => {
    const uuid = randomUUID();
    const res = await fetch(`${target.base}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: target.projectKey, batch: [{ event: '$pageview', distinct_id: distinctId, uuid, properties: { $browser: 'Chrome' } }] }),
    });
    expect(res.status).toBe(200);
    await target.eventsOnceStored([uuid]);
  };

  it('draws a bar of totals whose bars are the API’s aggregated values, with and without a breakdown', async () => {
    const drawn = async () => {
      const { labels, datasets } = JSON.parse((await page.locator('.chart[data-drawn]').getAttribute('data-drawn'))!) as {
        labels: string[];
        datasets: number[][];
      };
      return { labels, datasets };
    };
    await page.goto(trendUrl(target.base, { display: 'bar_value' }));
    await page.locator('[data-testid="trend-result"][data-display="bar_value"] .chart[data-drawn]').waitFor();
    const plain = await trendApi({ events: [{ id: '$pageview', math: 'total' }], date_from: '-7d', display: 'ActionsBarValue' });
    expect(plain.map((s) => s.aggregated_value)).toEqual([9]);
    expect(await drawn()).toEqual({ labels: ['$pageview'], datasets: [[9]] });
    // A click on the bar opens the persons behind it: those the API's trend actors query lists.
    const canvas = page.locator('.chart[data-drawn] canvas');
    const box = (await canvas.boundingBox())!;
    await canvas.click({ position: { x: box.width / 2, y: box.height * 0.7 } });
    const modal = page.getByTestId('actors-modal');
    await modal.getByTestId('actors-table').waitFor();
    const shown = (await modal.locator('tr[data-actor-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-actor-id')))).sort();
    const listed = await target.api('POST', '/api/environments/1/query/', {
      query: {
        kind: 'ActorsQuery',
        select: ['id'],
        source: {
          kind: 'InsightActorsQuery',
          series: 0,
          source: {
            kind: 'TrendsQuery',
            series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
            dateRange: { date_from: '-7d' },
            trendsFilter: { display: 'ActionsBarValue' },
          },
        },
      },
    });
    expect(shown).toEqual((listed.body.results as [string][]).map(([id]) => id).sort());
    expect(shown).toHaveLength(4);
    await modal.getByRole('button', { name: 'Close' }).click();
    await modal.waitFor({ state: 'detached' });

    await page.goto(trendUrl(target.base, { display: 'bar_value', breakdown: '$browser' }));
    await page.locator('[data-testid="trend-result"][data-display="bar_value"] .chart[data-drawn]').waitFor();
    const broken = await trendApi({ events: [{ id: '$pageview', math: 'total' }], date_from: '-7d', display: 'ActionsBarValue', breakdown: '$browser' });
    const bars = await drawn();
    expect(bars.datasets).toEqual([broken.map((s) => s.aggregated_value)]);
    expect(bars.labels).toEqual(broken.map((s) => `$pageview · ${String(s.breakdown_value)}`));
    expect(bars.datasets[0]).toEqual([5, 3, 1]);
    await screenshot('80-trends-bar-totals');
    expect(await seriousViolations()).toEqual([]);
  });

  it('says when a trend was computed, and a refresh shows an event captured a second earlier', async () => {
    await page.goto(trendUrl(target.base, { date_from: '-24h', interval: 'hour' }));
    const computedAt = page.getByTestId('computed-at');
    await computedAt.waitFor();
    await waitFor(async () => expect(await trendRows()).toEqual([['', 9]]), { description: 'nine pageviews' });
    const first = await computedAt.getAttribute('data-last-refresh');
    expect(Date.parse(first!)).toBeGreaterThan(Date.now() - 5 * MINUTE);
    expect(await computedAt.textContent()).toMatch(/Computed \d{2} \w{3} \d{4}/);

    await captureOne('erin');
    // The same query again (a reload) is answered from the cache: still nine, and said to be cached.
    await page.reload();
    await computedAt.waitFor();
    await waitFor(async () => expect(await trendRows()).toEqual([['', 9]]), { description: 'the cached answer' });
    expect(await computedAt.textContent()).toMatch(/from the cache/);
    await computedAt.getByRole('button', { name: 'Refresh' }).click();
    await waitFor(async () => expect(await trendRows()).toEqual([['', 10]]), { description: 'the new event after a refresh' });
    expect(Date.parse((await computedAt.getAttribute('data-last-refresh'))!)).toBeGreaterThan(Date.parse(first!));
    expect(await computedAt.textContent()).not.toMatch(/from the cache/);
    await screenshot('81-trends-computed-at');
    expect(await seriousViolations()).toEqual([]);
  });

  it('computes dashboard tiles on the server, says when, and refreshes them', async () => {
    const dashboard = (await target.api('POST', '/api/environments/1/dashboards/', { name: 'Live numbers' })).body as { id: number };
    const saved = await target.api('POST', '/api/environments/1/insights/', {
      name: 'Pageviews today',
      saved: true,
      filters: { insight: 'TRENDS', events: [{ id: '$pageview', math: 'total', order: 0 }], date_from: '-24h', interval: 'hour', display: 'ActionsTable' },
      dashboards: [dashboard.id],
    });
    expect(saved.status).toBe(201);
    const tileTotal = async () =>
      Number(await page.getByTestId('dashboard-tile').getByTestId('trend-series').locator('tbody tr').first().getAttribute('data-total'));
    await page.goto(`${target.base}/dashboards/${dashboard.id}`);
    await page.getByTestId('dashboard-tile').getByTestId('trend-series').waitFor({ state: 'attached' });
    const before = await tileTotal();
    const computed = page.getByTestId('tile-computed-at');
    const firstComputed = await computed.getAttribute('data-last-refresh');
    expect(firstComputed).not.toBe('');

    await captureOne('frank');
    await page.getByRole('button', { name: 'Refresh all tiles' }).click();
    await waitFor(async () => expect(await tileTotal()).toBe(before + 1), { description: 'the tile after a refresh' });
    expect(Date.parse((await computed.getAttribute('data-last-refresh'))!)).toBeGreaterThan(Date.parse(firstComputed!));
    await screenshot('82-dashboard-refreshed');
    expect(await seriousViolations()).toEqual([]);
  });

  it('puts an existing insight on dashboards from its page and from the dashboard, never copying it', async () => {
    const team = (await target.api('POST', '/api/environments/1/dashboards/', { name: 'Team' })).body as { id: number };
    const create = async (name: string) =>
      (
        await target.api('POST', '/api/environments/1/insights/', {
          name,
          saved: true,
          filters: { insight: 'TRENDS', events: [{ id: 'signed_up', math: 'total', order: 0 }], date_from: '-7d', display: 'ActionsTable' },
        })
      ).body as { id: number };
    const signups = await create('Signups');
    const weekly = await create('Weekly signups');
    const insightCount = async () => (await target.api('GET', '/api/environments/1/insights/?saved=true&limit=100')).body.count as number;
    const count = await insightCount();

    await page.goto(`${target.base}/insights/${signups.id}`);
    await page.getByRole('heading', { name: 'Signups' }).waitFor();
    // A dashboard created from the insight's page, then an existing one.
    await page.getByLabel('Add to dashboard').selectOption({ label: 'New dashboard…' });
    await page.getByLabel('New dashboard name').fill('Created from an insight');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added to “Created from an insight”.').waitFor();
    await page.getByLabel('Add to dashboard').selectOption({ label: 'Team' });
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added to “Team”.').waitFor();
    await expect(page.getByTestId('insight-dashboards').textContent()).resolves.toMatch(/Created from an insight.*Team/);
    // Already on Team: not offered again.
    expect(await page.getByLabel('Add to dashboard').locator('option', { hasText: 'Team' }).count()).toBe(0);
    await screenshot('83-insight-add-to-dashboard');
    expect(await seriousViolations()).toEqual([]);

    // From the dashboard itself: another saved insight.
    await page.goto(`${target.base}/dashboards/${team.id}`);
    await page.getByRole('heading', { name: 'Team' }).waitFor();
    await page.getByLabel('Saved insight').selectOption({ label: 'Weekly signups' });
    await page.getByRole('button', { name: 'Add to this dashboard' }).click();
    await page.getByText('Added “Weekly signups”.').waitFor();
    await waitFor(
      async () =>
        expect((await page.getByTestId('dashboard-tile').evaluateAll((tiles) => tiles.map((t) => t.getAttribute('data-insight')))).sort()).toEqual([
          'Signups',
          'Weekly signups',
        ]),
      { description: 'each insight once on the dashboard' },
    );
    await screenshot('84-dashboard-added-tile');
    expect(await seriousViolations()).toEqual([]);
    expect(await insightCount()).toBe(count);
    const read = (await target.api('GET', `/api/environments/1/dashboards/${team.id}/`)).body as { tiles: { insight: { id: number } }[] };
    expect(read.tiles.map((t) => t.insight.id).sort()).toEqual([signups.id, weekly.id].sort());
    expect((await target.api('GET', `/api/environments/1/insights/${weekly.id}/`)).body.dashboards).toEqual([team.id]);

    // A dashboard created while saving a new insight: the insight lands on it, once.
    await page.goto(trendUrl(target.base, { display: 'table' }));
    await page.getByTestId('trend-result').waitFor();
    await page.getByLabel('Insight name').fill('Pageviews for the board');
    await page.getByLabel('Add to dashboard').selectOption({ label: 'New dashboard…' });
    await page.getByLabel('New dashboard name').fill('Made while saving');
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Pageviews for the board”.').waitFor();
    const boards = (await target.api('GET', '/api/environments/1/dashboards/?limit=100')).body.results as { id: number; name: string }[];
    const made = boards.filter((d) => d.name === 'Made while saving');
    expect(made).toHaveLength(1);
    const board = (await target.api('GET', `/api/environments/1/dashboards/${made[0]!.id}/`)).body as { tiles: { insight: { name: string } }[] };
    expect(board.tiles.map((t) => t.insight.name)).toEqual(['Pageviews for the board']);
  });

  it('keeps the project’s dashboards offered when one is created while their list is on its way', async () => {
    await target.api('POST', '/api/environments/1/dashboards/', { name: 'Early board' });
    const insight = (
      await target.api('POST', '/api/environments/1/insights/', {
        name: 'Raced insight',
        saved: true,
        filters: { insight: 'TRENDS', events: [{ id: 'signed_up', math: 'total', order: 0 }], date_from: '-7d', display: 'ActionsTable' },
      })
    ).body as { id: number };
    // The dashboards list is held until the new dashboard's POST is sent, and that POST until the
    // list has arrived: the list lands between the click and the new dashboard's answer.
    let releaseList!: () => void;
    const listReleased = new Promise<void>((resolve) => (releaseList = resolve));
    let listArrived!: () => void;
    const listDone = new Promise<void>((resolve) => (listArrived = resolve));
    const isList = (request: Request) => request.method() === 'GET' && /\/dashboards\/\?limit=100$/.test(request.url());
    const onFinished = (request: Request) => {
      if (isList(request)) listArrived();
    };
    page.on('requestfinished', onFinished);
    await page.route(/\/api\/environments\/1\/dashboards\//, async (route) => {
      const request = route.request();
      if (isList(request)) await listReleased;
      else if (request.method() === 'POST') {
        releaseList();
        await listDone;
      }
      await route.continue();
    });
    try {
      await page.goto(`${target.base}/insights/${insight.id}`);
      await page.getByRole('heading', { name: 'Raced insight' }).waitFor();
      await page.getByLabel('Add to dashboard').selectOption({ label: 'New dashboard…' });
      await page.getByLabel('New dashboard name').fill('Made in the race');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.getByText('Added to “Made in the race”.').waitFor();
      await page.getByLabel('Add to dashboard').locator('option', { hasText: 'Early board' }).waitFor({ state: 'attached' });
    } finally {
      page.off('requestfinished', onFinished);
      await page.unroute(/\/api\/environments\/1\/dashboards\//);
    }
  });

  it('offers PostHog’s date ranges and a custom one, each asking the API for the range it names', async () => {
    const day = (offsetDays: number, from = new Date()) =>
      new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate() + offsetDays)).toISOString().slice(0, 10);
    const now = new Date();
    const monthStart = (monthsBack: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1)).toISOString().slice(0, 10);
    const earliest = new Date(base);
    const ago180 = new Date(Date.now() - 180 * 86_400_000);
    // [label, date_from, date_to, first bucket's day, last bucket's day]
    const expected: [string, string, string | undefined, string, string][] = [
      ['Today', 'dStart', undefined, day(0), day(0)],
      ['Yesterday', '-1dStart', '-1dEnd', day(-1), day(-1)],
      ['Last 24 hours', '-24h', undefined, new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), day(0)],
      ['Last 7 days', '-7d', undefined, day(-7), day(0)],
      ['Last 14 days', '-14d', undefined, day(-14), day(0)],
      ['Last 30 days', '-30d', undefined, day(-30), day(0)],
      ['Last 90 days', '-90d', undefined, day(-90), day(0)],
      ['Last 180 days', '-180d', undefined, `${ago180.toISOString().slice(0, 7)}-01`, monthStart(0)],
      ['This month', 'mStart', undefined, monthStart(0), day(0)],
      ['Previous month', '-1mStart', '-1mEnd', monthStart(1), day(-1, new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)))],
      ['Year to date', 'yStart', undefined, `${now.getUTCFullYear()}-01-01`, monthStart(0)],
      ['All time', 'all', undefined, `${earliest.toISOString().slice(0, 7)}-01`, monthStart(0)],
    ];
    await page.goto(trendUrl(target.base, {}));
    await page.getByTestId('trend-result').waitFor();
    const range = page.locator('select[name="date_range"]');
    const isTrend = (request: Request) => request.method() === 'POST' && request.url().endsWith('/insights/trend/');
    for (const [label, dateFrom, dateTo, first, last] of expected) {
      const answered = page.waitForResponse((response) => isTrend(response.request()) && JSON.parse(response.request().postData()!).date_from === dateFrom);
      await range.selectOption({ label });
      const response = await answered;
      const body = JSON.parse(response.request().postData()!) as { date_from: string; date_to?: string };
      expect([label, body.date_from, body.date_to]).toEqual([label, dateFrom, dateTo]);
      const days = ((await response.json()) as { result: { days: string[] }[] }).result[0]!.days;
      expect([label, days[0]!.slice(0, 10), days[days.length - 1]!.slice(0, 10)]).toEqual([label, first, last]);
      // The select names the range asked, and the address keeps it.
      expect(await range.locator('option:checked').textContent()).toBe(label);
      const held = JSON.parse(new URL(page.url()).searchParams.get('q')!) as { date_from: string; date_to?: string };
      expect([held.date_from, held.date_to]).toEqual([dateFrom, dateTo]);
    }

    // A custom range: from and to days.
    await range.selectOption({ label: 'Custom dates…' });
    await page.getByLabel('From', { exact: true }).fill(day(-5));
    await page.getByLabel('To', { exact: true }).fill(day(-2));
    const custom = page.waitForResponse((response) => isTrend(response.request()) && JSON.parse(response.request().postData()!).date_from === day(-5));
    await page.getByRole('button', { name: 'Apply dates' }).click();
    const answered = await custom;
    expect(JSON.parse(answered.request().postData()!)).toMatchObject({ date_from: day(-5), date_to: day(-2) });
    const days = ((await answered.json()) as { result: { days: string[] }[] }).result[0]!.days;
    expect([days[0]!.slice(0, 10), days[days.length - 1]!.slice(0, 10)]).toEqual([day(-5), day(-2)]);
    await expect(range.locator('option:checked').textContent()).resolves.toBe(`${day(-5)} – ${day(-2)}`);
    await screenshot('85-trends-custom-range');
    expect(await seriousViolations()).toEqual([]);

    // A saved range the presets do not hold is shown as itself, never as a blank select.
    await page.goto(trendUrl(target.base, { date_from: '-45d' }));
    await page.getByTestId('trend-result').waitFor();
    await expect(page.locator('select[name="date_range"]').locator('option:checked').textContent()).resolves.toBe('Last 45 days');
  });

  it('lists the persons behind a funnel step, exactly as the API’s actors query does, and exports them', async () => {
    const q = { steps: ['$pageview', 'signed_up'], order: 'ordered', window_days: 14, date_from: '-7d' };
    await page.goto(`${target.base}/funnels?q=${encodeURIComponent(JSON.stringify(q))}`);
    await page.getByTestId('funnel-result').waitFor();
    const actorsOf = async (funnelStep: number) => {
      const answer = await target.api('POST', '/api/environments/1/query/', {
        query: {
          kind: 'ActorsQuery',
          source: {
            kind: 'FunnelsActorsQuery',
            funnelStep,
            source: {
              kind: 'FunnelsQuery',
              series: [
                { kind: 'EventsNode', event: '$pageview' },
                { kind: 'EventsNode', event: 'signed_up' },
              ],
              dateRange: { date_from: '-7d' },
              funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
            },
          },
        },
      });
      expect(answer.status).toBe(200);
      return (answer.body.results as [{ id: string }][]).map((row) => row[0].id).sort();
    };
    const modalIds = async () => {
      const modal = page.getByTestId('actors-modal');
      await modal.getByTestId('actors-table').waitFor();
      return (await modal.locator('tr[data-actor-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-actor-id')))).sort();
    };

    await page.getByRole('button', { name: 'Converted: 2' }).click();
    const converted = await actorsOf(2);
    expect(converted).toHaveLength(2);
    expect(await modalIds()).toEqual(converted);
    await screenshot('86-funnel-step-persons');
    expect(await seriousViolations()).toEqual([]);
    // The whole list as CSV: each person's id and distinct ids.
    const download = page.waitForEvent('download');
    await page.getByTestId('actors-modal').getByRole('button', { name: 'Download CSV' }).click();
    const csv = readFileSync((await (await download).path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe('id,name,distinct_ids,email');
    expect(
      csv
        .slice(1)
        .map((line) => line.split(',')[0])
        .sort(),
    ).toEqual(converted);
    expect(
      csv
        .slice(1)
        .map((line) => line.split(',')[2])
        .sort(),
    ).toEqual(['alice', 'bob']);
    await page.getByTestId('actors-modal').getByRole('button', { name: 'Close' }).click();
    await page.getByTestId('actors-modal').waitFor({ state: 'detached' });

    // Dropped off between the steps: those who viewed pages and did not sign up.
    await page.getByRole('button', { name: /^Dropped off: \d+$/ }).click();
    const dropped = await actorsOf(-2);
    expect(dropped.length).toBeGreaterThanOrEqual(2);
    expect(await modalIds()).toEqual(dropped);
    // A person opens from the list.
    await page.getByTestId('actors-modal').getByRole('link').first().click();
    await page.waitForURL(/\/persons\/[0-9a-f-]{36}$/);
    expect(dropped).toContain(decodeURIComponent(new URL(page.url()).pathname.slice('/persons/'.length)));
  });

  it('links an event row to its person', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByTestId('events-table').waitFor();
    await page.getByTestId('events-table').getByRole('link', { name: 'dave', exact: true }).first().click();
    await page.waitForURL(/\/persons\/[0-9a-f-]{36}$/);
    const dave = await target.person('dave');
    expect(new URL(page.url()).pathname).toBe(`/persons/${dave!.uuid}`);
  });

  it('breaks a trend down by a person property, and filters out test accounts when asked', async () => {
    await page.goto(trendUrl(target.base, { display: 'table' }));
    await page.getByTestId('trend-result').waitFor();
    await page.getByLabel('Breakdown by').selectOption('person');
    await page.getByLabel('Breakdown property').fill('plan');
    await page.getByLabel('Breakdown property').press('Enter');
    const api = await trendApi({
      events: [{ id: '$pageview', math: 'total' }],
      date_from: '-7d',
      display: 'ActionsTable',
      breakdown: 'plan',
      breakdown_type: 'person',
    });
    const expected = api.map((s) => [String(s.breakdown_value), s.aggregated_value ?? s.count]);
    expect(Object.fromEntries(expected)).toMatchObject({ pro: 3, free: 5 });
    await waitFor(async () => expect(await trendRows()).toEqual(expected), { description: 'the person-property breakdown' });
    expect(JSON.parse(new URL(page.url()).searchParams.get('q')!)).toMatchObject({ breakdown: 'plan', breakdown_type: 'person' });
    await screenshot('87-trends-person-breakdown');
    expect(await seriousViolations()).toEqual([]);

    // The persons behind a breakdown row: those the API's actors query lists for that value.
    await page.getByRole('button', { name: 'Persons behind $pageview · free' }).click();
    const modal = page.getByTestId('actors-modal');
    await modal.getByTestId('actors-table').waitFor();
    const shown = (await modal.locator('tr[data-actor-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-actor-id')))).sort();
    const listed = await target.api('POST', '/api/environments/1/query/', {
      query: {
        kind: 'ActorsQuery',
        select: ['id'],
        source: {
          kind: 'InsightActorsQuery',
          breakdown: 'free',
          source: {
            kind: 'TrendsQuery',
            series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
            dateRange: { date_from: '-7d' },
            breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' },
            trendsFilter: { display: 'ActionsTable' },
          },
        },
      },
    });
    expect(listed.status).toBe(200);
    const freeIds = (listed.body.results as [string][]).map(([id]) => id).sort();
    expect(freeIds).toEqual([(await target.person('bob'))!.uuid, (await target.person('carol'))!.uuid].sort());
    expect(shown).toEqual(freeIds);
    await screenshot('88-trends-breakdown-persons');
    expect(await seriousViolations()).toEqual([]);
    await modal.getByRole('button', { name: 'Close' }).click();
    await modal.waitFor({ state: 'detached' });

    // Test accounts: the project's filter leaves out Safari; the toggle applies it.
    expect(
      (await target.api('PATCH', '/api/projects/1/', { test_account_filters: [{ key: '$browser', value: 'Safari', operator: 'is_not', type: 'event' }] }))
        .status,
    ).toBe(200);
    const total = async () => (await trendRows()).reduce((sum, [, value]) => sum + value, 0);
    const all = await total();
    await page.getByLabel('Filter out internal and test users').check();
    await waitFor(async () => expect(await total()).toBe(all - 1), { description: 'dave’s Safari pageview left out' });
    expect(JSON.parse(new URL(page.url()).searchParams.get('q')!)).toMatchObject({ filter_test_accounts: true });
  });

  it('puts the chart first, captions the number, labels pie slices, keeps a value’s colour, flags unknown names, picks events by search and starts a funnel from the top events', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(trendUrl(target.base, {}));
    const chart = page.locator('[data-testid="trend-result"] .chart');
    await chart.waitFor();
    const box = (await chart.boundingBox())!;
    expect(box.y + box.height).toBeLessThanOrEqual(900);
    await screenshot('89-trends-chart-first');

    // The number: what, over which range, and the change from the previous period.
    await page.goto(trendUrl(target.base, { display: 'number', compare: true }));
    const caption = page.getByTestId('number-caption');
    await caption.waitFor();
    expect(await caption.textContent()).toMatch(/^\$pageview · Last 7 days · (▲ [\d.,]+% vs the previous period \(0\)|previous period 0)$/);

    // Pie slices say their value and share.
    await page.goto(trendUrl(target.base, { display: 'pie', breakdown: '$browser' }));
    await page.locator('.chart[data-drawn]').waitFor();
    const pie = JSON.parse((await page.locator('.chart[data-drawn]').getAttribute('data-drawn'))!) as { labels: string[] };
    const totals = await trendApi({ events: [{ id: '$pageview', math: 'total' }], date_from: '-7d', display: 'ActionsPie', breakdown: '$browser' });
    const whole = totals.reduce((sum, s) => sum + (s.aggregated_value ?? 0), 0);
    expect(pie.labels[0]).toBe(
      `$pageview · ${String(totals[0]!.breakdown_value)}: ${totals[0]!.aggregated_value} (${Math.round((totals[0]!.aggregated_value! / whole) * 10_000) / 100}%)`,
    );

    // A breakdown value keeps its colour whatever the other values are.
    const colours = async (q: Record<string, unknown>) => {
      await page.goto(trendUrl(target.base, { breakdown: '$browser', ...q }));
      await page.locator('.chart[data-drawn][data-x-axis="time"]').waitFor();
      const rows = await page
        .getByTestId('trend-series')
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((r) => r.getAttribute('data-breakdown')));
      const { colors } = JSON.parse((await page.locator('.chart[data-drawn]').getAttribute('data-drawn'))!) as { colors: string[] };
      return Object.fromEntries(rows.map((value, i) => [value, colors[i]]));
    };
    const all = await colours({});
    const withoutChrome = await colours({ properties: [{ key: '$browser', operator: 'is_not', value: 'Chrome', type: 'event' }] });
    expect(Object.keys(withoutChrome).sort()).toEqual(['Firefox', 'Safari']);
    expect(withoutChrome).toEqual({ Firefox: all['Firefox'], Safari: all['Safari'] });

    // A name the project never saw is flagged before the empty chart says so; a known one is not.
    await page.goto(trendUrl(target.base, { series: [{ event: 'signed_upp', math: 'total' }], breakdown: '$browsr' }));
    await page.getByText('Event never seen in this project').waitFor();
    await page.getByText('Property never seen in this project').waitFor();
    await page.goto(trendUrl(target.base, { breakdown: '$browser' }));
    await page.getByTestId('trend-result').waitFor();
    await page.locator('#event-names option').first().waitFor({ state: 'attached' });
    expect(await page.getByTestId('unknown-name').count()).toBe(0);

    // The event picker: typing narrows the project's events, each with its volume and when it was last seen.
    const picker = page.getByRole('combobox', { name: 'Event' });
    await picker.fill('sign');
    const options = page.getByRole('listbox', { name: 'Matching events' }).getByRole('option');
    await options.first().waitFor();
    expect(await options.evaluateAll((items) => items.map((li) => li.getAttribute('data-option')))).toEqual(['signed_up']);
    expect(await options.first().textContent()).toMatch(/^signed_up\d+ events? · seen \d+ (min|h) ago$/);
    await picker.press('ArrowDown');
    await picker.press('Enter');
    await waitFor(async () => expect(JSON.parse(new URL(page.url()).searchParams.get('q')!).series[0].event).toBe('signed_up'), {
      description: 'the picked event in the query',
    });
    expect(await seriousViolations()).toEqual([]);

    // A new funnel: the project's two most common events, as the definitions rank them.
    const top = (await target.api('GET', '/api/projects/1/event_definitions/?limit=2')).body.results.map((d: { name: string }) => d.name);
    await page.goto(`${target.base}/funnels`);
    await page.getByTestId('funnel-result').waitFor();
    expect(JSON.parse(new URL(page.url()).searchParams.get('q')!).steps).toEqual(top);
    expect(top).toEqual(['$pageview', 'signed_up']);
    await screenshot('90-funnels-chart-first');
    expect(await seriousViolations()).toEqual([]);
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
