// posthog-js, unmodified, in headless Chromium against the running service (`npm start`'s
// all-in-one app): once as the npm package's module build imported by the page, once through
// PostHog's HTML snippet loading /static/array.js from the service. The page is served from
// another origin, so every request is cross-origin (CORS, preflights). Every request the SDK
// makes is recorded with its answer; then what was stored is read back: each event once by
// uuid, autocapture's elements_chain, the identified person with its properties and merged ids.
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import {
  eventsOf,
  formatRequests,
  launchChromium,
  startPageServer,
  startRecordingProxy,
  startSdkTarget,
  waitFor,
  type Chromium,
  type PageServer,
  type RecordingProxy,
  type SdkRequest,
  type SdkTarget,
  type StoredEvent,
} from '@sightline/testkit';

const SDK_VERSION = (JSON.parse(readFileSync(require.resolve('posthog-js/package.json'), 'utf8')) as { version: string }).version;
const SDK_DIR = `${require.resolve('posthog-js/package.json').replace(/package\.json$/, '')}dist`;

/** PostHog's web snippet as the project settings page gives it (a stub that loads /static/array.js). */
const SNIPPET = `!function(t,e){var o,n,p,r;e.__SV||(window.posthog&&window.posthog.__loaded)||(window.posthog=e,e._i=[],e.init=function(i,s,a){function g(t,e){var o=e.split(".");2==o.length&&(t=t[o[0]],e=o[1]),t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}}(p=t.createElement("script")).type="text/javascript",p.crossOrigin="anonymous",p.async=!0,p.src=s.api_host.replace(".i.posthog.com","-assets.i.posthog.com")+"/static/array.js",(r=t.getElementsByTagName("script")[0]).parentNode.insertBefore(p,r);var u=e;for(void 0!==a?u=e[a]=[]:a="posthog",u.people=u.people||[],u.toString=function(t){var e="posthog";return"posthog"!==a&&(e+="."+a),t||(e+=" (stub)"),e},u.people.toString=function(){return u.toString(1)+".people (stub)"},o="init capture register register_once register_for_session unregister unregister_for_session getFeatureFlag getFeatureFlagPayload isFeatureEnabled reloadFeatureFlags updateEarlyAccessFeatureEnrollment getEarlyAccessFeatures on onFeatureFlags onSurveysLoaded onSessionId getSurveys getActiveMatchingSurveys renderSurvey canRenderSurvey canRenderSurveyAsync identify setPersonProperties group resetGroups setPersonPropertiesForFlags resetPersonPropertiesForFlags setGroupPropertiesForFlags resetGroupPropertiesForFlags reset get_distinct_id getGroups get_session_id get_session_replay_url alias set_config startSessionRecording stopSessionRecording sessionRecordingStarted captureException loadToolbar get_property getSessionProperty createPersonProfile opt_in_capturing opt_out_capturing has_opted_in_capturing has_opted_out_capturing clear_opt_in_out_capturing debug getPageViewId captureTraceFeedback captureTraceMetric".split(" "),n=0;n<o.length;n++)g(u,o[n]);e._i.push([i,s,a])},e.__SV=1)}(document,window.posthog||[]);`;

const BODY = `<h1>Shop</h1>
<div class="product"><button id="buy" class="btn primary" data-attr="buy-button">Buy now</button></div>
<a id="away" href="/away.html">Leave</a>`;

interface Mode {
  name: string;
  /** The page's HTML for a service at `base` and project key `token`. */
  html(base: string, token: string): string;
  /** Only in this mode the SDK is told to send uncompressed JSON (so its POSTs are preflighted). */
  uncompressed: boolean;
}

