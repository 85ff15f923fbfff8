// The web app's analysis pages in headless Chromium against `npm start`'s all-in-one service with
// generated data: a trend with per-series and global property filters, a formula and an action
// series; the world map; a funnel with a breakdown, its time to convert, its conversion over time
// and its correlation table; a saved insight renamed, seen in "recently viewed" and deleted; a
// dashboard tile. Every number checked is read from the page (hidden tables and data-* attributes).
// Screenshots go to test-output/web-app/ (numbered 20 and up, after the main web app test's).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

declare const window: any;
declare const document: any;
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations as axeFindings, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';
const EMAIL = 'analysis@example.com';
const PASSWORD = 'a long enough password';
const MINUTE = 60_000;

/**
 * Four people view pages (browser and country on each view), two of them sign up. alice clicked
 * the pricing page before signing up; carol and dave, who did not sign up, read the docs.
 *   pageviews: alice 3 × Chrome/US, bob 2 × Chrome/DE + 1 × Firefox/DE, carol 2 × Firefox/FR, dave 1 × Safari/US
 */
function generatedEvents(base: number) {
  const view = (distinctId: string, at: number, browser: string, country: string) => ({
    event: '$pageview',
    distinct_id: distinctId,
    timestamp: new Date(base + at * MINUTE).toISOString(),
    properties: { $browser: browser, $geoip_country_code: country },
  });
  const other = (event: string, distinctId: string, at: number, properties: Record<string, unknown> = {}) => ({
    event,
    distinct_id: distinctId,
    timestamp: new Date(base + at * MINUTE).toISOString(),
    properties,
  });
  return [
    view('alice', 0, 'Chrome', 'US'),
    view('alice', 1, 'Chrome', 'US'),
    view('alice', 2, 'Chrome', 'US'),
    other('clicked_pricing', 'alice', 3),
    other('signed_up', 'alice', 10, { $set: { plan: 'pro' } }),
    view('bob', 4, 'Chrome', 'DE'),
    view('bob', 5, 'Chrome', 'DE'),
    view('bob', 6, 'Firefox', 'DE'),
    other('signed_up', 'bob', 34, { $set: { plan: 'free' } }),
    view('carol', 7, 'Firefox', 'FR'),
    view('carol', 8, 'Firefox', 'FR'),
    other('read_docs', 'carol', 9, { $set: { plan: 'free' } }),
    view('dave', 11, 'Safari', 'US'),
    other('read_docs', 'dave', 12),
  ];
}

