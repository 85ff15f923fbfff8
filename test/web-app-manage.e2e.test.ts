// The web app's management pages in headless Chromium (Debian's chromium through playwright-core)
// against `npm start`'s all-in-one service with generated persons and flags: the flag list's
// filters, a flag's release conditions, variants and payloads edited in the browser and seen by
// /flags, its status and activity, a flag created from the form; persons with chosen columns that
// survive a reload and a person deleted with their events; the project's test-account filters;
// personal API keys with custom scopes, rolled and revoked; empty, error and phone layouts, each
// page checked with axe-core. Screenshots 40-59 go to test-output/web-app/ (git-ignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { seriousViolations as pageViolations, WEB_APP_OUTPUT_DIR } from './web-app-browser';

const OUTPUT_DIR = WEB_APP_OUTPUT_DIR;
const EMAIL = 'engineer@example.com';
const PASSWORD = 'a long enough password';

declare const window: any;
declare const document: any;

interface FlagsAnswer {
  featureFlags: Record<string, unknown>;
  featureFlagPayloads: Record<string, unknown>;
}

describe('the web app’s management pages in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let checkoutId: number;
  const consoleErrors: string[] = [];
  /** Answers the browser reports as failed loads: only the two the tests cause on purpose may appear. */
  const failedLoads: string[] = [];

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_manage');
    const now = Date.now();
    // Two identified persons with a plan, and a third, anonymous one.
    const people = [
      { distinctId: 'alice', set: { email: 'alice@example.com', plan: 'pro' } },
      { distinctId: 'bob', set: { email: 'bob@example.org', plan: 'free' } },
      { distinctId: 'carol', set: { plan: 'free' } },
    ];
    const batch = people.flatMap((p, i) => [
      { event: '$identify', distinct_id: p.distinctId, timestamp: new Date(now - (i + 2) * 60_000).toISOString(), properties: { $set: p.set } },
      { event: '$pageview', distinct_id: p.distinctId, timestamp: new Date(now - (i + 1) * 60_000).toISOString(), properties: { $browser: 'Chrome' } },
    ]);
    const res = await fetch(`${target.base}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: target.projectKey, batch }),
    });
    expect(res.status).toBe(200);
    await waitFor(async () => (await target.person('carol'))?.properties['plan'] === 'free', { timeoutMs: 30_000, description: 'the persons' });
    await waitFor(
      async () => {
        const definitions = await target.api('GET', '/api/projects/1/property_definitions/?type=person');
        return (definitions.body.results as { name: string }[] | undefined)?.some((d) => d.name === 'plan') === true;
      },
      { timeoutMs: 10_000, description: 'the person property definitions' },
    );
    const checkout = await target.api('POST', '/api/projects/1/feature_flags/', {
      key: 'checkout-v2',
      name: 'New checkout',
      active: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    });
    expect(checkout.status).toBe(201);
    checkoutId = checkout.body.id;
    const pricing = await target.api('POST', '/api/projects/1/feature_flags/', {
      key: 'pricing-test',
      active: false,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'b', rollout_percentage: 50 },
          ],
        },
      },
    });
    expect(pricing.status).toBe(201);

    const cohort = await target.api('POST', '/api/projects/1/cohorts/', {
      name: 'Pro users',
      filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } },
    });
    expect(cohort.status).toBe(201);

    // The first user's password, through the link the start printed (the first-start page is the other file's).
    const token = /\/setup\?token=([A-Za-z0-9_-]+)/.exec(target.output())?.[1];
    expect(token).toBeDefined();
    const setup = await fetch(`${target.base}/api/password_setup/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, email: EMAIL, password: PASSWORD }),
    });
    expect(setup.status).toBe(200);

    browser = await launchChromium();
    page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 860 });
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      const failed = /^Failed to load resource: the server responded with a status of (\d+)/.exec(message.text());
      if (failed) failedLoads.push(`${failed[1]} ${new URL(message.location().url).pathname}`);
      else consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
  });

  afterAll(async () => {
    await browser?.close();
    await target?.close();
  });

  async function screenshot(name: string) {
    await page.screenshot({ path: join(OUTPUT_DIR, `${name}.png`), fullPage: true });
  }

  const seriousViolations = () => pageViolations(page);

  async function flagsFor(distinctId: string): Promise<FlagsAnswer> {
    const res = await fetch(`${target.base}/flags/?v=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: target.projectKey, distinct_id: distinctId }),
    });
    return (await res.json()) as FlagsAnswer;
  }

  /** Saves the flag editor's form and waits for the API's answer to its PATCH. */
  async function saveFlag() {
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'PATCH' && /\/feature_flags\/\d+\/$/.test(new URL(r.url()).pathname)),
      page.getByRole('button', { name: 'Save', exact: true }).click(),
    ]);
    expect(answer.status()).toBe(200);
    await page.getByText('Saved.').waitFor();
  }

  const flagRows = () =>
    page
      .getByTestId('flags-table')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-flag')));

  it('signs in and filters the flag list by status and type, the filters held in the address', async () => {
    await page.goto(`${target.base}/feature_flags`);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signing in keeps the address asked for.
    await page.getByRole('heading', { name: 'Feature flags' }).waitFor();
    await page.getByTestId('flags-table').waitFor();
    await waitFor(async () => expect((await flagRows()).sort()).toEqual(['checkout-v2', 'pricing-test']), { description: 'both flags listed' });
    await expect(page.locator('tr[data-flag="pricing-test"]').textContent()).resolves.toContain('Multivariate (2)');
    await screenshot('40-flags-list');
    expect(await seriousViolations()).toEqual([]);

    await page.getByLabel('Type').selectOption('multivariant');
    await waitFor(async () => expect(await flagRows()).toEqual(['pricing-test']), { description: 'multivariate flags only' });
    await page.getByLabel('Status').selectOption('true');
    await page.getByText('No flag matches these filters.').waitFor();
    expect(new URL(page.url()).search).toBe('?type=multivariant&active=true');
    await screenshot('41-flags-filtered-empty');
    await page.reload();
    await page.getByText('No flag matches these filters.').waitFor();
    await page.getByLabel('Type').selectOption('');
    await waitFor(async () => expect(await flagRows()).toEqual(['checkout-v2']), { description: 'enabled flags only' });

    // Search, by keyboard.
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Search by key or name').focus();
    await page.keyboard.type('pricing');
    await page.keyboard.press('Enter');
    await waitFor(async () => expect(await flagRows()).toEqual(['pricing-test']), { description: 'the search' });
  });

  it('edits a release condition on a person property and /flags answers the change', async () => {
    expect((await flagsFor('alice')).featureFlags['checkout-v2']).toBe(true);
    expect((await flagsFor('bob')).featureFlags['checkout-v2']).toBe(true);
    await page.goto(`${target.base}/feature_flags/${checkoutId}`);
    await page.getByRole('heading', { name: 'checkout-v2' }).waitFor();
    // PostHog's status of a flag not fully rolled out, and no evaluation time (the API does not record one).
    await page.getByTestId('flag-status').getByText('active: Flag is not fully rolled out and may still be active').waitFor();
    await expect(page.getByTestId('flag-status').textContent()).resolves.toContain('Last evaluatednot recorded');
    await page.getByRole('button', { name: 'Add property filter to set 1' }).click();
    // The property picker offers the person properties the worker recorded.
    await page.getByLabel('Set 1 filter 1 property').focus();
    const offered = page.getByRole('listbox', { name: 'Matching properties' }).getByRole('option');
    await offered.first().waitFor();
    expect(await offered.evaluateAll((options) => options.map((o) => o.getAttribute('data-option')))).toEqual(expect.arrayContaining(['plan', 'email']));
    await page.getByLabel('Set 1 filter 1 property').fill('plan');
    await page.getByLabel('Set 1 filter 1 operator').selectOption('exact');
    await page.getByLabel('Set 1 filter 1 value').fill('pro');
    await saveFlag();
    await waitFor(async () => (await flagsFor('alice')).featureFlags['checkout-v2'] === true && (await flagsFor('bob')).featureFlags['checkout-v2'] === false, {
      description: '/flags after the condition',
    });
    const stored = await target.api('GET', `/api/projects/1/feature_flags/${checkoutId}/`);
    expect(stored.body.filters.groups[0].properties).toEqual([{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }]);

    // A second condition set: everyone on the free plan, at 0 %: bob still off.
    await page.getByRole('button', { name: 'Add condition set' }).click();
    await page.getByRole('button', { name: 'Add property filter to set 2' }).click();
    await page.getByLabel('Set 2 filter 1 property').fill('plan');
    await page.getByLabel('Set 2 filter 1 value').fill('free');
    await page.locator('input[name="rollout-1"]').fill('0');
    await saveFlag();
    await screenshot('42-flag-conditions');
    expect(await seriousViolations()).toEqual([]);
    await page.locator('input[name="rollout-1"]').fill('100');
    await saveFlag();
    await waitFor(async () => (await flagsFor('bob')).featureFlags['checkout-v2'] === true, { description: 'bob matched by the second set at 100 %' });
    expect((await flagsFor('dave-unknown')).featureFlags['checkout-v2']).toBe(false);
  });

  it('turns the flag multivariate with a payload per variant, refusing invalid JSON, and /flags serves the variant and payload', async () => {
    await page.getByRole('button', { name: 'Add variant' }).click();
    await page.getByRole('button', { name: 'Add variant' }).click();
    await page.getByLabel('Variant 2 key').fill('treatment');
    // A new variant takes an even share.
    await expect(page.getByTestId('variant-total').textContent()).resolves.toBe('Rollout adds up to 100%.');
    await page.getByLabel('Variant 2 rollout').fill('70');
    await expect(page.getByTestId('variant-total').textContent()).resolves.toContain('it must be 100%');
    await page.getByRole('button', { name: 'Split evenly' }).click();
    await expect(page.getByTestId('variant-total').textContent()).resolves.toBe('Rollout adds up to 100%.');
    await page.getByLabel('Payload for treatment').fill('{"discount": 10');
    await page.getByText(/^Not valid JSON/).waitFor();
    await expect(page.getByLabel('Payload for treatment').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('alert').getByText('A payload is not valid JSON.').waitFor();
    await screenshot('43-flag-payload-invalid');
    await page.getByLabel('Payload for treatment').fill('{"discount": 10}');
    // Everyone matching set 1 (alice) always gets the treatment.
    await page.getByLabel('Variant for this set').first().selectOption('treatment');
    await saveFlag();
    await waitFor(
      async () => {
        const answer = await flagsFor('alice');
        const payload = answer.featureFlagPayloads['checkout-v2'];
        return answer.featureFlags['checkout-v2'] === 'treatment' && (typeof payload === 'string' ? JSON.parse(payload) : payload)?.discount === 10;
      },
      { description: '/flags serving alice the treatment and its payload' },
    );
    expect(['control', 'treatment']).toContain((await flagsFor('bob')).featureFlags['checkout-v2']);
    await screenshot('44-flag-variants-payloads');
    expect(await seriousViolations()).toEqual([]);

    // The activity log lists the edits, newest first, by the signed-in user.
    const activity = page.getByTestId('flag-activity');
    await waitFor(async () => (await activity.locator('tbody tr[data-activity="updated"]').count()) >= 4, { description: 'the edits in the activity log' });
    await expect(activity.locator('tbody tr').first().textContent()).resolves.toContain(EMAIL);
    await expect(activity.textContent()).resolves.toContain('created');
    await page.getByRole('heading', { name: 'Activity' }).scrollIntoViewIfNeeded();
    await screenshot('45-flag-activity');
  });

  it('creates a flag from the form, and shows the error and empty states', async () => {
    await page.goto(`${target.base}/feature_flags/new`);
    await page.getByRole('heading', { name: 'New feature flag' }).waitFor();
    await page.getByLabel('Key (what SDKs ask for)').fill('beta-banner');
    await page.getByLabel('Description').fill('Beta banner');
    // For the persons of a cohort.
    await page.getByRole('button', { name: 'Add property filter to set 1' }).click();
    await page.getByLabel('Set 1 filter 1 kind').selectOption('cohort');
    await page.getByLabel('Set 1 filter 1 cohort').selectOption({ label: 'Pro users' });
    await page.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('heading', { name: 'beta-banner' }).waitFor();
    await waitFor(
      async () => (await flagsFor('alice')).featureFlags['beta-banner'] === true && (await flagsFor('carol')).featureFlags['beta-banner'] === false,
      { description: '/flags with the new flag for the cohort' },
    );
    const created = await target.api('GET', '/api/projects/1/feature_flags/?search=beta-banner');
    expect(created.body.results[0].filters.groups[0].properties).toEqual([
      { key: 'id', type: 'cohort', operator: 'in', value: expect.any(Number), cohort_name: 'Pro users' },
    ]);
    // The same key again is refused with the API's message.
    await page.goto(`${target.base}/feature_flags/new`);
    await page.getByLabel('Key (what SDKs ask for)').fill('beta-banner');
    await page.getByRole('button', { name: 'Create flag' }).click();
    await page.getByRole('alert').waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/already/i);
    await screenshot('46-flag-create-error');
    expect(await seriousViolations()).toEqual([]);

    await page.goto(`${target.base}/feature_flags/999999`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await screenshot('47-flag-not-found');
    expect(await seriousViolations()).toEqual([]);
  });

  it('shows the person property columns the user picks, remembered after a reload', async () => {
    await page.getByRole('link', { name: 'Persons' }).click();
    await page.getByTestId('persons-table').waitFor();
    await page.getByText(/^Columns/).click();
    await page.getByLabel('Person property to show as a column').fill('plan');
    await page.getByRole('button', { name: 'Add column' }).click();
    await page.getByLabel('Person property to show as a column').fill('email');
    await page.getByLabel('Person property to show as a column').press('Enter');
    const column = (name: string) =>
      page
        .getByTestId('persons-table')
        .locator(`td[data-column="${name}"]`)
        .allTextContents()
        .then((values) => values.sort());
    await expect(column('plan')).resolves.toEqual(['free', 'free', 'pro']);
    await expect(column('email')).resolves.toEqual(['alice@example.com', 'bob@example.org', '–']);
    await screenshot('48-persons-columns');
    expect(await seriousViolations()).toEqual([]);
    await page.reload();
    await page.getByTestId('persons-table').waitFor();
    await expect(column('plan')).resolves.toEqual(['free', 'free', 'pro']);
    await page.getByText(/^Columns/).click();
    await page.getByRole('button', { name: 'Remove column email' }).click();
    await expect(page.getByTestId('persons-table').locator('td[data-column="email"]').count()).resolves.toBe(0);

    // The CSV export the link names holds every person with their properties.
    const href = (await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href'))!;
    const csv = await page.evaluate(async (path: string) => (await fetch(path)).text(), href);
    expect(csv.split('\n')[0]).toContain('properties.plan');
    expect(csv).toContain('bob@example.org');
  });

  it('opens a person with their properties, distinct ids and events, and deletes them with their events', async () => {
    await page.getByLabel('Search by e-mail, name or distinct id').fill('bob');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'bob@example.org' }).click();
    await page.getByRole('heading', { name: 'bob@example.org' }).waitFor();
    await expect(page.getByTestId('distinct-ids').textContent()).resolves.toContain('bob');
    await waitFor(async () => (await page.getByTestId('person-events').locator('tbody tr[data-event]').count()) === 2, { description: "bob's events" });
    await page.getByRole('button', { name: 'Delete this person…' }).click();
    await page.getByLabel(/Also delete their events/).check();
    await screenshot('49-person-delete-with-events');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('button', { name: 'Yes, delete this person' }).click();
    await page.getByRole('heading', { name: 'Persons' }).waitFor();
    expect(await target.person('bob')).toBeNull();
    // The events' deletion is queued for the deletion job, with the distinct ids bob had.
    const queued = await target.stores.db.query<{ distinct_ids: string[] }>('SELECT distinct_ids FROM queued_deletions WHERE done_at IS NULL');
    expect(queued).toEqual([{ distinct_ids: ['bob'] }]);
  });

  it("edits the project's test-account filters", async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Settings' }).waitFor();
    await page.getByRole('button', { name: 'Add test-account filter' }).click();
    await page.getByLabel('Test filter 1 kind').selectOption('person');
    await page.getByLabel('Test filter 1 property').fill('email');
    await page.getByLabel('Test filter 1 operator').selectOption('not_icontains');
    await page.getByLabel('Test filter 1 value').fill('@example.org');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.').waitFor();
    const project = await target.api('GET', '/api/projects/1/');
    expect(project.body.test_account_filters).toEqual([{ key: 'email', type: 'person', operator: 'not_icontains', value: '@example.org' }]);
    await page.getByTestId('test-account-filters').scrollIntoViewIfNeeded();
    await screenshot('50-settings-test-account-filters');
    expect(await seriousViolations()).toEqual([]);
  });

  it('issues a personal API key with custom scopes, rolls it and revokes it', async () => {
    await page.getByLabel('Label', { exact: true }).fill('Persons reader');
    await page.getByLabel('Scopes').selectOption('custom');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Choose read or write access to at least one resource.').waitFor();
    await page.getByLabel('Persons access').selectOption('read');
    await page.getByLabel('Feature flags access').selectOption('write');
    await screenshot('51-api-key-custom-scopes');
    expect(await seriousViolations()).toEqual([]);
    await page.getByRole('button', { name: 'Create key' }).click();
    const issued = (await page.getByTestId('issued-key').textContent())!;
    expect(issued).toMatch(/^phx_/);
    const get = (key: string, path: string) => fetch(`${target.base}${path}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
    expect(await get(issued, '/api/environments/1/persons/?limit=1')).toBe(200);
    expect(await get(issued, '/api/projects/1/feature_flags/')).toBe(200);
    expect(await get(issued, '/api/projects/1/insights/')).toBe(403);
    await expect(page.locator('tr[data-key="Persons reader"]').textContent()).resolves.toContain('person:read, feature_flag:write');

    await page.getByRole('button', { name: 'Roll key Persons reader' }).click();
    await page.getByText('Give Persons reader a new value? The current one stops working at once.').waitFor();
    await page.getByRole('button', { name: 'Yes, roll key Persons reader' }).click();
    await waitFor(async () => ((await page.getByTestId('issued-key').textContent()) ?? issued) !== issued, { description: 'the rolled value shown' });
    const rolled = (await page.getByTestId('issued-key').textContent())!;
    expect(await get(issued, '/api/environments/1/persons/?limit=1')).toBe(401);
    expect(await get(rolled, '/api/environments/1/persons/?limit=1')).toBe(200);
    await screenshot('52-api-key-rolled');

    await page.getByRole('button', { name: 'Delete key Persons reader…' }).click();
    await page.getByRole('button', { name: 'Yes, delete key Persons reader' }).click();
    await waitFor(async () => (await page.locator('tr[data-key="Persons reader"]').count()) === 0, { description: 'the key gone' });
    expect(await get(rolled, '/api/environments/1/persons/?limit=1')).toBe(401);
  });

  it('is readable on a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const noOverflow = async () => expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await page.goto(`${target.base}/feature_flags/${checkoutId}`);
    await page.getByRole('heading', { name: 'checkout-v2' }).waitFor();
    await page.getByTestId('flag-activity').waitFor();
    await screenshot('53-flag-editor-phone');
    await noOverflow();
    // On a phone the nav is behind the menu button.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Persons' }).click();
    await page.getByTestId('persons-table').waitFor();
    await screenshot('54-persons-phone');
    await noOverflow();
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByTestId('test-account-filters').waitFor();
    await screenshot('55-settings-phone');
    await noOverflow();
  });

  it('tells a browser whose address has failed too often for an e-mail to wait (the sign-in throttle)', async () => {
    await page.setViewportSize({ width: 1280, height: 860 });
    const guessed = 'someone@example.com';
    // LOGIN_FAILURE_LIMIT's default: 30 failures from this address for this e-mail.
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${target.base}/api/login/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: guessed, password: `guess ${i}` }),
      });
      expect(res.status).toBe(400);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sightline' }).waitFor();
    await page.getByLabel('E-mail').fill(guessed);
    await page.getByLabel('Password').fill('one more guess');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(/^Request was throttled\. Expected available in \d+ seconds\.$/)
      .waitFor();
    await screenshot('56-sign-in-throttled');
    expect(await seriousViolations()).toEqual([]);
    // Another e-mail from the same address signs in.
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('link', { name: 'Sign out' })
      .or(page.getByRole('button', { name: 'Sign out' }))
      .waitFor();
  });

  it('logged no console errors, and no failed load but the refused duplicate key, the missing flag and the throttled sign-in', () => {
    expect(consoleErrors).toEqual([]);
    expect(failedLoads).toEqual(['400 /api/projects/1/feature_flags/', '404 /api/projects/1/feature_flags/999999/', '429 /api/login/']);
  });
});
