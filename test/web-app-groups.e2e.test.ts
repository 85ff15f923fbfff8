// The web app's groups pages in headless Chromium against `npm start`'s all-in-one service: groups
// sent as posthog-js sends them (`$groupidentify`, and `$groups` on events) go through the worker
// and are listed per group type, searched, the type renamed, and a group opened with its
// properties, related persons and groups, and latest events. Screenshots 60-63 go to
// test-output/web-app/ (git-ignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations as pageViolations, WEB_APP_OUTPUT_DIR } from './web-app-browser';

const EMAIL = 'groups@example.com';
const PASSWORD = 'a long enough password';

describe('the web app’s groups pages in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    mkdirSync(WEB_APP_OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_groups');
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const identify = (type: string, key: string, set: Record<string, unknown>, minutesAgo: number) => ({
      event: '$groupidentify',
      distinct_id: 'server',
      timestamp: at(minutesAgo),
      properties: { $group_type: type, $group_key: key, $group_set: set },
    });
    const batch = [
      identify('company', 'acme', { name: 'Acme Inc', plan: 'enterprise' }, 30),
      identify('company', 'globex', { name: 'Globex' }, 29),
      identify('project', 'p-rocket', { name: 'Rocket' }, 28),
      { event: '$identify', distinct_id: 'alice', timestamp: at(20), properties: { $set: { email: 'alice@example.com' } } },
      { event: '$pageview', distinct_id: 'alice', timestamp: at(10), properties: { $groups: { company: 'acme', project: 'p-rocket' } } },
      { event: 'signed up', distinct_id: 'bob', timestamp: at(9), properties: { $groups: { company: 'acme' } } },
      { event: '$pageview', distinct_id: 'carol', timestamp: at(8), properties: { $groups: { company: 'globex' } } },
    ];
    await sendBatch(target, batch);
    await waitFor(async () => (await target.api('GET', '/api/projects/1/groups/?group_type_index=0&search=acme')).body.results?.length === 1, {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: 'the groups written',
    });

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
  const seriousViolations = () => pageViolations(page);
  const listedKeys = () =>
    page
      .getByTestId('groups-table')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-group-key')));

  it('lists the groups of each type, searches them and renames the type', async () => {
    await page.goto(`${target.base}/groups`);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Groups' }).waitFor();
    // The first type the worker mapped (company, index 0), newest first.
    await waitFor(async () => expect(await listedKeys()).toEqual(['globex', 'acme']), { description: 'the companies listed' });
    await expect(page.getByTestId('groups-table').textContent()).resolves.toContain('Acme Inc');
    await screenshot('60-groups-list');
    expect(await seriousViolations()).toEqual([]);

    await page.getByLabel(/^Search .* by property or exact key$/).fill('enterprise');
    await page.getByRole('button', { name: 'Search' }).click();
    await waitFor(async () => expect(await listedKeys()).toEqual(['acme']), { description: 'the search' });
    expect(new URL(page.url()).search).toBe('?type=0&search=enterprise');

    await page
      .getByRole('navigation', { name: 'Group types' })
      .getByRole('link', { name: /^project/ })
      .click();
    await waitFor(async () => expect(await listedKeys()).toEqual(['p-rocket']), { description: 'the projects listed' });

    await page
      .getByRole('navigation', { name: 'Group types' })
      .getByRole('link', { name: /^company/ })
      .click();
    await waitFor(async () => expect(await listedKeys()).toEqual(['globex', 'acme']), { description: 'back to companies' });
    await page.getByText('Display names of “company”').click();
    await page.getByLabel('Singular').fill('Company');
    await page.getByLabel('Plural').fill('Companies');
    await page.getByRole('button', { name: 'Save names' }).click();
    await page.getByRole('navigation', { name: 'Group types' }).getByRole('link', { name: 'Companies' }).waitFor();
    const types = await target.api('GET', '/api/projects/1/groups_types/');
    expect(types.body[0]).toMatchObject({ group_type: 'company', name_singular: 'Company', name_plural: 'Companies' });
    await screenshot('61-groups-type-renamed');
  });

  it('opens a group with its properties, related persons and groups, and latest events', async () => {
    await page.getByRole('link', { name: 'Acme Inc' }).click();
    await page.getByRole('heading', { name: 'Acme Inc' }).waitFor();
    await expect(page.locator('table.properties').textContent()).resolves.toContain('enterprise');
    await page.getByTestId('related-persons').waitFor();
    await expect(
      page
        .getByTestId('related-persons')
        .locator('li')
        .allTextContents()
        .then((names) => names.sort()),
    ).resolves.toEqual(['alice@example.com', 'bob']);
    await expect(page.getByTestId('related-groups').textContent()).resolves.toContain('Rocket');
    await waitFor(async () => (await page.getByTestId('group-events').locator('tbody tr[data-event]').count()) === 2, { description: "acme's events" });
    await screenshot('62-group-page');
    expect(await seriousViolations()).toEqual([]);

    // A related group opens its own page, and a related person theirs.
    await page.getByTestId('related-groups').getByRole('link', { name: 'Rocket' }).click();
    await page.getByRole('heading', { name: 'Rocket' }).waitFor();
    await expect(page.getByTestId('related-persons').textContent()).resolves.toBe('alice@example.com');
    await page.getByTestId('related-persons').getByRole('link', { name: 'alice@example.com' }).click();
    await page.getByRole('heading', { name: 'alice@example.com' }).waitFor();

    // A key no group has: the page says so.
    await page.goto(`${target.base}/groups/0/${encodeURIComponent('no such group')}`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.getByRole('link', { name: 'Back to groups' }).waitFor();
    await screenshot('63-group-not-found');
  });

  it('logged no console errors but the missing group’s 404', () => {
    expect(consoleErrors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    expect(consoleErrors.filter((e) => /status of 404/.test(e))).toHaveLength(1);
  });
});
