/**
 * Screenshots of every page of the web app at 1440 × 900 and 390 × 844, on demand:
 *
 *   npm run screenshots:web      (SCREENSHOTS_DIR, default test-output/web-app/pages; git-ignored)
 *
 * Starts the all-in-one service (embedded stores, a fresh data directory), sends two weeks of
 * generated events from 40 people (pageviews, sign-ups, purchases, a company group), makes a
 * flag, a cohort, an action, saved insights on a dashboard through the API, sets the first
 * password through the start banner's link (the set-up page is shot first), then visits every
 * page the nav lists and each kind of detail page, full-page, at both sizes, and last the sign-in
 * page once signed out. It prints one line per page: its heading, how
 * long until the heading and data were drawn, and whether it scrolls sideways at 390 px (it exits
 * non-zero if any does).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium, startEmbeddedSightline, stopStartedProcesses, waitFor } from '@sightline/testkit';

const ROOT = join(__dirname, '..');
const OUT = process.env['SCREENSHOTS_DIR'] ?? join(ROOT, 'test-output', 'web-app', 'pages');
const PROJECT_KEY = 'phc_screenshots_project_key';
const PERSONAL_KEY = 'phx_screenshots_personal_key';
const EMAIL = 'screenshots@example.com';
const PASSWORD = 'screenshots password';
const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const DAY = 86_400_000;

// What the page's own script sees, for page.evaluate (this file is compiled without the DOM types).
declare const document: { documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number };

/** Two weeks of events from 40 people: pageviews, sign-ups and purchases, some in a company group. */
function generatedEvents(now: number): Record<string, unknown>[] {
  const browsers = ['Chrome', 'Firefox', 'Safari'];
  const countries = ['FR', 'US', 'DE', 'BR', 'JP'];
  const events: Record<string, unknown>[] = [];
  for (let p = 0; p < 40; p++) {
    const id = `user-${p}`;
    const start = now - (13 - (p % 14)) * DAY - (p % 7) * 3_600_000;
    events.push({
      event: '$identify',
      distinct_id: id,
      timestamp: new Date(start).toISOString(),
      properties: { $set: { email: `${id}@example.com`, plan: p % 3 === 0 ? 'pro' : 'free' } },
    });
    for (let v = 0; v < 1 + (p % 5); v++) {
      events.push({
        event: '$pageview',
        distinct_id: id,
        timestamp: new Date(start + v * 3_600_000).toISOString(),
        properties: {
          $current_url: `https://shop.example/${v % 2 ? 'pricing' : 'home'}`,
          $browser: browsers[p % 3],
          $geoip_country_code: countries[p % 5],
          $groups: { company: `company-${p % 4}` },
        },
      });
    }
    if (p % 2 === 0) events.push({ event: 'signed_up', distinct_id: id, timestamp: new Date(start + 5 * 3_600_000).toISOString(), properties: {} });
    if (p % 4 === 0)
      events.push({ event: 'purchase', distinct_id: id, timestamp: new Date(start + 6 * 3_600_000).toISOString(), properties: { amount: 10 + p } });
  }
  for (let c = 0; c < 4; c++)
    events.push({
      event: '$groupidentify',
      distinct_id: `user-${c}`,
      timestamp: new Date(now - DAY).toISOString(),
      properties: { $group_type: 'company', $group_key: `company-${c}`, $group_set: { name: `Company ${c}` } },
    });
  return events;
}

