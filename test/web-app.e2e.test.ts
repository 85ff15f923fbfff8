// The web app in headless Chromium (Debian's chromium through playwright-core) against `npm start`'s
// all-in-one service with generated data: the first-start link, signing in by keyboard, every page
// with an axe-core check and a screenshot (test-output/web-app/, git-ignored), a trend with a
// breakdown whose drawn numbers are read from the page, a funnel, a person found by search, and a flag
// edited on its page and seen changed by /flags.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations as axeFindings, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';
const EMAIL = 'analyst@example.com';
const PASSWORD = 'a long enough password';

/** The generated data: 10 pageviews by browser over three people, sign-ups, and one identified person. */
const PAGEVIEWS: { distinctId: string; browser: string }[] = [
  ...Array.from({ length: 6 }, (_, i) => ({ distinctId: i < 3 ? 'alice' : 'bob', browser: 'Chrome' })),
  ...Array.from({ length: 4 }, (_, i) => ({ distinctId: i < 2 ? 'carol' : 'bob', browser: 'Firefox' })),
];

declare const window: any;
declare const document: any;

describe('the web app in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_app');
    const now = Date.now();
    const batch = [
      ...PAGEVIEWS.map((p, i) => ({
        event: '$pageview',
        distinct_id: p.distinctId,
        timestamp: new Date(now - (i + 1) * 3_600_000).toISOString(),
        properties: { $browser: p.browser, $current_url: `https://shop.example/p/${i}` },
      })),
      { event: 'signed_up', distinct_id: 'alice', timestamp: new Date(now - 30 * 60_000).toISOString(), properties: { plan: 'pro' } },
      {
        event: '$identify',
        distinct_id: 'alice',
        timestamp: new Date(now - 20 * 60_000).toISOString(),
        properties: { $set: { email: 'alice@example.com', name: 'Alice' } },
      },
    ];
    await sendBatch(target, batch);
    await waitFor(async () => (await target.person('alice'))?.properties['email'] === 'alice@example.com', {
      timeoutMs: 30_000,
      description: "alice's person",
    });
    // The worker recorded the names and keys it saw (the pickers offer them).
    await waitFor(
      async () => {
        const definitions = await target.api('GET', '/api/projects/1/event_definitions/');
        return definitions.body.results?.find((d: { name: string }) => d.name === '$pageview')?.volume === 10;
      },
      { timeoutMs: 10_000, description: 'the $pageview definition' },
    );
    const browserProperty = (await target.api('GET', '/api/projects/1/property_definitions/?search=%24browser')).body.results[0];
    expect(browserProperty).toMatchObject({ name: '$browser', property_type: 'String', volume: 10 });
    const flag = await target.api('POST', '/api/projects/1/feature_flags/', {
      key: 'new-checkout',
      name: 'New checkout',
      active: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    expect(flag.status).toBe(201);
    expect((await target.api('POST', '/api/environments/1/dashboards/', { name: 'Growth' })).status).toBe(201);
    const oldFlag = await target.api('POST', '/api/projects/1/feature_flags/', {
      key: 'old-banner',
      active: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    expect(oldFlag.status).toBe(201);
    ({ browser, page, consoleErrors } = await openPage());
  });

  afterAll(async () => {
    writeFileSync(join(OUTPUT_DIR, 'timings.json'), JSON.stringify(timings, null, 2) + '\n');
    await browser?.close();
    await target?.close();
  });

  async function screenshot(name: string) {
    await page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`), fullPage: true });
  }

  const seriousViolations = () => axeFindings(page);

  /** The share of the chart canvas's pixels that are painted and not white: a canvas drawn blank is ~0. */
  async function paintedShare(): Promise<number> {
    return page.locator('.chart canvas').evaluate((canvas: any) => {
      const { width, height } = canvas;
      const pixels = canvas.getContext('2d').getImageData(0, 0, width, height).data as Uint8ClampedArray;
      let painted = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 3]! > 0 && (pixels[i]! < 240 || pixels[i + 1]! < 240 || pixels[i + 2]! < 240)) painted++;
      return painted / (width * height);
    });
  }

  async function flagsFor(distinctId: string): Promise<Record<string, unknown>> {
    const res = await fetch(`${target.base}/flags/?v=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: target.projectKey, distinct_id: distinctId }),
    });
    return ((await res.json()) as { featureFlags: Record<string, unknown> }).featureFlags;
  }

  it('serves the app at / and loads it quickly on loopback', async () => {
    const started = Date.now();
    await page.goto(`${target.base}/`);
    await page.getByRole('heading', { name: 'Sign in to Sightline' }).waitFor();
    timings['firstLoadMs'] = Date.now() - started;
    const navigation = (await page.evaluate(() => JSON.stringify(window.performance.getEntriesByType('navigation')[0]))) as string;
    timings['domContentLoadedMs'] = Math.round((JSON.parse(navigation) as { domContentLoadedEventEnd: number }).domContentLoadedEventEnd);
    await screenshot('01-sign-in');
    expect(await seriousViolations()).toEqual([]);
  });

  it('sets the first password through the link the start banner printed', async () => {
    const link = setupLink(target);
    expect(link).toBeDefined();
    await page.goto(link!);
    await page.getByRole('heading', { name: 'Set up your account' }).waitFor();
    await screenshot('02-first-start-password');
    expect(await seriousViolations()).toEqual([]);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password (at least 8 characters)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save and sign in' }).click();
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/events');
  });

  it('signs out, and signs in again with the keyboard alone', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sightline' }).waitFor();
    await page.getByLabel('E-mail').focus();
    await page.keyboard.type(EMAIL);
    await page.keyboard.press('Tab');
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await expect(page.getByTestId('timezone').textContent()).resolves.toBe('Times in UTC');
  });

  it('lists events newest first, opens one, and shows a new event within seconds', async () => {
    const table = page.getByTestId('events-table');
    await table.waitFor();
    const names = await table.locator('tbody tr[data-event]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event')));
    expect(names).toHaveLength(12);
    expect(names.slice(0, 2)).toEqual(['$identify', 'signed_up']);
    await table.getByRole('button', { name: 'signed_up' }).click();
    await page.getByRole('table', { name: 'Properties of signed_up' }).getByRole('cell', { name: 'pro', exact: true }).waitFor();
    await screenshot('03-events');
    expect(await seriousViolations()).toEqual([]);

    const sent = Date.now();
    await fetch(`${target.base}/capture/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: target.projectKey, event: 'live_event', distinct_id: 'dave', properties: {} }),
    });
    await table.locator('tbody tr[data-event="live_event"]').waitFor({ timeout: 15_000 });
    timings['liveEventShownMs'] = Date.now() - sent;
    expect(await table.locator('tbody tr[data-event]').first().getAttribute('data-event')).toBe('live_event');

    // Filters: one distinct id.
    await page.getByLabel('Distinct id').fill('carol');
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitFor(async () => (await table.locator('tbody tr[data-event]').count()) === 2, { description: "carol's two events" });
  });

  it('builds a trend with a breakdown, and the chart exposes the numbers it draws', async () => {
    await page.getByRole('link', { name: 'Trends' }).click();
    await page.getByRole('heading', { name: 'Trends' }).waitFor();
    await page.getByTestId('trend-result').waitFor();
    const total = async () =>
      page
        .getByTestId('trend-series')
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-series'), Number(r.getAttribute('data-total'))]));
    await waitFor(async () => expect(await total()).toEqual([['$pageview', 10]]), { description: 'ten pageviews' });

    // The breakdown's property picker offers the recorded keys (the pickers' lists are asked for once the chart is drawn).
    await page.getByLabel('Breakdown property').focus();
    const offered = page.getByRole('listbox', { name: 'Matching properties' }).getByRole('option');
    await offered.first().waitFor();
    expect(await offered.evaluateAll((options) => options.map((o) => o.getAttribute('data-option')))).toEqual(
      expect.arrayContaining(['$browser', '$current_url']),
    );
    const eventNames = () => page.locator('#event-names option').evaluateAll((options) => options.map((o) => o.getAttribute('value')));
    await waitFor(async () => expect(await eventNames()).toEqual(expect.arrayContaining(['$pageview', 'signed_up', '$identify'])), {
      description: 'the event names offered',
    });
    await page.getByLabel('Breakdown property').fill('$browser');
    await page.getByLabel('Breakdown property').press('Enter');
    await page.getByLabel('Breakdown property').blur();
    await waitFor(
      async () =>
        expect(await total()).toEqual([
          ['$pageview · Chrome', 6],
          ['$pageview · Firefox', 4],
        ]),
      { description: 'the breakdown by browser' },
    );
    // The per-day values add up to the totals, and the URL holds the query.
    const values = await page
      .getByTestId('trend-series')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => (JSON.parse(r.getAttribute('data-values')!) as number[]).reduce((a, b) => a + b, 0)));
    expect(values).toEqual([6, 4]);
    const query = JSON.parse(new URL(page.url()).searchParams.get('q')!) as { breakdown: string };
    expect(query.breakdown).toBe('$browser');
    expect(await paintedShare()).toBeGreaterThan(0.001);
    await screenshot('04-trends-line-breakdown');
    expect(await seriousViolations()).toEqual([]);
    await page.getByLabel('Insight name').fill('Pageviews by browser');
    await page.getByLabel('Add to dashboard').selectOption({ label: 'Growth' });
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Pageviews by browser”.').waitFor();

    // The same URL in a fresh load shows the same trend; then other displays.
    await page.reload();
    await page.getByTestId('trend-result').waitFor();
    await page.getByLabel('Display').selectOption('pie');
    await page.locator('[data-testid="trend-result"][data-display="pie"]').waitFor();
    await waitFor(async () => expect(await paintedShare()).toBeGreaterThan(0.05), { description: 'the pie drawn' });
    await screenshot('05-trends-pie');
    await page.getByLabel('Display').selectOption('table');
    await page.locator('[data-testid="trend-result"][data-display="table"]').waitFor();
    // The table display shows the series table itself.
    await page.getByTestId('trend-series').waitFor({ state: 'visible' });
    await screenshot('06-trends-table');
    await page.getByLabel('Display').selectOption('number');
    await page.locator('.big-number').waitFor();
    await expect(page.locator('.big-number').textContent()).resolves.toBe('10');

    // Cumulative: each series ends at its total. Compare: the previous week had no pageviews, so no
    // browser to break down by: only the current period's series remain, named as such.
    await page.getByLabel('Display').selectOption('cumulative');
    const rows = () =>
      page
        .getByTestId('trend-series')
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((r) => [r.getAttribute('data-series'), (JSON.parse(r.getAttribute('data-values')!) as number[]).at(-1)]));
    await page.locator('[data-testid="trend-result"][data-display="cumulative"]').waitFor();
    // Cumulative series are ordered by the sum of their running totals (PostHog's
    // _breakdown_query_order_by), so which comes first depends on the hour the test runs: the
    // events lie 1 to 10 hours back and may straddle midnight. Compare them by name.
    const byName = (list: unknown[][]) => [...list].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    await waitFor(
      async () =>
        expect(byName(await rows())).toEqual([
          ['$pageview · Chrome', 6],
          ['$pageview · Firefox', 4],
        ]),
      { description: 'the cumulative series' },
    );
    await page.getByLabel('Compare to previous period').check();
    await waitFor(
      async () =>
        expect(byName(await total())).toEqual([
          ['$pageview · Chrome (current period)', 6],
          ['$pageview · Firefox (current period)', 4],
        ]),
      { description: 'the compared series' },
    );
    expect(await seriousViolations()).toEqual([]);
  });

  it('lists saved insights and reopens one with its query', async () => {
    await page.getByRole('link', { name: 'Insights' }).click();
    await page.getByTestId('insights-table').waitFor();
    await screenshot('07-insights');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('link', { name: 'Pageviews by browser' }).click();
    await waitFor(
      async () =>
        expect(
          await page
            .getByTestId('trend-series')
            .locator('tbody tr')
            .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-total')))),
        ).toEqual([6, 4]),
      { description: 'the saved trend reopened' },
    );
  });

  it('shows a dashboard with the saved trend computed on its tile', async () => {
    await page.getByRole('link', { name: 'Dashboards' }).click();
    await page.getByTestId('dashboards-list').getByRole('link', { name: 'Growth' }).click();
    await page.getByRole('heading', { name: 'Growth' }).waitFor();
    const tile = page.getByTestId('dashboard-tile');
    await expect(tile.count()).resolves.toBe(1);
    await waitFor(
      async () =>
        expect(
          await tile
            .getByTestId('trend-series')
            .locator('tbody tr')
            .evaluateAll((rows) => rows.map((r) => [r.getAttribute('data-series'), Number(r.getAttribute('data-total'))])),
        ).toEqual([
          ['$pageview · Chrome', 6],
          ['$pageview · Firefox', 4],
        ]),
      { description: 'the tile’s trend' },
    );
    await screenshot('08-dashboard');
    expect(await seriousViolations()).toEqual([]);
  });

  it('builds a funnel and shows the persons and conversion of each step', async () => {
    await page.getByRole('link', { name: 'Funnels' }).click();
    await page.getByRole('heading', { name: 'Funnels' }).waitFor();
    await page.getByLabel('Step 1 event').fill('$pageview');
    await page.getByLabel('Step 1 event').press('Enter');
    await page.getByLabel('Step 2 event').fill('signed_up');
    await page.getByLabel('Step 2 event').press('Enter');
    const steps = async () =>
      page
        .getByTestId('funnel-result')
        .locator('li[data-step]')
        .evaluateAll((items) => items.map((li) => [li.getAttribute('data-step'), Number(li.getAttribute('data-count'))]));
    // alice, bob and carol viewed a page; only alice signed up afterwards.
    await waitFor(
      async () =>
        expect(await steps()).toEqual([
          ['$pageview', 3],
          ['signed_up', 1],
        ]),
      { description: 'the funnel steps' },
    );
    await expect(page.getByTestId('funnel-result').textContent()).resolves.toContain('Overall conversion: 33.33%');
    await screenshot('09-funnels');
    expect(await seriousViolations()).toEqual([]);
  });

  it('finds a person by search and opens their properties and distinct ids', async () => {
    await page.getByRole('link', { name: 'Persons' }).click();
    await page.getByTestId('persons-table').waitFor();
    await screenshot('10-persons');
    expect(await seriousViolations()).toEqual([]);
    await page.getByLabel('Search by e-mail, name or distinct id').fill('alice@example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    await waitFor(async () => (await page.getByTestId('persons-table').locator('tbody tr').count()) === 1, { description: 'one match' });
    const csv = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    expect(csv).toContain('format=csv');
    const exported = await fetch(`${target.base}${csv}`, { headers: { authorization: `Bearer ${target.personalKey}` } });
    expect(await exported.text()).toContain('alice@example.com');
    await page.getByRole('link', { name: 'alice@example.com' }).click();
    await page.getByRole('heading', { name: 'alice@example.com' }).waitFor();
    await expect(page.getByTestId('distinct-ids').textContent()).resolves.toContain('alice');
    await page.getByRole('table', { name: 'Properties of alice@example.com' }).getByRole('cell', { name: 'Alice', exact: true }).waitFor();
    // Her latest events: three pageviews, the sign-up and the $identify.
    await waitFor(async () => expect(await page.getByTestId('person-events').locator('tbody tr[data-event]').count()).toBe(5), {
      description: "alice's events",
    });
    await screenshot('11-person');
    expect(await seriousViolations()).toEqual([]);

    // carol is deleted from her page (events kept); the list then finds nobody.
    await page.getByRole('link', { name: '← Persons' }).click();
    await page.getByLabel('Search by e-mail, name or distinct id').fill('carol');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'carol' }).click();
    await page.getByRole('button', { name: 'Delete this person…' }).click();
    await page.getByRole('button', { name: 'Yes, delete this person' }).click();
    await page.getByRole('heading', { name: 'Persons' }).waitFor();
    expect(await target.person('carol')).toBeNull();
  });

  it('edits a flag and /flags answers the change', async () => {
    expect((await flagsFor('alice'))['new-checkout']).toBe(true);
    await page.getByRole('link', { name: 'Feature flags' }).click();
    await page.getByTestId('flags-table').waitFor();
    await screenshot('12-feature-flags');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('link', { name: 'new-checkout' }).click();
    await page.getByLabel('Rollout percentage').waitFor();
    await page.getByLabel('Rollout percentage').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await screenshot('13-feature-flag-edit');
    expect(await seriousViolations()).toEqual([]);
    await waitFor(async () => (await flagsFor('alice'))['new-checkout'] === false, { description: '/flags after the rollout change' });

    // Back to 100 %, then switched off from the list.
    await page.getByLabel('Rollout percentage').fill('100');
    await page.getByRole('button', { name: 'Save' }).click();
    await waitFor(async () => (await flagsFor('alice'))['new-checkout'] === true, { description: '/flags after 100 %' });
    await page.getByRole('link', { name: '← Feature flags' }).click();
    await page.getByRole('switch', { name: 'new-checkout active' }).click();
    await waitFor(async () => (await flagsFor('alice'))['new-checkout'] === false, { description: '/flags after switching off' });

    // Deleting a flag from its page: gone from the list and from /flags.
    expect((await flagsFor('alice'))['old-banner']).toBe(true);
    await page.getByRole('link', { name: 'old-banner' }).click();
    await page.getByRole('button', { name: 'Delete this flag…' }).click();
    await page.getByRole('button', { name: 'Yes, delete this flag' }).click();
    await page.getByTestId('flags-table').waitFor();
    await expect(page.getByRole('link', { name: 'old-banner' }).count()).resolves.toBe(0);
    await waitFor(async () => !('old-banner' in (await flagsFor('alice'))), { description: '/flags without the deleted flag' });
  });

  it("shows this instance's SDK set-up and changes the project's timezone", async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await expect(page.getByTestId('project-api-key').textContent()).resolves.toBe(target.projectKey);
    const snippets = await page.getByTestId('snippet').allTextContents();
    expect(snippets[0]).toContain(`posthog.init('${target.projectKey}', { api_host: '${target.base}' });`);
    expect(snippets[1]).toContain(`new PostHog('${target.projectKey}', { host: '${target.base}' })`);
    await page.getByLabel(/^Timezone/).selectOption('Europe/Berlin');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByText('Times in Europe/Berlin').waitFor();
    expect((await target.api('GET', '/api/projects/1/')).body.timezone).toBe('Europe/Berlin');

    // A personal API key issued here works at once (its value shown once) and stops when revoked.
    await page.getByLabel('Label').fill('CI reader');
    await page.getByRole('button', { name: 'Create key' }).click();
    const issued = (await page.getByTestId('issued-key').textContent())!;
    expect(issued).toMatch(/^phx_/);
    const withKey = () => fetch(`${target.base}/api/environments/1/events/?limit=1`, { headers: { authorization: `Bearer ${issued}` } });
    expect((await withKey()).status).toBe(200);
    await page.locator('tr[data-key="CI reader"]').waitFor();
    await screenshot('14-settings');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('button', { name: 'Delete key CI reader…' }).click();
    await page.getByRole('button', { name: 'Yes, delete key CI reader' }).click();
    await waitFor(async () => (await page.locator('tr[data-key="CI reader"]').count()) === 0, { description: 'the key gone from the list' });
    expect((await withKey()).status).toBe(401);
  });

  it('is readable on a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // On a phone the nav is behind the menu button.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByTestId('events-table').waitFor();
    await screenshot('15-events-phone');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