describe('the web app’s analysis pages in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let base: number;
  let consoleErrors: string[];

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_analysis');
    // All events within the hour after `base`, two hours ago.
    base = Date.now() - 2 * 60 * MINUTE;
    await sendBatch(target, generatedEvents(base));
    await waitFor(async () => (await target.person('carol'))?.properties['plan'] === 'free', { timeoutMs: 30_000, description: "carol's plan" });
    expect((await target.api('POST', '/api/projects/1/actions/', { name: 'Signed up (action)', steps: [{ event: 'signed_up' }] })).status).toBe(201);
    expect((await target.api('POST', '/api/environments/1/dashboards/', { name: 'Weekly review' })).status).toBe(201);

    ({ browser, page, consoleErrors } = await openPage());
    const link = setupLink(target);
    expect(link).toBeDefined();
    await page.goto(link!);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password (at least 8 characters)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save and sign in' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await target?.close();
  });

  async function screenshot(name: string) {
    await page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`), fullPage: true });
  }

  const seriousViolations = () => axeFindings(page);

  /** The trend's series as drawn: [name, total] from the hidden table. */
  const trendTotals = () =>
    page
      .getByTestId('trend-series')
      .first()
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-series'), Number(r.getAttribute('data-total'))]));

  /** Types into a field and commits it (the builders apply a text field on `change`). */
  async function enter(locator: ReturnType<Page['getByLabel']>, value: string) {
    await locator.fill(value);
    await locator.press('Enter');
  }

  it('builds a trend with per-series and global property filters and a formula, and reads the numbers drawn', async () => {
    await page.getByRole('link', { name: 'Trends' }).click();
    await page.getByTestId('trend-result').waitFor();
    await waitFor(async () => expect(await trendTotals()).toEqual([['$pageview', 9]]), { description: 'nine pageviews' });

    // Series A: only Chrome's pageviews (alice 3, bob 2).
    const seriesA = page.getByRole('group', { name: 'Filters of series A' });
    await seriesA.getByRole('button', { name: 'Add filter' }).click();
    await enter(seriesA.getByLabel('Property', { exact: true }), '$browser');
    await enter(seriesA.getByLabel('Value'), 'Chrome');
    await waitFor(async () => expect(await trendTotals()).toEqual([['$pageview', 5]]), { description: 'series A filtered to Chrome' });

    // Series B: every pageview; then a filter on both: not from France (carol's two).
    await page.getByRole('button', { name: 'Add series' }).click();
    await waitFor(
      async () =>
        expect(await trendTotals()).toEqual([
          ['$pageview', 5],
          ['$pageview', 9],
        ]),
      { description: 'series B' },
    );
    const global = page.getByRole('group', { name: 'Filters on every series' });
    await global.getByRole('button', { name: 'Add filter' }).click();
    await enter(global.getByLabel('Property', { exact: true }), '$geoip_country_code');
    await global.getByLabel('Operator').selectOption('is_not');
    await enter(global.getByLabel('Value'), 'FR');
    await waitFor(
      async () =>
        expect(await trendTotals()).toEqual([
          ['$pageview', 5],
          ['$pageview', 7],
        ]),
      { description: 'both series without France' },
    );
    // The property pickers offer the recorded keys.
    await global.getByLabel('Property', { exact: true }).focus();
    const offered = page.getByRole('listbox', { name: 'Matching properties' }).getByRole('option');
    await offered.first().waitFor();
    expect(await offered.evaluateAll((options) => options.map((o) => o.getAttribute('data-option')))).toEqual(
      expect.arrayContaining(['$browser', '$geoip_country_code']),
    );
    await page.keyboard.press('Escape');

    // B − A: the non-Chrome pageviews outside France (bob's Firefox, dave's Safari), per day summed.
    await enter(page.getByLabel(/^Formula/), 'B - A');
    await waitFor(async () => expect(await trendTotals()).toEqual([['Formula (B - A)', 2]]), { description: 'the formula' });
    const query = JSON.parse(new URL(page.url()).searchParams.get('q')!) as { formula: string; properties: unknown[]; series: { properties?: unknown[] }[] };
    expect(query).toMatchObject({ formula: 'B - A', properties: [{ key: '$geoip_country_code', operator: 'is_not', value: 'FR', type: 'event' }] });
    expect(query.series[0]!.properties).toEqual([{ key: '$browser', operator: 'exact', value: 'Chrome', type: 'event' }]);
    // The line is drawn on a time scale (a time scale without a date adapter throws, and the console is checked).
    expect(await page.locator('.chart[data-x-axis="time"]').count()).toBe(1);
    await screenshot('20-trends-filters-formula');
    expect(await seriousViolations()).toEqual([]);

    // Number display: the share of Chrome over the whole range, 5 / 7.
    await enter(page.getByLabel(/^Formula/), 'A / B * 100');
    await page.getByLabel('Display').selectOption('number');
    await page.locator('.big-number').waitFor();
    await waitFor(async () => expect(await page.locator('.big-number').textContent()).toBe('71.43'), { description: 'the bold number' });
    await screenshot('21-trends-number-formula');

    // Saved as an insight (then renamed, viewed and deleted below).
    await page.getByLabel('Insight name').fill('Chrome share');
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Chrome share”.').waitFor();
  });

  it('draws a series from an action, as bars over time and as a bar of totals', async () => {
    await page.goto(`${target.base}/trends`);
    await page.getByTestId('trend-result').waitFor();
    await page.getByLabel('Series A from').selectOption('actions');
    await page.getByRole('combobox', { name: /^Action/ }).selectOption({ label: 'Signed up (action)' });
    await waitFor(async () => expect(await trendTotals()).toEqual([['Signed up (action)', 2]]), { description: 'the action series' });
    await page.getByLabel('Display').selectOption('bar');
    await page.locator('[data-testid="trend-result"][data-display="bar"]').waitFor();
    expect(await page.locator('.chart[data-x-axis="time"]').count()).toBe(1);
    expect(await seriousViolations()).toEqual([]);
    // Bar of totals: one bar per series on a category axis, the total the server aggregated.
    await page.getByLabel('Display').selectOption('bar_value');
    await page.locator('[data-testid="trend-result"][data-display="bar_value"]').waitFor();
    await waitFor(async () => expect(await trendTotals()).toEqual([['Signed up (action)', 2]]), { description: 'the bar of totals' });
    expect(await page.locator('.chart[data-x-axis="category"]').count()).toBe(1);
  });

  it('shows the world map with each country coloured by its pageviews', async () => {
    const q = { series: [{ event: '$pageview', math: 'total' }], breakdown: '', interval: 'day', date_from: '-7d', display: 'world_map' };
    await page.goto(`${target.base}/trends?q=${encodeURIComponent(JSON.stringify(q))}`);
    const map = page.getByTestId('world-map');
    await map.locator('path[data-country="US"]').waitFor();
    const value = (code: string) => map.locator(`path[data-country="${code}"]`).getAttribute('data-value');
    await waitFor(async () => expect([await value('US'), await value('DE'), await value('FR'), await value('BR')]).toEqual(['4', '3', '2', '0']), {
      description: 'the countries’ values',
    });
    // Coloured: the largest darkest, a country without pageviews in the neutral grey.
    const fills = await Promise.all(['US', 'FR', 'BR'].map((code) => map.locator(`path[data-country="${code}"]`).getAttribute('fill')));
    expect(fills[0]).not.toBe(fills[1]);
    expect(fills[2]).toBe('#e6e8ee');
    // The same numbers as text, by country code.
    const rows = await page
      .getByTestId('trend-series')
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((r) => [r.getAttribute('data-breakdown'), Number(r.getAttribute('data-total'))]));
    expect(rows).toEqual([
      ['US', 4],
      ['DE', 3],
      ['FR', 2],
    ]);
    await screenshot('22-trends-world-map');
    expect(await seriousViolations()).toEqual([]);
  });

  it('builds a funnel with a breakdown, its correlation table, time to convert and conversion over time', async () => {
    await page.getByRole('link', { name: 'Funnels' }).click();
    await page.getByRole('heading', { name: 'Funnels' }).waitFor();
    await enter(page.getByLabel('Step 1 event'), '$pageview');
    await enter(page.getByLabel('Step 2 event'), 'signed_up');
    await enter(page.getByLabel('Breakdown property'), '$browser');
    // By the browser of each person's first step: alice and bob (Chrome) converted; carol (Firefox) and dave (Safari) did not.
    const breakdown = () =>
      page
        .getByTestId('funnel-breakdown')
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-breakdown'), JSON.parse(r.getAttribute('data-counts')!)]));
    await waitFor(
      async () =>
        expect((await breakdown()).sort()).toEqual([
          ['Chrome', [2, 2]],
          ['Firefox', [1, 0]],
          ['Safari', [1, 0]],
        ]),
      { description: 'the funnel broken down by browser' },
    );
    const steps = await page
      .getByTestId('funnel-result')
      .locator('li[data-step]')
      .evaluateAll((items) => items.map((li) => [li.getAttribute('data-step'), Number(li.getAttribute('data-count'))]));
    expect(steps).toEqual([
      ['$pageview', 4],
      ['signed_up', 2],
    ]);

    // Correlation: clicking pricing goes with converting (odds (1+1)(2−0+1) / ((2−1+1)(0+1)) = 3),
    // reading the docs with dropping off ((0+1)(2−2+1) / ((2−0+1)(2+1)) = 1/9).
    const correlation = page.getByTestId('correlation-table');
    await correlation.waitFor();
    const row = async (name: string) =>
      correlation.locator(`tr[data-name="${name}"]`).evaluate((r) => ({
        type: r.getAttribute('data-type'),
        odds: Number(r.getAttribute('data-odds')),
        success: Number(r.getAttribute('data-success')),
        failure: Number(r.getAttribute('data-failure')),
      }));
    expect(await row('clicked_pricing')).toEqual({ type: 'success', odds: 3, success: 1, failure: 0 });
    const docs = await row('read_docs');
    expect(docs).toMatchObject({ type: 'failure', success: 0, failure: 2 });
    expect(docs.odds).toBeCloseTo(1 / 9, 6);
    await screenshot('23-funnel-breakdown-correlation');
    expect(await seriousViolations()).toEqual([]);

    // Person properties: plan = pro only among those who converted.
    await page.getByLabel('Correlate').selectOption('properties');
    await enter(page.getByLabel('Person properties (comma separated)'), 'plan');
    await correlation.locator('tr[data-name="plan::pro"]').waitFor();
    expect(await row('plan::pro')).toMatchObject({ type: 'success', success: 1, failure: 0 });

    // Saved onto the dashboard (shown as a tile below).
    await page.getByLabel('Insight name').fill('Sign-up funnel');
    await page.getByLabel('Add to dashboard').selectOption({ label: 'Weekly review' });
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Sign-up funnel”.').waitFor();

    // Time to convert: alice's and bob's conversions in the bins.
    await page.getByLabel('Show').selectOption('time_to_convert');
    const bins = page.getByTestId('time-to-convert-bins');
    await bins.waitFor({ state: 'attached' });
    const counts = await bins.locator('tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-count'))));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
    await expect(page.getByTestId('funnel-time-to-convert').textContent()).resolves.toMatch(/Average time to convert: \d/);
    await screenshot('24-funnel-time-to-convert');
    expect(await seriousViolations()).toEqual([]);

    // Conversion over time: each day's rate among the people who started that day (UTC, the project's timezone).
    await page.getByLabel('Show').selectOption('trends');
    const values = page.getByTestId('funnel-trend-values');
    await values.waitFor({ state: 'attached' });
    const rates = Object.fromEntries(
      await values.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-day'), Number(r.getAttribute('data-rate'))])),
    ) as Record<string, number>;
    const day = (minutes: number) => new Date(base + minutes * MINUTE).toISOString().slice(0, 10);
    const started: Record<string, { entered: number; converted: number }> = {};
    for (const [at, converted] of [
      [0, true],
      [4, true],
      [7, false],
      [11, false],
    ] as const) {
      started[day(at)] ??= { entered: 0, converted: 0 };
      started[day(at)]!.entered++;
      if (converted) started[day(at)]!.converted++;
    }
    for (const [d, { entered, converted }] of Object.entries(started)) expect(rates[d]).toBe(Math.round((converted / entered) * 10_000) / 100);
    expect(await page.locator('.chart[data-x-axis="time"]').count()).toBe(1);
    await screenshot('25-funnel-conversion-over-time');
    expect(await seriousViolations()).toEqual([]);
  });

  it('opens, renames, edits and deletes a saved insight, and lists it as recently viewed', async () => {
    await page.getByRole('link', { name: 'Insights' }).click();
    await page.getByTestId('insights-table').waitFor();
    await page.getByText('Insights you open appear here.').waitFor();
    await page.getByTestId('insights-table').getByRole('link', { name: 'Chrome share' }).click();
    await page.getByRole('heading', { name: 'Chrome share' }).waitFor();
    // The saved number display, computed again: 5 of 7.
    await waitFor(async () => expect(await page.locator('.big-number').textContent()).toBe('71.43'), { description: 'the saved insight’s number' });
    await page.getByLabel('Name', { exact: true }).fill('Chrome share of pageviews');
    await page.getByLabel('Description').fill('Outside France');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('heading', { name: 'Chrome share of pageviews' }).waitFor();
    await page.getByText('Saved.').waitFor();
    await screenshot('26-insight-renamed');
    expect(await seriousViolations()).toEqual([]);
    const saved = (await target.api('GET', '/api/environments/1/insights/?search=Chrome')).body.results;
    expect(saved.map((i: { name: string; description: string }) => [i.name, i.description])).toEqual([['Chrome share of pageviews', 'Outside France']]);

    // Its query edited in the builder and saved back onto the same insight.
    await page.getByRole('link', { name: 'Edit the query' }).click();
    await page.locator('.big-number').waitFor();
    await page.getByLabel('Display').selectOption('table');
    await page.locator('[data-testid="trend-result"][data-display="table"]').waitFor();
    await page.getByRole('button', { name: 'Save changes to the insight' }).click();
    await page.getByText('Saved changes to “Chrome share of pageviews”.').waitFor();
    const edited = (await target.api('GET', '/api/environments/1/insights/?search=Chrome')).body.results;
    expect(edited.map((i: { filters: { display: string; formula: string } }) => [i.filters.display, i.filters.formula])).toEqual([
      ['ActionsTable', 'A / B * 100'],
    ]);

    await page.getByRole('link', { name: 'Insights' }).click();
    const recent = page.getByTestId('recent-insights');
    await recent.waitFor();
    expect(await recent.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-insight')))).toEqual(['Chrome share of pageviews']);
    await screenshot('27-insights-recently-viewed');
    expect(await seriousViolations()).toEqual([]);

    await recent.getByRole('link', { name: 'Chrome share of pageviews' }).click();
    await page.getByRole('button', { name: 'Delete this insight…' }).click();
    await page.getByRole('button', { name: 'Yes, delete this insight' }).click();
    await page.getByRole('heading', { name: 'Saved insights', exact: true }).waitFor();
    await page.getByTestId('insights-table').waitFor();
    await expect(page.getByTestId('insights-table').getByRole('link', { name: 'Chrome share of pageviews' }).count()).resolves.toBe(0);
    expect((await target.api('GET', '/api/environments/1/insights/?search=Chrome')).body.results).toEqual([]);
  });

  it('shows the saved funnel as a dashboard tile, and removes it', async () => {
    await page.getByRole('link', { name: 'Dashboards' }).click();
    await page.getByTestId('dashboards-list').getByRole('link', { name: 'Weekly review' }).click();
    await page.getByRole('heading', { name: 'Weekly review' }).waitFor();
    const tile = page.getByTestId('dashboard-tile');
    await expect(tile.getAttribute('data-insight')).resolves.toBe('Sign-up funnel');
    await tile.getByTestId('funnel-breakdown').waitFor();
    const steps = await tile
      .locator('li[data-step]')
      .evaluateAll((items) => items.map((li) => [li.getAttribute('data-step'), Number(li.getAttribute('data-count'))]));
    expect(steps).toEqual([
      ['$pageview', 4],
      ['signed_up', 2],
    ]);
    await screenshot('28-dashboard-funnel-tile');
    expect(await seriousViolations()).toEqual([]);

    await page.getByRole('button', { name: 'Remove Sign-up funnel from this dashboard' }).click();
    await page.getByText('No insights on this dashboard yet').waitFor();
    await screenshot('29-dashboard-empty');
    // The insight stays saved, off the dashboard.
    const funnel = (await target.api('GET', '/api/environments/1/insights/?search=Sign-up')).body.results[0];
    expect(funnel.dashboards).toEqual([]);
  });

  it('keeps a builder filter with an operator the builder does not offer as it is, beside the filters it edits', async () => {
    const unofferedFilter = { key: '$browser', type: 'event', operator: 'gte', value: 1 };
    const q = {
      series: [{ event: '$pageview', math: 'total', properties: [unofferedFilter] }],
      breakdown: '',
      interval: 'day',
      date_from: '-7d',
      display: 'line',
    };
    await page.goto(`${target.base}/trends?q=${encodeURIComponent(JSON.stringify(q))}`);
    const seriesA = page.getByRole('group', { name: 'Filters of series A' });
    await seriesA.getByText('kept as it is').waitFor();
    await seriesA.getByRole('button', { name: 'Add filter (AND)' }).click();
    await enter(seriesA.getByLabel('Property', { exact: true }), '$geoip_country_code');
    await enter(seriesA.getByLabel('Value'), 'US');
    await waitFor(
      async () => {
        const query = JSON.parse(new URL(page.url()).searchParams.get('q')!) as { series: { properties?: unknown[] }[] };
        expect(query.series[0]!.properties).toEqual([unofferedFilter, { key: '$geoip_country_code', operator: 'exact', value: 'US', type: 'event' }]);
      },
      { description: 'the kept filter and the new one in the query' },
    );
  });

  it('shows the empty and error states', async () => {
    const errorsBefore = consoleErrors.length;
    const trend = (q: Record<string, unknown>) =>
      `${target.base}/trends?q=${encodeURIComponent(JSON.stringify({ breakdown: '', interval: 'day', date_from: '-7d', display: 'line', ...q }))}`;
    await page.goto(trend({ series: [{ event: 'never_sent', math: 'total' }] }));
    await page.getByText('No matching events in this date range.').waitFor();
    // A formula naming a series the trend does not have: the server's 400 shown as the page's error.
    await page.goto(trend({ series: [{ event: '$pageview', math: 'total' }], formula: 'A + C' }));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/C/);
    await screenshot('30-trends-error');
    expect(await seriousViolations()).toEqual([]);
    await page.goto(`${target.base}/insights/999999`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    // The browser logs the 400 and 404 answers themselves as console errors: only those are expected here.
    const added = consoleErrors.splice(errorsBefore);
    expect(added.filter((e) => !/Failed to load resource: the server responded with a status of (400|404)/.test(e))).toEqual([]);
    expect(added.length).toBeGreaterThan(0);
  });

  it('is readable on a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [path, name] of [
      ['/trends', '31-trends-phone'],
      ['/funnels', '32-funnels-phone'],
    ]) {
      await page.goto(`${target.base}${path}`);
      await page.locator('[data-testid="trend-result"], [data-testid="funnel-result"]').first().waitFor();
      await screenshot(name!);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    }
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