async function main(): Promise<void> {
  // The directory is this script's own: a run replaces the previous run's pictures.
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'sightline-screenshots-'));
  const service = await startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY });
  const base = service.base;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    // The API's answers, read by field below (each a PostHog-shaped object).
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return (text ? JSON.parse(text) : null) as any;
  };
  const browser = await launchChromium();
  let overflowing = 0;
  try {
    const now = Date.now();
    const events = generatedEvents(now);
    const sent = await fetch(`${base}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: PROJECT_KEY, batch: events }),
    });
    if (sent.status !== 200) throw new Error(`batch: ${sent.status}`);
    await waitFor(async () => (await api('GET', '/api/projects/1/event_definitions/?search=purchase')).results.length === 1, {
      timeoutMs: 60_000,
      description: 'the events written',
    });

    const flag = await api('POST', '/api/projects/1/feature_flags/', {
      key: 'new-checkout',
      name: 'New checkout',
      filters: {
        groups: [{ properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }], rollout_percentage: 50 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
      },
    });
    await api('PATCH', `/api/projects/1/feature_flags/${flag.id}/`, {
      filters: { ...flag.filters, groups: [{ ...flag.filters.groups[0], rollout_percentage: 100 }] },
    });
    const cohort = await api('POST', '/api/projects/1/cohorts/', {
      name: 'Pro plan',
      filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro'] }] }] } },
    });
    const action = await api('POST', '/api/projects/1/actions/', {
      name: 'Saw pricing',
      steps: [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }],
    });
    const dashboard = await api('POST', '/api/environments/1/dashboards/', { name: 'Growth' });
    const trend = await api('POST', '/api/environments/1/insights/', {
      name: 'Pageviews by browser',
      saved: true,
      dashboards: [dashboard.id],
      filters: { insight: 'TRENDS', events: [{ id: '$pageview', type: 'events', math: 'total' }], breakdown: '$browser', interval: 'day', date_from: '-14d' },
    });
    await api('POST', '/api/environments/1/insights/', {
      name: 'Sign-up to purchase',
      saved: true,
      dashboards: [dashboard.id],
      filters: {
        insight: 'FUNNELS',
        events: [
          { id: '$pageview', order: 0 },
          { id: 'signed_up', order: 1 },
          { id: 'purchase', order: 2 },
        ],
        date_from: '-14d',
      },
    });
    const person = (await api('GET', '/api/environments/1/persons/?search=user-0%40example.com')).results[0];
    const definition = (await api('GET', '/api/projects/1/event_definitions/?search=%24pageview')).results[0];
    const property = (await api('GET', '/api/projects/1/property_definitions/?search=%24browser')).results[0];

    const link = /(http:\/\/localhost:\d+\/setup\?token=[A-Za-z0-9_-]+)/.exec(service.app.output())?.[1]?.replace('http://localhost:', 'http://127.0.0.1:');
    if (!link) throw new Error('the start banner printed no set-up link');
    const page = await browser.context.newPage();
    await page.setViewportSize(VIEWPORTS[0]);
    /** The signed-out pages (set-up, sign-in): as they are, at both sizes. */
    const shootAsIs = async (name: string, path: string) => {
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        await page.locator('main h1, h1').first().waitFor();
        await page.screenshot({ path: join(OUT, `${name}-${viewport.name}.png`), fullPage: true });
      }
      const heading = ((await page.locator('main h1, h1').first().textContent()) ?? '').trim();
      console.log(`${path.padEnd(44)} ${heading.slice(0, 28).padEnd(28)}`);
      await page.setViewportSize(VIEWPORTS[0]);
    };
    await page.goto(link);
    await shootAsIs('00-setup', '/setup?token=…');
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password (at least 8 characters)').fill(PASSWORD);
    await page.getByRole('button', { name: 'Save and sign in' }).click();
    await page.locator('nav[aria-label="Main"] a').first().waitFor();

    // Every page the nav lists (including pages added later), then each kind of detail page.
    const navPaths = await page.locator('nav[aria-label="Main"] a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    const pages = [
      ...navPaths,
      `/persons/${person.uuid}`,
      '/groups/0/company-1',
      `/dashboards/${dashboard.id}`,
      `/insights/${trend.id}`,
      `/feature_flags/${flag.id}`,
      '/feature_flags/new',
      `/cohorts/${cohort.id}`,
      '/cohorts/new',
      `/actions/${action.id}`,
      '/actions/new',
      `/definitions/events/${definition.id}`,
      `/definitions/properties/${property.id}`,
      '/definitions?tab=person-properties',
      '/no-such-page',
    ];
    console.log(`${'page'.padEnd(44)} ${'heading'.padEnd(28)} ${'desktop ms'.padStart(10)} ${'phone ms'.padStart(9)}  sideways at 390`);
    for (const [index, path] of pages.entries()) {
      const name = `${String(index + 1).padStart(2, '0')}-${
        path
          .replace(/^\//, '')
          .replace(/[^a-zA-Z0-9]+/g, '-')
          .replace(/-+$/, '') || 'home'
      }`;
      const times: number[] = [];
      let heading = '';
      let overflow = 0;
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        const started = Date.now();
        await page.goto(`${base}${path}`);
        await page.locator('main h1').first().waitFor();
        // Drawn: no loading line or skeleton left in the page.
        await waitFor(async () => (await page.locator('main [role="status"]:has-text("Loading"), main .skeleton').count()) === 0, {
          timeoutMs: 30_000,
          description: `${path} drawn`,
        });
        times.push(Date.now() - started);
        heading = ((await page.locator('main h1').first().textContent()) ?? '').trim();
        if (viewport.name === 'phone') overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        await page.screenshot({ path: join(OUT, `${name}-${viewport.name}.png`), fullPage: true });
      }
      if (overflow > 0) overflowing++;
      console.log(
        `${path.slice(0, 44).padEnd(44)} ${heading.slice(0, 28).padEnd(28)} ${String(times[0]).padStart(10)} ${String(times[1]).padStart(9)}  ${overflow > 0 ? `YES, ${overflow} px` : 'no'}`,
      );
    }
    await browser.context.clearCookies();
    await page.goto(`${base}/login`);
    await shootAsIs('99-login', '/login (signed out)');
    console.log(`\n${pages.length + 2} pages × ${VIEWPORTS.length} sizes written to ${OUT}`);
  } finally {
    await browser.close();
    await stopStartedProcesses();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (overflowing > 0) {
    console.error(`${overflowing} page(s) scroll sideways at 390 px`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
