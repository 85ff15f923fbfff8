// The web app's Retention page in headless Chromium against `npm start`'s all-in-one service with
// generated data: the triangle of daily cohorts read from the page (data-* attributes) equals the
// query API's answer, a cell opens its persons, and axe finds nothing serious. Screenshots go to
// test-output/web-app/ (numbered 40 and up).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';

const EMAIL = 'retention@example.com';
const PASSWORD = 'a long enough password';
const DAY = 86_400_000;

/**
 * Pageviews at noon UTC, days before today: alice 3, 2 and 1 days ago, bob 3 and 1 days ago,
 * carol 2 days ago (bob on Firefox, the others on Chrome). The cohort of 3 days ago is alice and
 * bob: 1 back a day later (alice), 2 back two days later.
 */
function generatedEvents(todayNoon: number) {
  const view = (distinctId: string, daysAgo: number) => ({
    event: '$pageview',
    distinct_id: distinctId,
    timestamp: new Date(todayNoon - daysAgo * DAY).toISOString(),
    properties: { $browser: distinctId === 'bob' ? 'Firefox' : 'Chrome', $set: { email: `${distinctId}@example.com` } },
  });
  return [view('alice', 3), view('alice', 2), view('alice', 1), view('bob', 3), view('bob', 1), view('carol', 2)];
}

describe('the web app’s Retention page in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];
  const query = {
    kind: 'RetentionQuery',
    retentionFilter: {
      targetEntity: { id: '$pageview', name: '$pageview', type: 'events' },
      returningEntity: { id: '$pageview', name: '$pageview', type: 'events' },
      retentionType: 'retention_recurring',
      period: 'Day',
      totalIntervals: 8,
      cumulative: false,
    },
  };

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_retention');
    const now = new Date();
    await sendBatch(target, generatedEvents(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 12)));
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

  /** Each row's counts as the page holds them. */
  const drawnCounts = () =>
    page
      .getByTestId('retention-table')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => JSON.parse(r.getAttribute('data-counts') ?? '[]') as number[]));

  it('draws the triangle the query API answers, and a cell opens its persons', async () => {
    const api = await target.api('POST', '/api/environments/1/query/', { query });
    expect(api.status).toBe(200);
    const expected = (api.body.results as { values: { count: number }[] }[]).map((r) => r.values.map((v) => v.count));
    // Today is the last row: the cohort of 3 days ago is the fifth of eight.
    expect(expected[4]!.slice(0, 4)).toEqual([2, 1, 2, 0]);

    await page.getByRole('link', { name: 'Retention' }).click();
    await page.getByTestId('retention-table').waitFor();
    await waitFor(async () => expect(await drawnCounts()).toEqual(expected), { description: 'the drawn counts' });
    const cell = page.getByTestId('retention-table').locator('tbody tr').nth(4).locator('td[data-offset="2"]');
    expect(await cell.getAttribute('data-percent')).toBe('100');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '40-retention.png'), fullPage: true });

    await cell.getByRole('button').click();
    const persons = page.getByTestId('retention-persons');
    await persons.getByRole('link', { name: 'alice@example.com' }).waitFor();
    expect(await persons.locator('li').evaluateAll((items) => items.map((li) => li.textContent?.trim()).sort())).toEqual([
      'alice@example.com',
      'bob@example.com',
    ]);
    // Offset 1 of the same cohort: only alice came back the next day.
    await page.getByTestId('retention-table').locator('tbody tr').nth(4).locator('td[data-offset="1"] button').click();
    await waitFor(async () => expect(await persons.locator('li').allTextContents()).toEqual(['alice@example.com']), { description: 'one person back' });
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('draws first-time cohorts when asked', async () => {
    await page.getByLabel('Cohorts by').selectOption('retention_first_time');
    const api = await target.api('POST', '/api/environments/1/query/', {
      query: { ...query, retentionFilter: { ...query.retentionFilter, retentionType: 'retention_first_time' } },
    });
    const expected = (api.body.results as { values: { count: number }[] }[]).map((r) => r.values.map((v) => v.count));
    // Only carol's first visit is 2 days ago; alice and bob first came 3 days ago.
    expect(expected[5]![0]).toBe(1);
    await waitFor(async () => expect(await drawnCounts()).toEqual(expected), { description: 'the first-time counts' });
  });

  it('breaks the cohorts down by an event property and a date range, one value at a time', async () => {
    await page.getByLabel('Cohorts by').selectOption('retention_recurring');
    await page.getByLabel('Breakdown by').selectOption('event');
    await page.getByLabel('Breakdown property').fill('$browser');
    await page.getByLabel('Breakdown property').press('Enter');
    await page.getByLabel('Cohorts from').selectOption({ label: 'Last 7 days' });
    const api = await target.api('POST', '/api/environments/1/query/', {
      query: { ...query, dateRange: { date_from: '-7d', date_to: null }, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } },
    });
    expect(api.status).toBe(200);
    const rows = api.body.results as { breakdown_value: string; values: { count: number }[] }[];
    const of = (value: string) => rows.filter((r) => r.breakdown_value === value).map((r) => r.values.map((v) => v.count));
    // Chrome: alice and carol; ranked first (3 cohort entries against Firefox's 2).
    expect([...new Set(rows.map((r) => r.breakdown_value))]).toEqual(['Chrome', 'Firefox']);
    await waitFor(async () => expect(await drawnCounts()).toEqual(of('Chrome')), { description: 'the Chrome cohorts' });
    await page.getByLabel('Breakdown value').selectOption('Firefox');
    await waitFor(async () => expect(await drawnCounts()).toEqual(of('Firefox')), { description: 'the Firefox cohorts' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '41-retention-breakdown.png'), fullPage: true });
  });

  it('saves the broken-down retention as an insight whose page draws the API’s saved answer', async () => {
    await page.getByLabel('Insight name').fill('Browser retention');
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Browser retention”.').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Insights' }).click();
    await page.getByRole('link', { name: 'Browser retention' }).first().click();
    await page.getByRole('heading', { name: 'Browser retention' }).waitFor();
    await page.getByText(/^Retention · last modified/).waitFor();
    const id = /\/insights\/(\d+)/.exec(page.url())?.[1];
    expect(id).toBeDefined();
    const saved = await target.api('GET', `/api/environments/1/insights/${id}/`);
    expect(saved.status).toBe(200);
    expect(saved.body.filters).toMatchObject({ insight: 'RETENTION', period: 'Day', total_intervals: 8, breakdown: '$browser', date_from: '-7d' });
    const rows = saved.body.result as { breakdown_value: string; values: { count: number }[] }[];
    const of = (value: string) => rows.filter((r) => r.breakdown_value === value).map((r) => r.values.map((v) => v.count));
    expect([...new Set(rows.map((r) => r.breakdown_value))]).toEqual(['Chrome', 'Firefox']);
    await waitFor(async () => expect(await drawnCounts()).toEqual(of('Chrome')), { description: 'the saved Chrome cohorts' });
    await page.getByLabel('Breakdown value').selectOption('Firefox');
    await waitFor(async () => expect(await drawnCounts()).toEqual(of('Firefox')), { description: 'the saved Firefox cohorts' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '42-retention-insight.png'), fullPage: true });

    // "Edit the query" opens the same form on the Retention page, editing this insight.
    await page.getByRole('link', { name: 'Edit the query' }).click();
    await page.getByTestId('editing-insight').waitFor();
    expect(await page.getByLabel('Breakdown property').inputValue()).toBe('$browser');
    await waitFor(async () => expect(await drawnCounts()).toEqual(of('Chrome')), { description: 'the edited query drawn' });
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
