// The builders' pickers and drill-downs in headless Chromium against `npm start`'s all-in-one
// service: searchable property and value pickers (volume and last seen, recent first, keyboard,
// values searched server-side), the funnel's conversion-over-time persons equal to the API's actors
// query, the world map's table ordered by value, largest first, and the "other" row's persons. Screenshots 95 and up go to test-output/web-app/.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startSdkTarget, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';
import { openPage, sendBatch, seriousViolations as axeFindings, setupLink, WEB_APP_OUTPUT_DIR as OUTPUT_DIR } from './web-app-browser';

const MINUTE = 60_000;

/**
 * Five people view pages from four countries; alice, bob and erin sign up. Browsers: Chrome 5,
 * Firefox 3, Safari 1. Plans (person property): pro (alice), free (bob, carol, erin). Visits:
 * US 2, DE 1, no country 3.
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
    event('$pageview', 'alice', 0, { $browser: 'Chrome', $geoip_country_code: 'US', $set: { plan: 'pro' } }),
    event('$pageview', 'alice', 1, { $browser: 'Chrome', $geoip_country_code: 'US' }),
    event('signed_up', 'alice', 3),
    event('$pageview', 'bob', 4, { $browser: 'Chrome', $geoip_country_code: 'DE', $set: { plan: 'free' } }),
    event('$pageview', 'bob', 5, { $browser: 'Firefox', $geoip_country_code: 'DE' }),
    event('signed_up', 'bob', 30),
    event('$pageview', 'carol', 7, { $browser: 'Firefox', $geoip_country_code: 'FR', $set: { plan: 'free' } }),
    event('$pageview', 'carol', 8, { $browser: 'Firefox', $geoip_country_code: 'US' }),
    event('$pageview', 'dave', 11, { $browser: 'Safari', $geoip_country_code: 'GB' }),
    event('$pageview', 'erin', 12, { $browser: 'Chrome', $geoip_country_code: 'US', $set: { plan: 'free' } }),
    event('$pageview', 'erin', 13, { $browser: 'Chrome', $geoip_country_code: 'US' }),
    event('signed_up', 'erin', 14),
    // Visits for the world map: more without a country (dave's) than from any one country.
    event('visit', 'alice', 20, { $geoip_country_code: 'US' }),
    event('visit', 'carol', 21, { $geoip_country_code: 'US' }),
    event('visit', 'bob', 22, { $geoip_country_code: 'DE' }),
    event('visit', 'dave', 23),
    event('visit', 'dave', 24),
    event('visit', 'dave', 25),
    // 27 values of `n`: past the breakdown limit of 25, n26 (carol's) and n27 (dave's) are "other".
    ...Array.from({ length: 27 }, (_, i) =>
      event('tick', ['alice', 'bob', 'erin', 'carol', 'dave'][Math.min(4, Math.max(0, i - 22))]!, 30 + i / 10, { n: `n${String(i + 1).padStart(2, '0')}` }),
    ),
  ];
}

const trendUrl = (base: string, q: Record<string, unknown>) =>
  `${base}/trends?q=${encodeURIComponent(JSON.stringify({ series: [{ event: '$pageview', math: 'total' }], breakdown: '', interval: 'day', date_from: '-7d', display: 'line', ...q }))}`;

describe('pickers and drill-downs in Chromium', () => {
  let target: SdkTarget;
  let browser: Chromium;
  let page: Page;
  let consoleErrors: string[];

  beforeAll(async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    target = await startSdkTarget('web_pickers');
    // Within the hour before now (and after today's midnight unless the test runs just after it).
    await sendBatch(target, generatedEvents(Date.now() - 50 * MINUTE));
    await waitFor(async () => (await target.person('erin'))?.properties['plan'] === 'free', { timeoutMs: 30_000, description: "erin's plan" });
    await waitFor(
      async () => {
        const definitions = await target.api('GET', '/api/projects/1/property_definitions/?type=event');
        return definitions.body.results?.some((d: { name: string }) => d.name === '$geoip_country_code');
      },
      { timeoutMs: 10_000, description: 'the property definitions' },
    );
    ({ browser, page, consoleErrors } = await openPage());
    await page.goto(setupLink(target)!);
    await page.getByLabel('E-mail').fill('pickers@example.com');
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
  const query = () => JSON.parse(new URL(page.url()).searchParams.get('q')!);
  const optionsOf = (what: string) => page.getByRole('listbox', { name: `Matching ${what}` }).getByRole('option');
  const optionNames = (what: string) => optionsOf(what).evaluateAll((items) => items.map((li) => li.getAttribute('data-option')));

  it('picks a filter property and value from searchable lists, by keyboard, the values searched server-side', async () => {
    const valueSearches: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/events/values/')) valueSearches.push(new URL(request.url()).searchParams.get('value') ?? '');
    });
    await page.goto(trendUrl(target.base, {}));
    await page.getByTestId('trend-result').waitFor();
    // No field offers the browser's datalist any more.
    expect(await page.locator('input[list]').count()).toBe(0);
    const global = page.getByRole('group', { name: 'Filters on every series' });
    await global.getByRole('button', { name: 'Add filter' }).click();

    // The property picker: the project's event properties, each with its volume and when it was last seen.
    const property = global.getByRole('combobox', { name: 'Property', exact: true });
    await property.fill('geo');
    await optionsOf('properties').first().waitFor();
    expect(await optionNames('properties')).toEqual(['$geoip_country_code']);
    expect(await optionsOf('properties').first().textContent()).toMatch(/^\$geoip_country_code\d+ events? · seen \d+ (min|h) ago$/);
    await property.fill('');
    // Recent first: the order is the definitions' last seen, newest first.
    const definitions = (await target.api('GET', '/api/projects/1/property_definitions/?type=event&limit=500')).body.results as {
      name: string;
      last_seen_at: string;
    }[];
    const recentFirst = [...definitions].sort((a, b) => Date.parse(b.last_seen_at) - Date.parse(a.last_seen_at) || a.name.localeCompare(b.name));
    await waitFor(async () => expect(await optionNames('properties')).toEqual(recentFirst.map((d) => d.name)), { description: 'recent first' });
    // Escape closes the list; arrows and Enter pick.
    await property.press('Escape');
    expect(await property.getAttribute('aria-expanded')).toBe('false');
    await property.fill('brow');
    await optionsOf('properties').first().waitFor();
    await property.press('ArrowDown');
    expect(await property.getAttribute('aria-activedescendant')).toBe(await optionsOf('properties').first().getAttribute('id'));
    await property.press('Enter');
    await waitFor(async () => expect(query().properties).toEqual([{ key: '$browser', operator: 'exact', value: '', type: 'event' }]), {
      description: 'the picked property',
    });

    // The value picker: the API's values of $browser, most common first, with their counts.
    const value = global.getByRole('combobox', { name: 'Value' });
    await value.focus();
    await optionsOf('values').first().waitFor();
    const api = (await target.api('GET', '/api/projects/1/events/values/?key=%24browser')).body as { name: string; count: number }[];
    expect(api).toEqual([
      { name: 'Chrome', count: 5 },
      { name: 'Firefox', count: 3 },
      { name: 'Safari', count: 1 },
    ]);
    expect(await optionNames('values')).toEqual(api.map((v) => v.name));
    expect(await optionsOf('values').first().textContent()).toBe('Chrome5 events');
    await screenshot('95-trends-value-picker');
    expect(await seriousViolations()).toEqual([]);
    // Typing searches on the server (capped there), and the list follows.
    await value.pressSequentially('fire');
    await waitFor(async () => expect(valueSearches).toContain('fire'), { description: 'the search sent' });
    await waitFor(async () => expect(await optionNames('values')).toEqual(['Firefox']), { description: 'the searched values' });
    await value.press('ArrowDown');
    await value.press('Enter');
    await waitFor(async () => expect(query().properties).toEqual([{ key: '$browser', operator: 'exact', value: 'Firefox', type: 'event' }]), {
      description: 'the picked value',
    });
    await waitFor(async () => expect(await page.getByTestId('trend-series').first().locator('tbody tr').first().getAttribute('data-total')).toBe('3'), {
      description: "Firefox's three pageviews",
    });
    // Back in the field, every value is offered again, not only the one it holds.
    await value.blur();
    await value.focus();
    await waitFor(async () => expect(await optionNames('values')).toEqual(['Chrome', 'Firefox', 'Safari']), { description: 'every value again' });
    await value.press('Escape');

    // A name the project never saw is flagged, as the event picker does.
    await property.fill('$browsr');
    await property.press('Enter');
    await global.getByText('Property never seen in this project').waitFor();
  });

  it('offers person properties and their values in a breakdown and a funnel filter', async () => {
    await page.goto(trendUrl(target.base, { display: 'table' }));
    await page.getByTestId('trend-result').waitFor();
    await page.getByLabel('Breakdown by').selectOption('person');
    const breakdown = page.getByRole('combobox', { name: 'Breakdown property' });
    await breakdown.focus();
    await optionsOf('properties').first().waitFor();
    expect(await optionNames('properties')).toEqual(expect.arrayContaining(['plan']));
    expect(await optionNames('properties')).not.toContain('$browser');
    await breakdown.pressSequentially('pla');
    await breakdown.press('ArrowDown');
    await breakdown.press('Enter');
    await waitFor(async () => expect(query()).toMatchObject({ breakdown: 'plan', breakdown_type: 'person' }), { description: 'the breakdown' });

    // A funnel's filter on a person property: the persons' values of `plan`, most common first.
    await page.goto(`${target.base}/funnels`);
    await page.getByTestId('funnel-result').waitFor();
    const filters = page.getByRole('group', { name: 'Filters on every step' });
    await filters.getByRole('button', { name: 'Add filter' }).click();
    await filters.getByLabel('Filter on').selectOption('person');
    await filters.getByRole('combobox', { name: 'Property', exact: true }).fill('plan');
    await filters.getByRole('combobox', { name: 'Property', exact: true }).press('Enter');
    const value = filters.getByRole('combobox', { name: 'Value' });
    await value.focus();
    await optionsOf('values').first().waitFor();
    const api = (await target.api('GET', '/api/projects/1/persons/values/?key=plan')).body as { name: string; count: number }[];
    expect(api).toEqual([
      { name: 'free', count: 3 },
      { name: 'pro', count: 1 },
    ]);
    expect(await optionNames('values')).toEqual(['free', 'pro']);
    expect(await optionsOf('values').first().textContent()).toBe('free3 persons');
    await value.press('ArrowDown');
    await value.press('ArrowDown');
    await value.press('Enter');
    await waitFor(async () => expect(query().properties).toEqual([{ key: 'plan', operator: 'exact', value: 'pro', type: 'person' }]), {
      description: 'the funnel filter',
    });
    expect(await seriousViolations()).toEqual([]);
  });

  it('filters the events list by a property and a value picked from their lists', async () => {
    await page.getByRole('link', { name: 'Events' }).click();
    await page.getByTestId('events-table').waitFor();
    const property = page.getByRole('combobox', { name: 'Property', exact: true });
    await property.pressSequentially('$brow');
    await optionsOf('properties').first().waitFor();
    await property.press('ArrowDown');
    await property.press('Enter');
    expect(await property.inputValue()).toBe('$browser');
    const value = page.getByRole('combobox', { name: 'equals' });
    await value.pressSequentially('fire');
    await waitFor(async () => expect(await optionNames('values')).toEqual(['Firefox']), { description: 'Firefox offered' });
    await value.press('ArrowDown');
    await value.press('Enter');
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitFor(
      async () =>
        expect(
          await page
            .getByTestId('events-table')
            .locator('tbody tr[data-event]')
            .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event'))),
        ).toEqual(['$pageview', '$pageview', '$pageview']),
      { description: "Firefox's three pageviews" },
    );
    expect(await seriousViolations()).toEqual([]);
  });

  it('picks the events of retention, stickiness, lifecycle and an action from the searchable event picker', async () => {
    for (const [path, label] of [
      ['/retention', 'Cohort: persons who did'],
      ['/stickiness', 'Persons who did'],
      ['/lifecycle', 'Persons who did'],
      ['/actions/new', 'Step 1 event'],
    ] as const) {
      await page.goto(`${target.base}${path}`);
      const picker = page.getByRole('combobox', { name: label });
      await picker.fill('sign');
      await waitFor(async () => expect(await optionNames('events')).toEqual(['signed_up']), { description: `${path}: signed_up offered` });
      expect(await optionsOf('events').first().textContent()).toMatch(/^signed_up\d+ events? · seen \d+ (min|h) ago$/);
      await picker.press('ArrowDown');
      await picker.press('Enter');
      expect(await picker.inputValue()).toBe('signed_up');
      expect(await page.locator('input[list]').count()).toBe(0);
    }
    // The stickiness bars are signed_up's: the three who signed up, each on one day.
    await page.goto(`${target.base}/stickiness`);
    const picker = page.getByRole('combobox', { name: 'Persons who did' });
    await picker.fill('signed_up');
    await picker.press('Enter');
    await waitFor(async () => expect(JSON.parse((await page.getByTestId('stickiness-bars').getAttribute('data-values'))!)[0]).toBe(3), {
      description: 'three persons on one day',
    });
  });

  it('shows a saved cohort’s filter in its editor, and adds values to its list from the picker', async () => {
    const created = await target.api('POST', '/api/projects/1/cohorts/', {
      name: 'Paying',
      filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }] }] } },
    });
    expect(created.status).toBe(201);
    await page.goto(`${target.base}/cohorts/${created.body.id}`);
    await page.getByRole('heading', { name: 'Paying' }).waitFor();
    const property = page.getByLabel('Group 1 filter 1 property');
    const value = page.getByLabel('Group 1 filter 1 value (comma-separated)');
    // The stored filter, not the empty one the form starts from before the cohort arrives.
    await waitFor(async () => expect([await property.inputValue(), await value.inputValue()]).toEqual(['plan', 'pro']), {
      description: 'the stored filter',
    });
    // A picked value is added after the last comma: the list's last item is what is searched.
    await value.focus();
    await value.press('End');
    await value.pressSequentially(', fr');
    await waitFor(async () => expect(await optionNames('values')).toEqual(['free']), { description: 'free offered' });
    await value.press('ArrowDown');
    await value.press('Enter');
    expect(await value.inputValue()).toBe('pro, free');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await waitFor(
      async () =>
        expect((await target.api('GET', `/api/projects/1/cohorts/${created.body.id}/`)).body.filters.properties.values[0].values[0]).toMatchObject({
          key: 'plan',
          value: ['pro', 'free'],
        }),
      { description: 'the saved values' },
    );
    expect(await seriousViolations()).toEqual([]);
  });

  it('opens the persons behind a conversion-over-time period, converted and dropped off, as the API’s actors query lists them', async () => {
    const funnel = { steps: ['$pageview', 'signed_up'], order: 'ordered', window_days: 14, date_from: '-7d', viz: 'trends', interval: 'day' };
    await page.goto(`${target.base}/funnels?q=${encodeURIComponent(JSON.stringify(funnel))}`);
    const today = page.getByTestId('funnel-trend-values').locator('tbody tr').last();
    await today.waitFor();
    const day = (await today.getAttribute('data-day'))!;
    expect(await today.getAttribute('data-rate')).toBe('60');
    const label = (await today.locator('th').textContent())!;
    // PostHog's FunnelsActorsQuery for one entrance period (funnelTrendsEntrancePeriodStart, funnelTrendsDropOff).
    const actorsOf = async (dropOff: boolean) => {
      const answer = await target.api('POST', '/api/environments/1/query/', {
        query: {
          kind: 'ActorsQuery',
          source: {
            kind: 'FunnelsActorsQuery',
            funnelTrendsDropOff: dropOff,
            funnelTrendsEntrancePeriodStart: `${day.slice(0, 10)} 00:00:00`,
            source: {
              kind: 'FunnelsQuery',
              series: [
                { kind: 'EventsNode', event: '$pageview' },
                { kind: 'EventsNode', event: 'signed_up' },
              ],
              interval: 'day',
              dateRange: { date_from: '-7d' },
              funnelsFilter: { funnelVizType: 'trends', funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
            },
          },
        },
      });
      expect(answer.status).toBe(200);
      return (answer.body.results as [{ id: string }][]).map((row) => row[0].id).sort();
    };
    const uuids = async (...names: string[]) => (await Promise.all(names.map(async (n) => (await target.person(n))!.uuid))).sort();
    const modalIds = async () => {
      const modal = page.getByTestId('actors-modal');
      await modal.getByTestId('actors-table').waitFor();
      return (await modal.locator('tr[data-actor-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-actor-id')))).sort();
    };

    await today.getByRole('button', { name: `Persons who entered ${label} and converted` }).click();
    const converted = await actorsOf(false);
    expect(converted).toEqual(await uuids('alice', 'bob', 'erin'));
    expect(await modalIds()).toEqual(converted);
    await page
      .getByTestId('actors-modal')
      .getByRole('heading', { name: `Entered ${label}: converted` })
      .waitFor();
    await screenshot('96-funnel-trend-persons');
    expect(await seriousViolations()).toEqual([]);
    // The CSV lists the same persons.
    const download = page.waitForEvent('download');
    await page.getByTestId('actors-modal').getByRole('button', { name: 'Download CSV' }).click();
    const csv = readFileSync((await (await download).path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(
      csv
        .slice(1)
        .map((line) => line.split(',')[0])
        .sort(),
    ).toEqual(converted);
    await page.getByTestId('actors-modal').getByRole('button', { name: 'Close' }).click();
    await page.getByTestId('actors-modal').waitFor({ state: 'detached' });

    await today.getByRole('button', { name: `Persons who entered ${label} and dropped off` }).click();
    const dropped = await actorsOf(true);
    expect(dropped).toEqual(await uuids('carol', 'dave'));
    expect(await modalIds()).toEqual(dropped);
    await page.getByTestId('actors-modal').getByRole('button', { name: 'Close' }).click();
  });

  it('lists the world map’s values largest first', async () => {
    await page.goto(trendUrl(target.base, { series: [{ event: 'visit', math: 'total' }], display: 'world_map' }));
    await page.getByTestId('world-map').locator('path[data-country="US"][data-value="2"]').waitFor();
    const rows = await page
      .getByTestId('trend-series')
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((r) => [r.getAttribute('data-breakdown'), Number(r.getAttribute('data-total'))] as [string, number]));
    const answer = await target.api('POST', '/api/environments/1/insights/trend/', {
      events: [{ id: 'visit', math: 'total' }],
      date_from: '-7d',
      display: 'WorldMap',
      breakdown: '$geoip_country_code',
    });
    expect(answer.status).toBe(200);
    const api = (answer.body.result as { breakdown_value: unknown; aggregated_value: number }[]).map((s) => [String(s.breakdown_value), s.aggregated_value]);
    // The API ranks the countries before the events without one (PostHog's null sentinel); the table ranks by value alone.
    expect(api).toEqual([
      ['US', 2],
      ['DE', 1],
      ['$$_posthog_breakdown_null_$$', 3],
    ]);
    expect(rows).toEqual([
      ['$$_posthog_breakdown_null_$$', 3],
      ['US', 2],
      ['DE', 1],
    ]);
    await screenshot('97-trends-world-map-ranked');
    expect(await seriousViolations()).toEqual([]);
  });

  it('opens the persons behind the "other" breakdown row, as the API’s trend actors query lists them', async () => {
    const q = { series: [{ event: 'tick', math: 'total' }], breakdown: 'n', display: 'table' };
    await page.goto(trendUrl(target.base, q));
    const other = page.getByTestId('trend-series').locator('tbody tr[data-breakdown="$$_posthog_breakdown_other_$$"]');
    await other.waitFor();
    expect(await other.getAttribute('data-total')).toBe('2');
    await other.getByRole('button', { name: /^Persons behind/ }).click();
    const modal = page.getByTestId('actors-modal');
    await modal.getByTestId('actors-table').waitFor();
    const shown = (await modal.locator('tr[data-actor-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-actor-id')))).sort();
    const answer = await target.api('POST', '/api/environments/1/query/', {
      query: {
        kind: 'ActorsQuery',
        select: ['person'],
        source: {
          kind: 'InsightActorsQuery',
          breakdown: '$$_posthog_breakdown_other_$$',
          source: {
            kind: 'TrendsQuery',
            series: [{ kind: 'EventsNode', event: 'tick', math: 'total' }],
            dateRange: { date_from: '-7d' },
            breakdownFilter: { breakdown: 'n', breakdown_type: 'event' },
            trendsFilter: { display: 'ActionsTable' },
          },
        },
      },
    });
    expect(answer.status).toBe(200);
    const api = (answer.body.results as [{ id: string }][]).map(([person]) => person.id).sort();
    expect(api).toEqual([(await target.person('carol'))!.uuid, (await target.person('dave'))!.uuid].sort());
    expect(shown).toEqual(api);
    await modal.getByRole('button', { name: 'Close' }).click();
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
