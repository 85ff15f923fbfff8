// The web app's Paths page in headless Chromium against `npm start`'s all-in-one service: page
// views sent as posthog-js sends them go through the worker; the page draws their paths as a
// Sankey diagram whose links carry the values the API answers, lists the persons on an edge,
// and passes axe-core. Screenshots 70-72 go to test-output/web-app/ (git-ignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations, WEB_APP_OUTPUT_DIR } from './web-app-browser';

declare const window: { innerWidth: number };
declare const document: { documentElement: { scrollWidth: number } };

const EMAIL = 'paths@example.com';
const PASSWORD = 'a long enough password';

describe('the web app’s Paths page in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    mkdirSync(WEB_APP_OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_paths');
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const visit = (who: string, urls: string[], startMinutesAgo: number) =>
      urls.map((url, i) => ({ event: '$pageview', distinct_id: who, timestamp: at(startMinutesAgo - i), properties: { $current_url: url } }));
    await sendBatch(target, [
      { event: '$identify', distinct_id: 'alice', timestamp: at(50), properties: { $set: { email: 'alice@example.com' } } },
      ...visit('alice', ['https://shop.test/', 'https://shop.test/pricing', 'https://shop.test/signup'], 40),
      ...visit('bob', ['https://shop.test/', 'https://shop.test/pricing'], 30),
      ...visit('carol', ['https://shop.test/', 'https://shop.test/docs/'], 20),
    ]);
    const token = /\/setup\?token=([A-Za-z0-9_-]+)/.exec(target.output())?.[1];
    expect(token).toBeDefined();
    const setup = await fetch(`${target.base}/api/password_setup/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, email: EMAIL, password: PASSWORD }),
    });
    expect(setup.status).toBe(200);
    ({ browser, page, consoleErrors } = await openPage());
  });

  afterAll(async () => {
    await browser?.close();
    await target?.close();
  });

  const screenshot = (name: string) => page.screenshot({ path: join(WEB_APP_OUTPUT_DIR, `${name}.png`), fullPage: true });
  const drawnLinks = () =>
    page
      .getByTestId('paths-sankey')
      .locator('path[data-source]')
      .evaluateAll((links) => links.map((l) => [l.getAttribute('data-source'), l.getAttribute('data-target'), Number(l.getAttribute('data-value'))]));

  it('draws the paths the API answers, and lists the persons on an edge', async () => {
    await page.goto(`${target.base}/paths`);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Paths' }).waitFor();
    await page.getByTestId('paths-sankey').waitFor();
    const api = await target.api('POST', '/api/environments/1/insights/path/', {
      insight: 'PATHS',
      include_event_types: ['$pageview'],
      step_limit: 5,
      edge_limit: 50,
      date_from: '-7d',
    });
    expect(api.status).toBe(200);
    const answered = api.body.result.map((e: { source: string; target: string; value: number }) => [e.source, e.target, e.value]);
    // Each URL less one trailing slash, as PostHog's paths read $current_url.
    expect(answered).toEqual([
      ['1_https://shop.test', '2_https://shop.test/pricing', 2],
      ['1_https://shop.test', '2_https://shop.test/docs', 1],
      ['2_https://shop.test/pricing', '3_https://shop.test/signup', 1],
    ]);
    await waitFor(async () => expect((await drawnLinks()).sort()).toEqual([...answered].sort()), { description: 'the links drawn' });
    await screenshot('70-paths');
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Persons from 1_https://shop.test to 2_https://shop.test/pricing' }).click();
    const persons = page.getByTestId('edge-persons');
    await waitFor(async () => (await persons.locator('li[data-person]').count()) === 2, { description: 'the persons on the edge' });
    await expect(
      persons
        .locator('li[data-person]')
        .allTextContents()
        .then((names) => names.sort()),
    ).resolves.toEqual(['alice@example.com', 'bob']);
    // A click on a drawn link asks for its own persons.
    await page.locator('path[data-target="2_https://shop.test/docs"]').click();
    await waitFor(async () => expect(await persons.locator('li[data-person]').allTextContents()).toEqual(['carol']), { description: "the docs edge's person" });
    await screenshot('71-paths-edge-persons');
    expect(await seriousViolations(page)).toEqual([]);

    // Grouping every pricing and signup page as one item, kept in the address.
    await page.getByLabel(/^Group as one/).fill('*/pricing, */signup');
    await page.getByLabel(/^Group as one/).press('Enter');
    await waitFor(async () => expect((await drawnLinks()).map((l) => l[1])).toContain('2_*/pricing'), { description: 'the grouped paths' });
    expect(decodeURIComponent(new URL(page.url()).search)).toContain('"groupings":["*/pricing","*/signup"]');

    // Saved, then opened from the saved insights: the same diagram, and back to its builder.
    const grouped = (await drawnLinks()).sort();
    await page.getByLabel('Insight name').fill('Shop paths');
    await page.getByRole('button', { name: 'Save as insight' }).click();
    await page.getByText('Saved as “Shop paths”.').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Insights' }).click();
    await page.getByRole('link', { name: 'Shop paths' }).first().click();
    await page.getByTestId('paths-sankey').waitFor();
    await waitFor(async () => expect((await drawnLinks()).sort()).toEqual(grouped), { description: 'the saved insight drawn' });
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('is readable on a phone: the diagram scrolls inside its frame, the page not sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${target.base}/paths`);
    await page.getByTestId('paths-sankey').waitFor();
    await screenshot('72-paths-phone');
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
