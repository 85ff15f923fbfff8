/**
 * Actions as ClickHouse runs them (chdb, the server's engine): each compiled action passes
 * EXPLAIN and selects exactly the events worked out by hand from PostHog's semantics.
 */
import { createAnalyticsStore, EVENTS_TABLE, insertEvents, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { eventsTablePropertiesColumn, QueryParams } from '@sightline/properties';
import { createTestClickHouseDatabase, testEventRow, type TestClickHouseDatabase } from '@sightline/testkit';
import { compileActionMatch } from './action-match.sql';
import { parseActionSteps } from './action-steps';

const NOW = Date.parse('2024-01-10T15:00:00Z');

/** Autocapture chains as PostHog's ingestion writes them, the clicked element first. */
const BUY_BUTTON =
  'button.btn.primary:attr__class="btn primary"attr__id="buy"attr_id="buy"nth-child="1"nth-of-type="1"text="Buy now";form.checkout:attr__class="checkout"nth-child="2"nth-of-type="1";body:nth-child="2"nth-of-type="1"';
const PRICING_LINK =
  'a.nav-link:attr__class="nav-link"attr__href="/pricing"href="/pricing"nth-child="3"nth-of-type="2"text="Pricing";nav:attr__id="top"attr_id="top"nth-child="1"nth-of-type="1"';
const ORDER_SPAN =
  'span:nth-child="1"nth-of-type="1"text="Order";button.btn:attr__class="btn"attr__data-attr="order"nth-child="1"nth-of-type="1";div.card:attr__class="card"nth-child="4"nth-of-type="4"';

/** The events, by distinct id. */
const EVENTS: { id: string; event: string; url?: string; chain?: string; properties?: Record<string, unknown>; person?: Record<string, unknown> }[] = [
  { id: 'e1', event: '$autocapture', url: 'https://shop.test/checkout', chain: BUY_BUTTON, properties: { plan: 'pro' } },
  { id: 'e2', event: '$autocapture', url: 'https://shop.test/checkout?step=2', chain: BUY_BUTTON, properties: { plan: 'free' } },
  { id: 'e3', event: '$autocapture', url: 'https://shop.test/', chain: PRICING_LINK },
  { id: 'e4', event: '$autocapture', url: 'https://shop.test/Checkout_old', chain: ORDER_SPAN },
  { id: 'e5', event: '$pageview', url: 'https://shop.test/checkout' },
  { id: 'e6', event: '$pageview', url: 'https://shop.test/pricing' },
  { id: 'e7', event: 'purchase', properties: { plan: 'pro' }, person: { email: 'ann@x.io' } },
  // A custom event that carries a chain: element conditions apply to $autocapture steps only.
  { id: 'e8', event: 'click', chain: PRICING_LINK },
  { id: 'e9', event: '$pageview' },
];

describe('actions compiled for ClickHouse', () => {
  let chDb: TestClickHouseDatabase;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    chDb = await createTestClickHouseDatabase('actions');
    ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(ch);
    await insertEvents(
      ch,
      EVENTS.map((e) => ({
        ...testEventRow({
          event: e.event,
          atMs: NOW,
          distinctId: e.id,
          properties: { ...(e.url ? { $current_url: e.url } : {}), ...e.properties },
          personProperties: e.person ?? {},
        }),
        elements_chain: e.chain ?? '',
      })),
    );
  });
  afterAll(async () => {
    await ch.close();
    await chDb.drop();
  });

  /** The events an action with these steps (as the API would save them) matches. */
  async function matching(steps: unknown[]): Promise<string[]> {
    const params = new QueryParams();
    // The context names no chain column: the action reads `elements_chain`, its element filters too.
    const where = compileActionMatch(
      { id: 1, name: 'a', steps: parseActionSteps(steps, 'steps') },
      { params, nowMs: NOW, propertiesColumn: eventsTablePropertiesColumn },
    );
    const query = `SELECT distinct_id FROM ${EVENTS_TABLE} WHERE team_id = 1 AND ${where} ORDER BY distinct_id`;
    await (await ch.query({ query: `EXPLAIN SYNTAX ${query}`, query_params: params.values, format: 'TabSeparated' })).text();
    return (await (await ch.query({ query, query_params: params.values, format: 'JSONEachRow' })).json<{ distinct_id: string }>()).map((r) => r.distinct_id);
  }

  it.each<[string, unknown[], string[]]>([
    ['an event name', [{ event: 'purchase' }], ['e7']],
    ['a URL containing a text (the default matching)', [{ event: '$pageview', url: '/checkout' }], ['e5']],
    ['a URL contains, case-sensitive, on any event', [{ url: 'checkout' }], ['e1', 'e2', 'e5']],
    ['a URL contains with % and _ taken literally', [{ url: 'Checkout%old' }], []],
    ['an exact URL', [{ event: '$pageview', url: 'https://shop.test/pricing', url_matching: 'exact' }], ['e6']],
    ['a URL regex', [{ event: '$autocapture', url: 'checkout\\?step=\\d', url_matching: 'regex' }], ['e2']],
    ['a selector with a descendant', [{ event: '$autocapture', selector: 'form button' }], ['e1', 'e2']],
    ['a selector on an ancestor of the clicked element', [{ event: '$autocapture', selector: 'div.card > button' }], ['e4']],
    ['an id selector', [{ event: '$autocapture', selector: '#buy' }], ['e1', 'e2']],
    ['a tag name anywhere in the chain', [{ event: '$autocapture', tag_name: 'button' }], ['e1', 'e2', 'e4']],
    ['an exact text', [{ event: '$autocapture', text: 'Buy now' }], ['e1', 'e2']],
    ['a text contains, case-insensitive', [{ event: '$autocapture', text: 'buy NOW', text_matching: 'contains' }], ['e1', 'e2']],
    ['a text regex', [{ event: '$autocapture', text: '^Or', text_matching: 'regex' }], ['e4']],
    ['an exact href', [{ event: '$autocapture', href: '/pricing' }], ['e3']],
    ['an href regex', [{ event: '$autocapture', href: '^/pri', href_matching: 'regex' }], ['e3']],
    ['element conditions ignored on other events', [{ event: 'click', selector: 'form button', text: 'nothing' }], ['e8']],
    ['a selector and an event property', [{ event: '$autocapture', selector: 'button', properties: [{ key: 'plan', value: 'pro' }] }], ['e1']],
    ['a person property', [{ event: 'purchase', properties: [{ key: 'email', value: '@X.IO', operator: 'icontains', type: 'person' }] }], ['e7']],
    ['an element filter among the properties', [{ event: '$autocapture', properties: [{ key: 'text', value: 'Order', type: 'element' }] }], ['e4']],
    ['steps ORed', [{ event: 'purchase' }, { event: '$pageview', url: 'pricing' }], ['e6', 'e7']],
    ['a step without conditions: every event', [{}], ['e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9']],
    ['no steps: no event', [], []],
  ])('%s', async (_name, steps, expected) => {
    expect(await matching(steps)).toEqual(expected);
  });
});
