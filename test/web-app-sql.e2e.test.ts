// The web app's SQL page and the Events page's time range in headless Chromium against `npm start`'s
// all-in-one service with generated data: a query run with Ctrl+Enter whose rows, types and count
// are read from the page, an error shown at its line and column, the CSV export downloaded, the
// query saved as an insight on a dashboard (whose tile the server computes), and every page state
// checked with axe-core. Screenshots go to test-output/web-app/ (numbered 70 and up).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations as axeFindings, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';

const EMAIL = 'sql@example.com';
const PASSWORD = 'a long enough password';
const HOUR = 3_600_000;

describe('the web app’s SQL page in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_sql');
    const now = Date.now();
    // Five pageviews and two sign-ups in the last hours; one pageview three days ago.
    await sendBatch(target, [
      ...Array.from({ length: 5 }, (_, i) => ({
        event: '$pageview',
        distinct_id: i < 3 ? 'alice' : 'bob',
        timestamp: new Date(now - (i + 1) * HOUR).toISOString(),
        properties: { $browser: i < 3 ? 'Chrome' : 'Firefox' },
      })),
      { event: 'signed_up', distinct_id: 'alice', timestamp: new Date(now - 30 * 60_000).toISOString(), properties: {} },
      { event: 'signed_up', distinct_id: 'bob', timestamp: new Date(now - 20 * 60_000).toISOString(), properties: {} },
      { event: 'old_visit', distinct_id: 'carol', timestamp: new Date(now - 72 * HOUR).toISOString(), properties: {} },
    ]);
    expect((await target.api('POST', '/api/environments/1/dashboards/', { name: 'SQL board' })).status).toBe(201);

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

  const screenshot = (name: string) => page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`), fullPage: true });
  const eventNames = () =>
    page
      .getByTestId('events-table')
      .locator('tbody tr[data-event]')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event')));

  it('lists the last day’s events through EventsQuery, and older ones over a longer time range', async () => {
    await page.getByTestId('events-table').waitFor();
    expect(await eventNames()).toEqual(['signed_up', 'signed_up', '$pageview', '$pageview', '$pageview', '$pageview', '$pageview']);
    await page.getByLabel('Time range').selectOption({ label: 'Last 7 days' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByTestId('events-table').locator('tbody tr[data-event="old_visit"]').waitFor();
    expect((await eventNames()).at(-1)).toBe('old_visit');
    expect(await axeFindings(page)).toEqual([]);
  });

  it('runs a query with Ctrl+Enter and shows its rows, their types, the count and the time', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'SQL' }).click();
    await page.getByRole('heading', { name: 'SQL' }).waitFor();
    const editor = page.getByLabel('SQL query');
    await editor.fill("SELECT event, count() AS n\nFROM events\nWHERE event != 'old_visit'\nGROUP BY event\nORDER BY n DESC");
    await editor.press('Control+Enter');
    const result = page.getByTestId('sql-result');
    await result.waitFor();
    expect(await result.getAttribute('data-rows')).toBe('2');
    expect(await result.getAttribute('data-has-more')).toBe('false');
    const headers = await result.locator('thead th').evaluateAll((ths) => ths.map((th) => [th.getAttribute('data-column'), th.getAttribute('data-type')]));
    expect(headers).toEqual([
      ['event', 'String'],
      ['n', 'UInt64'],
    ]);
    const rows = await result.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual([
      ['$pageview', '5'],
      ['signed_up', '2'],
    ]);
    await expect(result.getByRole('status').textContent()).resolves.toMatch(/^2 rows in \d[\d,]* ms$/);
    // Cut by a LIMIT: the page says more rows exist.
    await editor.fill('SELECT event FROM events LIMIT 3');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('[data-testid="sql-result"][data-rows="3"]').waitFor();
    await screenshot('70-sql');
    expect(await axeFindings(page)).toEqual([]);
  });

  it('shows an error at its line and column, and moves the cursor there', async () => {
    const editor = page.getByLabel('SQL query');
    const query = 'SELECT event\nFROM evnts';
    await editor.fill(query);
    await editor.press('Control+Enter');
    const error = page.getByTestId('sql-error');
    await error.waitFor();
    const start = Number(await error.getAttribute('data-error-start'));
    expect(query.slice(start, start + 5)).toBe('evnts');
    await expect(error.getByTestId('sql-error-position').textContent()).resolves.toBe('Line 2, column 6');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect(await editor.evaluate((el: any) => el.selectionStart)).toBe(start);
    await screenshot('71-sql-error');
    expect(await axeFindings(page)).toEqual([]);
  });

  it('exports the rows as CSV', async () => {
    await page.getByLabel('SQL query').fill("SELECT distinct_id, count() AS n FROM events WHERE event = '$pageview' GROUP BY distinct_id ORDER BY distinct_id");
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('query.csv');
    expect(readFileSync((await download.path())!, 'utf8')).toBe('distinct_id,n\r\nalice,3\r\nbob,2\r\n');
  });

  it('saves the query as an insight on a dashboard, whose tile the server computes', async () => {
    const sql = "SELECT count() AS signups FROM events WHERE event = 'signed_up'";
    await page.getByLabel('SQL query').fill(sql);
    await page.getByLabel('Insight name').fill('Sign-ups (SQL)');
    await page.getByLabel('Add to dashboard').selectOption({ label: 'SQL board' });
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Sign-ups (SQL)” on SQL board.').waitFor();
    const insights = await target.api('GET', '/api/environments/1/insights/?search=SQL');
    const saved = insights.body.results.find((i: { name: string }) => i.name === 'Sign-ups (SQL)');
    expect(saved.query).toEqual({ kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: sql } });
    const dashboard = await target.api('GET', `/api/environments/1/dashboards/${saved.dashboards[0]}/`);
    const tile = dashboard.body.tiles.find((t: { insight: { id: number } }) => t.insight.id === saved.id);
    expect(tile.insight).toMatchObject({ result: [[2]], columns: ['signups'] });
    // The insight's page shows its rows under their columns.
    await page.goto(new URL(`/insights/${saved.id}`, page.url()).toString());
    const table = page.getByRole('table', { name: 'Rows of the insight' });
    await table.waitFor();
    expect(await table.locator('th').evaluateAll((ths) => ths.map((th) => th.getAttribute('data-column')))).toEqual(['signups']);
    expect(await table.locator('tbody td').allTextContents()).toEqual(['2']);
    expect(await axeFindings(page)).toEqual([]);
    // Its query opens in the SQL page.
    await page.getByRole('link', { name: 'Edit the query' }).click();
    await page.getByRole('heading', { name: 'SQL' }).waitFor();
    expect(await page.getByLabel('SQL query').inputValue()).toBe(sql);
    // So does its tile on the dashboard.
    await page.goto(new URL(`/dashboards/${saved.dashboards[0]}`, page.url()).toString());
    const tileCells = page.locator('[data-testid="dashboard-tile"][data-insight="Sign-ups (SQL)"] table.sql-rows tbody td');
    await tileCells.first().waitFor();
    expect(await tileCells.allTextContents()).toEqual(['2']);
    await screenshot('72-sql-tile');
    expect(await axeFindings(page)).toEqual([]);
  });

  it('logged no console errors but the refused query’s 400', () => {
    expect(consoleErrors.filter((e) => !e.includes('status of 400'))).toEqual([]);
  });
});
