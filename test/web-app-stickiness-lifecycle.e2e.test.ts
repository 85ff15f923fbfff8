// The web app's Stickiness and Lifecycle pages in headless Chromium against `npm start`'s
// all-in-one service with generated data: the bars read from the page (data-* attributes) equal
// the query API's answer, a bar opens its persons, and axe finds nothing serious. Screenshots go
// to test-output/web-app/ (numbered 50 and up).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';

const EMAIL = 'stickiness@example.com';
const PASSWORD = 'a long enough password';
const DAY = 86_400_000;

/** Pageviews at noon UTC, days before today: alice 3, 2 and 1 days ago, bob 3 and 1 days ago, carol 2 days ago. */
function generatedEvents(todayNoon: number) {
  const view = (distinctId: string, daysAgo: number) => ({
    event: '$pageview',
    distinct_id: distinctId,
    timestamp: new Date(todayNoon - daysAgo * DAY).toISOString(),
    properties: { $set: { email: `${distinctId}@example.com` } },
  });
  return [view('alice', 3), view('alice', 2), view('alice', 1), view('bob', 3), view('bob', 1), view('carol', 2)];
}

describe('the web app’s Stickiness and Lifecycle pages in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];
  /** The stickiness insight's saved bars, for its dashboard tile. */
  let stickinessBars: number[] = [];

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_stick');
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

  /** Saves the page's query under `name`, opens it from the saved insights, and answers the API's saved insight (GET …/insights/<id>/). */
  async function saveAndOpen(name: string): Promise<{ filters: Record<string, unknown>; result: any }> {
    await page.getByLabel('Insight name').fill(name);
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText(`Saved as “${name}”.`).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Insights' }).click();
    await page.getByRole('link', { name }).first().click();
    await page.getByRole('heading', { name }).waitFor();
    const id = /\/insights\/(\d+)/.exec(page.url())?.[1];
    expect(id).toBeDefined();
    const saved = await target.api('GET', `/api/environments/1/insights/${id}/`);
    expect(saved.status).toBe(200);
    return saved.body;
  }

  it('draws the stickiness bars the query API answers, and a bar opens its persons', async () => {
    const query = {
      kind: 'StickinessQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '-7d' },
      interval: 'day',
      stickinessFilter: {},
    };
    const api = await target.api('POST', '/api/environments/1/query/', { query });
    expect(api.status).toBe(200);
    const expected = api.body.results[0].data as number[];
    // carol on 1 day, bob on 2, alice on 3.
    expect(expected.slice(0, 3)).toEqual([1, 1, 1]);

    await page.getByRole('link', { name: 'Stickiness' }).click();
    const bars = page.getByTestId('stickiness-bars');
    await bars.waitFor();
    await waitFor(async () => expect(JSON.parse((await bars.getAttribute('data-values')) ?? '[]')).toEqual(expected), { description: 'the drawn bars' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '50-stickiness.png'), fullPage: true });

    await bars.locator('tr[data-day="2"] button').click();
    const persons = page.getByTestId('stickiness-persons');
    await waitFor(async () => expect(await persons.locator('li').allTextContents()).toEqual(['bob@example.com']), { description: 'bob, on 2 days' });

    await page.getByLabel('Cumulative (on N or more)').check();
    await waitFor(async () => expect(JSON.parse((await bars.getAttribute('data-values')) ?? '[]').slice(0, 3)).toEqual([3, 2, 1]), {
      description: 'cumulative bars',
    });
    expect(await seriousViolations(page)).toEqual([]);

    // Saved, then opened from the saved insights: the bars of the API's saved answer.
    const insight = await saveAndOpen('Sticky pageviews');
    expect(insight.filters).toMatchObject({ insight: 'STICKINESS', interval: 'day', stickiness_computed_as: 'cumulative' });
    const savedBars = insight.result[0].data as number[];
    expect(savedBars.slice(0, 3)).toEqual([3, 2, 1]);
    await page.getByText(/^Stickiness · last modified/).waitFor();
    await waitFor(async () => expect(JSON.parse((await bars.getAttribute('data-values')) ?? '[]')).toEqual(savedBars), { description: 'the saved bars' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '52-stickiness-insight.png'), fullPage: true });
    stickinessBars = savedBars;
    await page.getByLabel('Add to dashboard').selectOption({ label: 'New dashboard…' });
    await page.getByLabel('New dashboard name').fill('Activity tiles');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added to “Activity tiles”.').waitFor();
  });

  it('draws the lifecycle the query API answers, dormant below zero, and a number opens its persons', async () => {
    const query = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: { date_from: '-7d' }, interval: 'day' };
    const api = await target.api('POST', '/api/environments/1/query/', { query });
    expect(api.status).toBe(200);
    const expected = Object.fromEntries((api.body.results as { status: string; data: number[] }[]).map((s) => [s.status, s.data]));
    expect(expected['dormant']!.every((v) => v <= 0)).toBe(true);
    expect(expected['dormant']!.some((v) => v < 0)).toBe(true);

    await page.getByRole('link', { name: 'Lifecycle' }).click();
    const table = page.getByTestId('lifecycle-table');
    await table.waitFor();
    const drawn = () =>
      table
        .locator('tbody tr')
        .evaluateAll((rows) => Object.fromEntries(rows.map((r) => [r.getAttribute('data-status'), JSON.parse(r.getAttribute('data-values') ?? '[]')])));
    await waitFor(async () => expect(await drawn()).toEqual(expected), { description: 'the drawn statuses' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '51-lifecycle.png'), fullPage: true });

    // Two days ago: bob (active the day before) went dormant.
    const twoDaysAgo = (api.body.results[0].days as string[]).at(-3)!;
    await table.locator(`tr[data-status="dormant"] td[data-day="${twoDaysAgo}"] button`).click();
    const persons = page.getByTestId('lifecycle-persons');
    await waitFor(async () => expect(await persons.locator('li').allTextContents()).toEqual(['bob@example.com']), { description: 'bob went dormant' });

    // Hiding a status hides its row; the others stay as answered.
    await page.getByLabel('dormant', { exact: true }).uncheck();
    await waitFor(async () => expect(Object.keys(await drawn())).toEqual(['new', 'returning', 'resurrecting']), { description: 'dormant hidden' });
    expect(await seriousViolations(page)).toEqual([]);

    // Saved, then opened from the saved insights: the statuses shown, as the API's saved answer holds them.
    const insight = await saveAndOpen('Pageview lifecycle');
    expect(insight.filters).toMatchObject({ insight: 'LIFECYCLE', interval: 'day', toggledLifecycles: ['new', 'returning', 'resurrecting'] });
    const saved = (insight.result as { status: string; data: number[] }[]).filter((s) => s.status !== 'dormant');
    expect(saved.map((s) => s.status)).toEqual(['new', 'returning', 'resurrecting']);
    await page.getByText(/^Lifecycle · last modified/).waitFor();
    await waitFor(async () => expect(await drawn()).toEqual(Object.fromEntries(saved.map((s) => [s.status, s.data]))), { description: 'the saved statuses' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '53-lifecycle-insight.png'), fullPage: true });

    // On the same dashboard as the stickiness insight: both tiles draw their saved answers.
    await page.getByLabel('Add to dashboard').selectOption({ label: 'Activity tiles' });
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added to “Activity tiles”.').waitFor();
    await page.getByTestId('insight-dashboards').getByRole('link', { name: 'Activity tiles' }).click();
    await page.getByRole('heading', { name: 'Activity tiles' }).waitFor();
    await waitFor(async () => expect(await drawn()).toEqual(Object.fromEntries(saved.map((s) => [s.status, s.data]))), { description: 'the lifecycle tile' });
    await waitFor(async () => expect(JSON.parse((await page.getByTestId('stickiness-bars').getAttribute('data-values')) ?? '[]')).toEqual(stickinessBars), {
      description: 'the stickiness tile',
    });
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: join(OUTPUT_DIR, '54-activity-dashboard.png'), fullPage: true });
    await page.goBack();
    await page.getByRole('heading', { name: 'Pageview lifecycle' }).waitFor();

    // "Edit the query" opens the same form on the Lifecycle page, editing this insight.
    await page.getByRole('link', { name: 'Edit the query' }).click();
    await page.getByTestId('editing-insight').waitFor();
    expect(await page.getByLabel('dormant', { exact: true }).isChecked()).toBe(false);
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