const MODES: Mode[] = [
  {
    name: 'npm bundle',
    uncompressed: false,
    html: (base, token) => `<!doctype html><html><head><title>Shop (bundle)</title></head><body>${BODY}
<script type="module">
  import posthog from '/posthog-js/module.js';
  window.posthog = posthog;
  posthog.init(${JSON.stringify(token)}, { api_host: ${JSON.stringify(base)} });
</script></body></html>`,
  },
  {
    name: 'snippet',
    uncompressed: true,
    html: (base, token) => `<!doctype html><html><head><title>Shop (snippet)</title>
<script>
  ${SNIPPET}
  posthog.init(${JSON.stringify(token)}, { api_host: ${JSON.stringify(base)}, person_profiles: 'identified_only', disable_compression: true });
</script></head><body>${BODY}</body></html>`,
  },
];

const FLAGS = [
  { key: 'everyone', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"color":"blue"}' } } },
  { key: 'no-payload', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
  {
    key: 'pro-only',
    filters: {
      groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }],
      payloads: { true: '"welcome, pro"' },
    },
  },
];

declare const window: any;

describe.each(MODES)('posthog-js $name in Chromium', (mode) => {
  let target: SdkTarget;
  let proxy: RecordingProxy;
  let site: PageServer;
  let browser: Chromium;
  let context: BrowserContext;
  let page: Page;
  let requests: SdkRequest[] = [];
  const tag = mode.name.replace(/\W+/g, '_');
  const user = `js-user-${tag}`;
  const aliasId = `js-alias-${tag}`;
  let anonymousId: string;
  let stored: StoredEvent[];
  let sentEvents: Array<Record<string, any>>;

  beforeAll(async () => {
    target = await startSdkTarget(`sdk_js_${tag}`);
    for (const flag of FLAGS) {
      const created = await target.api('POST', '/api/projects/1/feature_flags/', { ...flag, active: true });
      expect(created.status).toBe(201);
    }
    // The SDK's host: a relay that writes down every request (preflights and beacons included).
    proxy = await startRecordingProxy(target.base);
    requests = proxy.requests;
    site = await startPageServer({
      '/shop.html': { contentType: 'text/html', body: mode.html(proxy.base, target.projectKey) },
      '/away.html': { contentType: 'text/html', body: '<!doctype html><title>away</title><p>gone</p>' },
      '/posthog-js/module.js': { contentType: 'text/javascript', body: readFileSync(`${SDK_DIR}/module.js`) },
    });
    browser = await launchChromium();
    context = browser.context;
    page = context.pages()[0] ?? (await context.newPage());
  }, 120_000);

  afterAll(async () => {
    // The list the report quotes: every request this SDK made and the service's answer.
    process.stdout.write(`\n[posthog-js ${mode.name}] requests:\n${formatRequests(requests)}\n`);
    await browser?.close();
    await site?.close();
    await proxy?.close();
    await target?.close();
  });

  it('loads, takes the remote config and the flags, and captures, identifies, groups, aliases and resets', async () => {
    await page.goto(`${site.origin}/shop.html`);
    await page.waitForFunction(() => window.posthog && window.posthog.__loaded === true, null, { timeout: 20_000 });
    // Flags arrive after the remote config: wait until the SDK has them.
    await page.waitForFunction(() => window.posthog.featureFlags.hasLoadedFlags === true, null, { timeout: 20_000 });
    anonymousId = await page.evaluate(() => window.posthog.get_distinct_id());

    const anonymous = await page.evaluate(() => ({
      everyone: window.posthog.getFeatureFlag('everyone'),
      everyoneAgain: window.posthog.getFeatureFlag('everyone'),
      everyonePayload: window.posthog.getFeatureFlagPayload('everyone'),
      noPayload: window.posthog.getFeatureFlag('no-payload'),
      noPayloadPayload: window.posthog.getFeatureFlagPayload('no-payload'),
      pro: window.posthog.isFeatureEnabled('pro-only'),
      config: window._POSTHOG_REMOTE_CONFIG,
    }));
    expect(anonymous).toMatchObject({ everyone: true, everyoneAgain: true, everyonePayload: { color: 'blue' }, noPayload: true, pro: false });
    expect(anonymous.noPayloadPayload).toBeUndefined();
    expect(anonymous.config[target.projectKey].config).toMatchObject({ autocapture_opt_out: false, sessionRecording: false, surveys: false });

    await page.evaluate(() => window.posthog.capture('viewed product', { sku: 'A1', price: 12.5 }));
    await page.click('#buy');

    await page.evaluate((id) => window.posthog.identify(id, { email: `${id}@example.com`, plan: 'pro' }, { first_source: 'e2e' }), user);
    // identify reloads the flags with $anon_distinct_id; the person property now matches.
    await page.waitForFunction(() => window.posthog.isFeatureEnabled('pro-only', { send_event: false }) === true, null, { timeout: 20_000 });
    const identified = await page.evaluate(() => ({
      pro: window.posthog.getFeatureFlag('pro-only'),
      payload: window.posthog.getFeatureFlagPayload('pro-only'),
    }));
    expect(identified).toEqual({ pro: true, payload: 'welcome, pro' });

    await page.evaluate(() => window.posthog.group('company', 'acme', { name: 'Acme Inc' }));
    await page.evaluate(() => window.posthog.setPersonProperties({ favourite: 'green' }, { first_seen_plan: 'pro' }));
    await page.evaluate((alias) => window.posthog.alias(alias), aliasId);
    await page.evaluate(() => window.posthog.capture('before reset'));
    await page.evaluate(() => window.posthog.reset());
    await page.evaluate(() => window.posthog.capture('after reset'));
    // Leaving the page: $pageleave and whatever is queued go out by sendBeacon on pagehide.
    await page.goto(`${site.origin}/away.html`);

    sentEvents = [];
    await waitFor(
      () => {
        sentEvents = requests.filter((r) => r.method === 'POST' && /^\/(e|i\/v0\/e)\//.test(r.path)).flatMap((r) => eventsOf(r.body));
        return sentEvents.some((e) => e['event'] === '$pageleave') && sentEvents.some((e) => e['event'] === 'after reset');
      },
      { timeoutMs: 20_000, description: 'the $pageleave beacon' },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; events sent: ${sentEvents.map((e) => e['event']).join(', ')}`);
    });
    const uuids = new Set(sentEvents.map((e) => e['uuid'] as string));
    stored = await target.eventsOnceStored(uuids);
    process.stdout.write(`\n[posthog-js ${mode.name}] stored events: ${stored.map((e) => `${e.event}(${e.distinct_id})`).join(', ')}\n`);
  });

  it('made every request it needed and each got the answer the SDK counts as success', async () => {
    expect(requests.length).toBeGreaterThan(0);
    await waitFor(() => requests.every((r) => r.status !== 'no response'), { timeoutMs: 10_000, description: 'every answer relayed' });
    const paths = requests.map((r) => `${r.method} ${r.path.split('?')[0]}`);
    if (mode.name === 'snippet') expect(paths).toContain('GET /static/array.js');
    expect(paths).toContain(`GET /array/${target.projectKey}/config.js`);
    expect(paths).toContain('POST /flags/');
    // Nothing answered with an error; a beacon's answer is not readable by the page.
    // posthog-js counts only 200 as success (anything else is retried, creating duplicates).
    expect(requests.filter((r) => r.status !== 200).map((r) => `${r.method} ${r.path} -> ${r.status}`)).toEqual([]);
    // Uncompressed JSON is not a CORS-simple body: each such POST follows its preflight.
    for (const [i, r] of requests.entries()) {
      if (r.method === 'POST' && r.contentType.startsWith('application/json')) {
        const preflight = requests.slice(0, i).find((p) => p.method === 'OPTIONS' && p.path === r.path);
        expect({ post: r.path, preflight: preflight?.status }).toEqual({ post: r.path, preflight: 200 });
      }
    }
    if (mode.uncompressed) expect(requests.some((r) => r.method === 'POST' && r.contentType.startsWith('application/json'))).toBe(true);
    const flagRequests = requests.filter((r) => r.method === 'POST' && r.path.startsWith('/flags/')).map((r) => r.body as Record<string, any>);
    expect(flagRequests.some((b) => b['distinct_id'] === user && b['$anon_distinct_id'] === anonymousId)).toBe(true);
  });

  it('stored every event exactly once, with autocapture elements and the right persons', async () => {
    const byUuid = new Map(stored.map((e) => [e.uuid, e]));
    for (const sent of sentEvents) {
      const row = byUuid.get(sent['uuid']);
      expect({ uuid: sent['uuid'], event: row?.event, copies: row?.copies }).toEqual({ uuid: sent['uuid'], event: sent['event'], copies: 1 });
    }
    const names = stored.map((e) => e.event);
    for (const name of [
      '$pageview',
      'viewed product',
      '$autocapture',
      '$identify',
      '$groupidentify',
      '$set',
      '$create_alias',
      'before reset',
      'after reset',
      '$pageleave',
      '$feature_flag_called',
    ]) {
      expect(names).toContain(name);
    }
    const click = stored.find((e) => e.event === '$autocapture')!;
    expect(click.elements_chain).toMatch(/^button\.btn\.primary:/);
    expect(click.elements_chain).toContain('attr__id="buy"');
    expect(click.elements_chain).toContain('text="Buy now"');
    expect(click.elements_chain).toContain('attr__data-attr="buy-button"');
    // Actions match the click as PostHog matches them: by selector, element text and tag.
    for (const step of [
      { event: '$autocapture', selector: 'div.product > button.primary' },
      { event: '$autocapture', selector: '#buy', text: 'Buy now', text_matching: 'exact' },
      { event: '$autocapture', tag_name: 'button' },
    ]) {
      const action = await target.api('POST', '/api/projects/1/actions/', { name: JSON.stringify(step), steps: [step] });
      expect(action.status).toBe(201);
      const trend = await target.api('POST', '/api/projects/1/insights/trend/', { actions: [{ id: action.body.id, type: 'actions' }], refresh: true });
      expect({ step, status: trend.status, count: trend.body.result?.[0]?.count }).toEqual({ step, status: 200, count: 1 });
    }

    // $feature_flag_called: once per flag and value for this visitor (the SDK remembers what it reported).
    const called = stored
      .filter((e) => e.event === '$feature_flag_called')
      .map((e) => `${e.distinct_id}:${e.properties['$feature_flag']}=${String(e.properties['$feature_flag_response'])}`);
    expect(new Set(called).size).toBe(called.length);
    expect(called).toEqual(
      expect.arrayContaining([`${anonymousId}:everyone=true`, `${anonymousId}:no-payload=true`, `${anonymousId}:pro-only=false`, `${user}:pro-only=true`]),
    );

    const person = await target.person(user);
    expect(person).not.toBeNull();
    expect(person!.is_identified).toBe(true);
    expect([...person!.distinct_ids].sort()).toEqual([aliasId, anonymousId, user].sort());
    expect(person!.properties).toMatchObject({ email: `${user}@example.com`, plan: 'pro', favourite: 'green', first_source: 'e2e', first_seen_plan: 'pro' });
    // Events after identify belong to that person; the one after reset to nobody known.
    const personOf = (event: string) => stored.find((e) => e.event === event)!.person_id;
    expect(personOf('before reset')).toBe(person!.uuid);
    // reset() starts a new anonymous visitor: neither the identified id nor the first anonymous one.
    const afterReset = stored.find((e) => e.event === 'after reset')!;
    expect([user, aliasId, anonymousId]).not.toContain(afterReset.distinct_id);
    expect(afterReset.properties['$process_person_profile']).toBe(false);
    expect(stored.find((e) => e.event === 'before reset')!.properties['$groups']).toEqual({ company: 'acme' });
    const groups = await target.stores.db.query<{ group_key: string; group_properties: Record<string, unknown> }>(
      'SELECT group_key, group_properties FROM groups WHERE team_id = 1',
    );
    expect(groups).toEqual([{ group_key: 'acme', group_properties: { name: 'Acme Inc' } }]);
  });
});

describe('posthog-js follows the project settings through the remote config', () => {
  let target: SdkTarget;
  let proxy: RecordingProxy;
  let site: PageServer;
  let browser: Chromium;

  beforeAll(async () => {
    target = await startSdkTarget('sdk_js_settings');
    proxy = await startRecordingProxy(target.base);
    site = await startPageServer({
      '/shop.html': { contentType: 'text/html', body: MODES[0]!.html(proxy.base, target.projectKey) },
      '/away.html': { contentType: 'text/html', body: '<!doctype html><title>away</title>' },
      '/posthog-js/module.js': { contentType: 'text/javascript', body: readFileSync(`${SDK_DIR}/module.js`) },
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    process.stdout.write(`\n[posthog-js, project settings] requests:\n${formatRequests(proxy?.requests ?? [])}\n`);
    await browser?.close();
    await site?.close();
    await proxy?.close();
    await target?.close();
  });

  it('sends no $autocapture once PATCH /api/projects/:id/ turned it off, loads the extensions turned on, and asks for no flags while the project has none', async () => {
    const settings = { autocapture_opt_out: true, capture_dead_clicks: true, autocapture_web_vitals_opt_in: true, autocapture_exceptions_opt_in: true };
    expect((await target.api('PATCH', '/api/projects/1/', settings)).status).toBe(200);
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await page.goto(`${site.origin}/shop.html`);
    await page.waitForFunction(() => window.posthog && window.posthog.__loaded === true, null, { timeout: 20_000 });
    await page.waitForFunction(() => window._POSTHOG_REMOTE_CONFIG !== undefined, null, { timeout: 20_000 });
    await page.click('#buy');
    await page.evaluate(() => window.posthog.capture('clicked without autocapture'));
    await page.goto(`${site.origin}/away.html`);
    let sent: string[] = [];
    await waitFor(
      () => {
        sent = proxy.requests.filter((r) => r.method === 'POST').flatMap((r) => eventsOf(r.body).map((e) => String(e['event'])));
        return sent.includes('$pageleave');
      },
      { timeoutMs: 20_000, description: 'the $pageleave beacon' },
    );
    expect(sent).toEqual(expect.arrayContaining(['$pageview', 'clicked without autocapture', '$pageleave']));
    expect(sent).not.toContain('$autocapture');
    const uuids = proxy.requests.filter((r) => r.method === 'POST').flatMap((r) => eventsOf(r.body).map((e) => String(e['uuid'])));
    const stored = await target.eventsOnceStored(uuids);
    expect(stored.map((e) => e.event)).not.toContain('$autocapture');
    // A request the SDK sent last (a $web_vitals batch, say) may still be waiting for its answer.
    await waitFor(() => proxy.requests.every((r) => r.status !== 'no response'), { timeoutMs: 10_000, description: 'every answer relayed' });
    expect(proxy.requests.filter((r) => r.status !== 200).map((r) => `${r.method} ${r.path} -> ${r.status}`)).toEqual([]);
    // The extensions the settings turned on were loaded from this instance's /static/.
    const scripts = proxy.requests.filter((r) => r.path.startsWith('/static/')).map((r) => r.path.split('?')[0]);
    expect(scripts).toEqual(
      expect.arrayContaining([
        `/static/${SDK_VERSION}/dead-clicks-autocapture.js`,
        `/static/${SDK_VERSION}/exception-autocapture.js`,
        `/static/${SDK_VERSION}/web-vitals-with-attribution.js`,
      ]),
    );
    // hasFeatureFlags: false in the config, so the SDK skipped /flags.
    expect(proxy.requests.filter((r) => r.path.startsWith('/flags'))).toEqual([]);
  });
});
