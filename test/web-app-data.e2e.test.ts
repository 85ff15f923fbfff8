// The web app's data pages in headless Chromium against `npm start`'s all-in-one service: event and
// property definitions (search, a description and a property's type edited, an event defined before
// it arrives), cohorts (dynamic from property filters, static from a CSV of distinct ids, both
// edited) and actions (steps by event, URL, selector and text, created and edited), each checked
// through the API and with axe-core; then every page at 390 × 844 without sideways scrolling, the
// nav behind a menu button, "Not found" pages with a way back, and focus on the page's heading after
// navigation; a disabled flag's status and its changes in words, variants split evenly, a new API
// key's Copy button, the name of the insight a builder edits, and the offline state. Screenshots
// 70-89 go to test-output/web-app/ (git-ignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, seriousViolations as axeFindings, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';

const EMAIL = 'steward@example.com';
const PASSWORD = 'a long enough password';

declare const window: any;
declare const document: any;
declare const navigator: any;

describe('the web app’s data pages in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];
  let flagId: number;

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_data');
    const now = Date.now();
    const people = [
      { id: 'alice', plan: 'pro' },
      { id: 'bob', plan: 'free' },
      { id: 'carol', plan: 'pro' },
    ];
    const batch = people.flatMap((p, i) => [
      { event: '$identify', distinct_id: p.id, timestamp: new Date(now - (i + 3) * 60_000).toISOString(), properties: { $set: { plan: p.plan } } },
      {
        event: '$pageview',
        distinct_id: p.id,
        timestamp: new Date(now - (i + 2) * 60_000).toISOString(),
        properties: { $current_url: `https://shop.example/pricing?from=${p.id}`, amount: '12' },
      },
    ]);
    const res = await fetch(`${target.base}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: target.projectKey, batch }),
    });
    expect(res.status).toBe(200);
    await waitFor(async () => (await target.person('carol'))?.properties['plan'] === 'pro', { timeoutMs: 30_000, description: 'the persons' });
    await waitFor(
      async () => (await target.api('GET', '/api/projects/1/property_definitions/?type=person')).body.results?.some((d: { name: string }) => d.name === 'plan'),
      { timeoutMs: 10_000, description: 'the definitions' },
    );
    const flag = await target.api('POST', '/api/projects/1/feature_flags/', {
      key: 'beta',
      active: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    flagId = flag.body.id;
    const link = setupLink(target);
    expect(link).toBeDefined();
    ({ browser, page, consoleErrors } = await openPage());
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
  const seriousViolations = () => axeFindings(page);
  const rowNames = (testId: string, attribute: string) =>
    page
      .getByTestId(testId)
      .locator('tbody tr')
      .evaluateAll((rows, attr) => rows.map((r) => r.getAttribute(attr as string)), attribute);

  it('lists definitions with volume and last seen, searches them, describes one and defines a new event', async () => {
    await page.getByRole('link', { name: 'Definitions' }).click();
    await page.getByRole('heading', { name: 'Data definitions' }).waitFor();
    // Equal volumes (three each) list by name.
    await waitFor(async () => expect(await rowNames('definitions-table', 'data-definition')).toEqual(['$identify', '$pageview']), {
      description: 'the event definitions',
    });
    await expect(page.locator('tr[data-definition="$pageview"]').textContent()).resolves.toMatch(/3.*\d{2}:\d{2}:\d{2}/);
    expect(await seriousViolations()).toEqual([]);
    await screenshot('70-definitions');
    await page.getByLabel('Search events').fill('page');
    await page.getByLabel('Search events').press('Enter');
    await waitFor(async () => expect(await rowNames('definitions-table', 'data-definition')).toEqual(['$pageview']), { description: 'the search' });
    expect(new URL(page.url()).search).toBe('?tab=events&search=page');

    await page.getByRole('link', { name: '$pageview' }).click();
    await page.getByRole('heading', { name: '$pageview' }).waitFor();
    await page.getByLabel('Description').fill('A page was shown');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const pageview = (await target.api('GET', '/api/projects/1/event_definitions/?search=%24pageview')).body.results[0];
    expect(pageview.description).toBe('A page was shown');
    expect(await seriousViolations()).toEqual([]);
    await screenshot('71-definition');

    await page.goto(`${target.base}/definitions`);
    await page.getByText('Define an event before it arrives').click();
    await page.getByLabel('Event name').fill('checkout_started');
    await page.getByRole('button', { name: 'Create definition' }).click();
    await page.getByRole('heading', { name: 'checkout_started' }).waitFor();
    await expect(page.getByTestId('definition-facts').textContent()).resolves.toContain('Last seennot yet');
    expect((await target.api('GET', '/api/projects/1/event_definitions/?search=checkout')).body.results).toMatchObject([
      { name: 'checkout_started', volume: 0 },
    ]);

    // An event property's type, corrected by hand.
    await page.goto(`${target.base}/definitions?tab=event-properties`);
    await page.getByRole('link', { name: 'amount' }).click();
    await page.getByRole('heading', { name: 'amount' }).waitFor();
    await expect(page.getByTestId('definition-facts').textContent()).resolves.toContain('TypeString');
    await page.getByLabel('Property type').selectOption('Numeric');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await expect(page.getByTestId('definition-facts').textContent()).resolves.toContain('TypeNumeric');
    expect((await target.api('GET', '/api/projects/1/property_definitions/?search=amount')).body.results[0]).toMatchObject({
      property_type: 'Numeric',
      is_numerical: true,
    });
  });

  it('creates a dynamic cohort from property filters, then edits its filters', async () => {
    await page.getByRole('link', { name: 'Cohorts' }).click();
    await page.getByRole('heading', { name: 'Cohorts' }).waitFor();
    await page.getByText('No cohorts yet').waitFor();
    await page.getByRole('link', { name: 'New cohort' }).click();
    await page.getByRole('heading', { name: 'New cohort' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Pro plan');
    await page.getByLabel('Group 1 filter 1 property').fill('plan');
    await page.getByLabel('Group 1 filter 1 value (comma-separated)').fill('pro');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('button', { name: 'Create cohort' }).click();
    await page.getByRole('heading', { name: 'Pro plan' }).waitFor();
    const created = (await target.api('GET', '/api/projects/1/cohorts/')).body.results[0];
    expect(created).toMatchObject({ name: 'Pro plan', is_static: false });
    expect(created.filters.properties.values[0].values).toEqual([{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }]);
    await waitFor(async () => expect((await page.getByTestId('cohort-persons').locator('li').allTextContents()).sort()).toEqual(['alice', 'carol']), {
      timeoutMs: 15_000,
      description: 'the cohort’s persons',
    });
    await screenshot('72-cohort-dynamic');

    // Edited: a second group (OR) for the free plan takes everyone in.
    await page.getByRole('button', { name: 'Add group (OR)' }).click();
    await page.getByLabel('Group 2 filter 1 property').fill('plan');
    await page.getByLabel('Group 2 filter 1 value (comma-separated)').fill('free');
    await page.getByLabel('Name', { exact: true }).fill('Any plan');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByRole('heading', { name: 'Any plan' }).waitFor();
    const edited = (await target.api('GET', `/api/projects/1/cohorts/${created.id}/`)).body;
    expect(edited.name).toBe('Any plan');
    expect(edited.filters.properties.values.map((g: { values: { value: unknown }[] }) => g.values.map((f) => f.value))).toEqual([[['pro']], [['free']]]);
    await waitFor(async () => expect((await page.getByTestId('cohort-persons').locator('li').allTextContents()).sort()).toEqual(['alice', 'bob', 'carol']), {
      timeoutMs: 15_000,
      description: 'the edited cohort’s persons',
    });
  });

  it('creates a static cohort from a CSV of distinct ids, then adds to it from another', async () => {
    await page.goto(`${target.base}/cohorts/new`);
    await page.getByLabel('Name', { exact: true }).fill('Interviewed');
    await page.getByLabel('Static: a list of persons from a CSV').check();
    await page.getByLabel(/CSV of distinct ids/).setInputFiles({ name: 'ids.csv', mimeType: 'text/csv', buffer: Buffer.from('distinct_id\nalice\nbob\n') });
    await page.getByRole('button', { name: 'Create cohort' }).click();
    await page.getByRole('heading', { name: 'Interviewed' }).waitFor();
    await waitFor(async () => expect(await page.getByTestId('cohort-count').textContent()).toBe('2'), { description: 'the static count' });
    // The members reach the query store within moments; the list shows them once they have.
    await waitFor(
      async () => {
        await page.reload();
        await page.locator('[data-testid="cohort-persons"], :text("No person is in this cohort yet.")').first().waitFor();
        expect((await page.getByTestId('cohort-persons').locator('li').allTextContents()).sort()).toEqual(['alice', 'bob']);
      },
      { timeoutMs: 15_000, intervalMs: 500, description: 'the static cohort’s persons' },
    );
    expect(await seriousViolations()).toEqual([]);
    await screenshot('73-cohort-static');
    await page.getByLabel('Add persons from a CSV of distinct ids').setInputFiles({ name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from('carol\n') });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await waitFor(async () => expect(await page.getByTestId('cohort-count').textContent()).toBe('3'), { description: 'the added person' });
    const cohorts = (await target.api('GET', '/api/projects/1/cohorts/?type=static')).body.results;
    expect(cohorts).toMatchObject([{ name: 'Interviewed', is_static: true, count: 3 }]);
    await page.goto(`${target.base}/cohorts`);
    await waitFor(async () => expect((await rowNames('cohorts-table', 'data-cohort')).sort()).toEqual(['Any plan', 'Interviewed']), {
      description: 'both listed',
    });
    await screenshot('74-cohorts');
  });

  it('creates an action with steps by event and URL, then edits it to add a step by selector and text', async () => {
    await page.getByRole('link', { name: 'Actions' }).click();
    await page.getByRole('heading', { name: 'Actions' }).waitFor();
    await page.getByRole('link', { name: 'New action' }).click();
    await page.getByRole('heading', { name: 'New action' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Saw pricing');
    await page.getByLabel('Step 1 event').fill('$pageview');
    await page.getByLabel('Step 1 URL', { exact: true }).fill('/pricing');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('button', { name: 'Create action' }).click();
    await page.getByRole('heading', { name: 'Saw pricing' }).waitFor();
    const created = (await target.api('GET', '/api/projects/1/actions/')).body.results[0];
    expect(created.steps).toMatchObject([{ event: '$pageview', url: '/pricing', url_matching: 'contains', selector: null, text: null }]);

    await page.getByRole('button', { name: 'Add step (OR)' }).click();
    await page.getByLabel('Step 2 event').fill('$autocapture');
    await page.getByLabel('Step 2 selector').fill('button.buy');
    await page.getByLabel('Step 2 text', { exact: true }).fill('Buy now');
    await page.getByLabel('Step 1 URL matching').selectOption('regex');
    await page.getByLabel('Step 1 URL', { exact: true }).fill('/pricing\\?from=');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const edited = (await target.api('GET', `/api/projects/1/actions/${created.id}/`)).body;
    expect(edited.steps).toMatchObject([
      { event: '$pageview', url: '/pricing\\?from=', url_matching: 'regex' },
      { event: '$autocapture', selector: 'button.buy', text: 'Buy now', text_matching: 'exact' },
    ]);
    await screenshot('75-action');
    await page.goto(`${target.base}/actions`);
    await waitFor(async () => expect(await rowNames('actions-table', 'data-action')).toEqual(['Saw pricing']), { description: 'the action listed' });
    await expect(page.locator('tr[data-action="Saw pricing"]').textContent()).resolves.toContain('$autocapture where element matches button.buy');
    expect(await seriousViolations()).toEqual([]);
  });

  it('answers an unknown address and a missing object with "Not found" and a way back', async () => {
    await page.goto(`${target.base}/no-such-page`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await expect(page.getByRole('link', { name: 'Go to Events' }).isVisible()).resolves.toBe(true);
    expect(await seriousViolations()).toEqual([]);
    await page.goto(`${target.base}/cohorts/999999`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.getByRole('link', { name: 'Back to cohorts' }).click();
    await page.getByRole('heading', { name: 'Cohorts' }).waitFor();
    await page.goto(`${target.base}/actions/999999`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.goto(`${target.base}/definitions/events/999999`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
  });

  it('moves focus to the new page’s heading after navigating', async () => {
    await page.goto(`${target.base}/events`);
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    await page.getByRole('link', { name: 'Cohorts' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Cohorts' }).waitFor();
    await waitFor(
      async () => expect(await page.evaluate(() => document.activeElement?.tagName + ' ' + document.activeElement?.textContent)).toBe('H1 Cohorts'),
      {
        description: 'focus on the heading',
      },
    );
    // A page whose heading waits for its data gets focus when it is drawn.
    await page.getByRole('link', { name: 'Any plan' }).click();
    await waitFor(async () => expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Any plan'), { description: 'focus on the cohort' });
  });

  it('says a disabled flag is disabled, words its changes as before → after, and splits new variants evenly', async () => {
    await page.goto(`${target.base}/feature_flags/${flagId}`);
    await page.getByRole('heading', { name: 'beta' }).waitFor();
    await page.getByTestId('flag-activity').waitFor();
    await page.getByLabel('Enabled').uncheck();
    await page.locator('input[name="rollout-0"]').fill('30');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.').waitFor();
    const status = page.getByTestId('flag-status');
    await waitFor(async () => expect(await status.textContent()).toContain('StatusDisabled: off for everyone'), { description: 'the disabled status' });
    expect(await status.textContent()).not.toMatch(/Status\s*active/);
    // The change, in words, not as cut JSON.
    const activity = page.getByTestId('flag-activity');
    await waitFor(async () => expect(await activity.locator('tbody tr').first().textContent()).toContain('Condition set 1 rollout: 100 % → 30 %'), {
      description: 'the rollout change in the activity log',
    });
    await expect(activity.locator('tbody tr').first().textContent()).resolves.toContain('Enabled: on → off');
    await expect(activity.textContent()).resolves.not.toContain('{"');

    // Variants: each one added takes an even share.
    await page.getByRole('button', { name: 'Add variant' }).click();
    await expect(page.getByLabel('Variant 1 rollout').inputValue()).resolves.toBe('100');
    await page.getByRole('button', { name: 'Add variant' }).click();
    await page.getByRole('button', { name: 'Add variant' }).click();
    expect(await Promise.all([1, 2, 3].map((n) => page.getByLabel(`Variant ${n} rollout`).inputValue()))).toEqual(['34', '33', '33']);
    await expect(page.getByTestId('variant-total').textContent()).resolves.toBe('Rollout adds up to 100%.');
    expect(await seriousViolations()).toEqual([]);
    await screenshot('78-flag-disabled-activity');
  });

  it('offers a Copy button for a new personal API key', async () => {
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: target.base });
    await page.goto(`${target.base}/settings`);
    await page.getByLabel('Label').fill('Copied key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const issued = await page.getByTestId('issued-key').textContent();
    expect(issued).toMatch(/^phx_/);
    await page.getByRole('button', { name: 'Copy the new key Copied key' }).click();
    await page.getByRole('button', { name: 'Copy the new key Copied key' }).getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(issued);
  });

  it('names the saved insight a builder is editing', async () => {
    const saved = await target.api('POST', '/api/environments/1/insights/', {
      name: 'Weekly pageviews',
      saved: true,
      filters: { insight: 'TRENDS', events: [{ id: '$pageview', type: 'events', math: 'total' }], interval: 'day', date_from: '-7d' },
    });
    expect(saved.status).toBe(201);
    await page.goto(`${target.base}/insights/${saved.body.id}`);
    await page.getByRole('link', { name: 'Edit the query' }).click();
    await page.getByTestId('editing-insight').getByText('Weekly pageviews').waitFor();
  });

  it('shows an offline state with a retry, and a banner while the browser is offline', async () => {
    await page.goto(`${target.base}/cohorts`);
    await page.getByTestId('cohorts-table').waitFor();
    await browser.context.setOffline(true);
    await page.getByRole('link', { name: 'Actions' }).click();
    await page.getByText('Sightline cannot be reached.').waitFor();
    await page.getByText('You are offline').waitFor();
    expect(await seriousViolations()).toEqual([]);
    await screenshot('79-offline');
    await browser.context.setOffline(false);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('actions-table').waitFor();
    await waitFor(async () => (await page.getByText('You are offline').count()) === 0, { description: 'the banner gone' });
  });

  it('has a menu button for the nav at 390 px and no page scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${target.base}/events`);
    await page.getByRole('heading', { name: 'Events' }).waitFor();
    // The top bar is one compact row; the nav is behind the menu button.
    const barHeight = await page.locator('header.topbar').evaluate((bar: any) => bar.getBoundingClientRect().height);
    expect(barHeight).toBeLessThanOrEqual(60);
    await expect(page.getByRole('link', { name: 'Persons' }).isVisible()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await expect(page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded')).resolves.toBe('true');
    expect(await seriousViolations()).toEqual([]);
    await screenshot('76-menu-phone');
    await page.getByRole('link', { name: 'Persons' }).click();
    await page.getByRole('heading', { name: 'Persons' }).waitFor();
    await expect(page.getByRole('link', { name: 'Cohorts' }).isVisible()).resolves.toBe(false);

    const alice = await target.person('alice');
    const cohort = (await target.api('GET', '/api/projects/1/cohorts/?type=static')).body.results[0];
    const action = (await target.api('GET', '/api/projects/1/actions/')).body.results[0];
    const pageview = (await target.api('GET', '/api/projects/1/event_definitions/?search=%24pageview')).body.results[0];
    // Every page the nav lists (pages added later included), then each kind of detail page.
    const navPaths = await page.locator('nav[aria-label="Main"] a').evaluateAll((links) => links.map((a) => a.getAttribute('href')!));
    expect(navPaths).toEqual(expect.arrayContaining(['/events', '/trends', '/funnels', '/persons', '/feature_flags', '/definitions', '/cohorts', '/actions']));
    const pages = [
      ...navPaths,
      `/persons/${alice!.uuid}`,
      `/feature_flags/${flagId}`,
      '/feature_flags/new',
      '/definitions?tab=person-properties',
      `/definitions/events/${pageview.id}`,
      '/cohorts/new',
      `/cohorts/${cohort.id}`,
      `/actions/${action.id}`,
      '/no-such-page',
    ];
    const overflowing: string[] = [];
    for (const path of pages) {
      await page.goto(`${target.base}${path}`);
      await page.locator('main h1').first().waitFor();
      // Wait for the page's data (no loading line left), then measure.
      await waitFor(async () => (await page.locator('main [role="status"]:has-text("Loading")').count()) === 0, { description: `${path} loaded` });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (overflow > 0) {
        // Name the elements that reach past the right edge, innermost first, so a failure says what to fix.
        const culprits = await page.evaluate(() =>
          [...document.querySelectorAll('main *')]
            .filter(
              (el: any) =>
                el.getBoundingClientRect().right > window.innerWidth + 0.5 &&
                ![...el.children].some((c: any) => c.getBoundingClientRect().right > window.innerWidth + 0.5),
            )
            .slice(0, 3)
            .map((el: any) => `${el.tagName.toLowerCase()}.${el.className}`),
        );
        overflowing.push(`${path} by ${overflow} px (${culprits.join(', ')})`);
      }
    }
    expect(overflowing).toEqual([]);
    // The flags list's enabled switch is on screen.
    await page.goto(`${target.base}/feature_flags`);
    const toggle = page.locator('tr[data-flag="beta"]').getByRole('switch');
    await toggle.waitFor();
    const box = await toggle.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await screenshot('77-flags-phone');
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('logged no console errors beyond the 404s asked for', () => {
    // The 404s the not-found test asks for, and the failed loads while offline.
    expect(consoleErrors.filter((e) => !/Failed to load resource: (the server responded with a status of 404|net::ERR_INTERNET_DISCONNECTED)/.test(e))).toEqual(
      [],
    );
  });
});
