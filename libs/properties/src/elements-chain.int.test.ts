/**
 * Element filters as ClickHouse itself runs them (chdb, the server's engine): each compiled
 * condition passes EXPLAIN and selects exactly the chains worked out by hand below from
 * PostHog's semantics (a selector is a regular expression over the chain plus id and
 * interactive-tag checks; texts are every element's, the href the chain's first).
 */
import { createAnalyticsStore, EVENTS_TABLE, insertEvents, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestClickHouseDatabase, testEventRow, type TestClickHouseDatabase } from '@sightline/testkit';
import { compilePropertyGroup, eventsTablePropertiesColumn } from './compile';
import { QueryParams } from './query-params';
import { parsePropertyFilters } from './parse';

const NOW = Date.parse('2024-01-10T15:00:00Z');

/** Chains as PostHog's ingestion writes them, the clicked element first. */
const CHAINS: Record<string, string> = {
  // A "Buy now" button in a checkout form.
  A: 'button.btn.primary:attr__class="btn primary"attr__id="buy"attr_id="buy"nth-child="1"nth-of-type="1"text="Buy now";form.checkout:attr__class="checkout"nth-child="2"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  // A pricing link in the top nav.
  B: 'a.nav-link:attr__class="nav-link"attr__href="/pricing"href="/pricing"nth-child="3"nth-of-type="2"text="Pricing";nav:attr__id="top"attr_id="top"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
  // A span inside an "order" button inside a card.
  C: 'span:nth-child="1"nth-of-type="1"text="Order";button.btn:attr__class="btn"attr__data-attr="order"nth-child="1"nth-of-type="1";div.card:attr__class="card"nth-child="4"nth-of-type="4"',
  // An <abbr>: starts with "a" but is no link.
  D: 'abbr:nth-child="1"nth-of-type="1"text="HTML";p:nth-child="1"nth-of-type="1"',
  // A text input in a label.
  E: 'input.field:attr__class="field"attr__type="text"nth-child="1"nth-of-type="1";label:nth-child="1"nth-of-type="1"text="Email"',
  // No autocapture.
  F: '',
};

describe('element filters compiled for ClickHouse', () => {
  let chDb: TestClickHouseDatabase;
  let ch: ClickHouseClient;

  beforeAll(async () => {
    chDb = await createTestClickHouseDatabase('elements_chain');
    ch = createAnalyticsStore({ url: chDb.url, user: 'default', password: '', database: chDb.database });
    await migrateClickHouse(ch);
    await insertEvents(
      ch,
      Object.entries(CHAINS).map(([name, chain]) => ({ ...testEventRow({ event: '$autocapture', atMs: NOW, distinctId: name }), elements_chain: chain })),
    );
  });
  afterAll(async () => {
    await ch.close();
    await chDb.drop();
  });

  async function matching(properties: unknown): Promise<string[]> {
    const params = new QueryParams();
    const where = compilePropertyGroup(parsePropertyFilters(properties, 'properties', { types: new Set(['element']) }), {
      params,
      propertiesColumn: eventsTablePropertiesColumn,
      elementsChainColumn: 'elements_chain',
      nowMs: NOW,
    });
    const query = `SELECT distinct_id FROM ${EVENTS_TABLE} WHERE team_id = 1 AND ${where} ORDER BY distinct_id`;
    await (await ch.query({ query: `EXPLAIN SYNTAX ${query}`, query_params: params.values, format: 'TabSeparated' })).text();
    return (await (await ch.query({ query, query_params: params.values, format: 'JSONEachRow' })).json<{ distinct_id: string }>()).map((r) => r.distinct_id);
  }
  const element = (key: string, value: unknown, operator = 'exact') => [{ key, value, operator, type: 'element' }];

  it.each<[string, unknown, string[]]>([
    ['text exact, any element', element('text', 'Order'), ['C']],
    ['text exact, a list', element('text', ['Buy now', 'Pricing']), ['A', 'B']],
    ['text icontains', element('text', 'ORD', 'icontains'), ['C']],
    ['text regex', element('text', '^P', 'regex'), ['B']],
    ['text is_not: some element has another text', element('text', 'Order', 'is_not'), ['A', 'B', 'D', 'E']],
    ['href exact (the first href of the chain)', element('href', '/pricing'), ['B']],
    ['href icontains', element('href', 'PRIC', 'icontains'), ['B']],
    ['tag_name at any element', element('tag_name', 'button'), ['A', 'C']],
    ['tag_name is a whole tag (abbr is no a)', element('tag_name', 'a'), ['B']],
    ['tag_name is_not', element('tag_name', 'button', 'is_not'), ['B', 'D', 'E', 'F']],
    ['selector: a tag', element('selector', 'button'), ['A', 'C']],
    ['selector: the a tag needs a real <a> (abbr matches the pattern only)', element('selector', 'a'), ['B']],
    ['selector: descendant', element('selector', 'form button'), ['A']],
    ['selector: child', element('selector', 'nav > a'), ['B']],
    ['selector: parent with a class', element('selector', 'div.card > button'), ['C']],
    ['selector: a class', element('selector', '.btn'), ['A', 'C']],
    ['selector: an id alone', element('selector', '#buy'), ['A']],
    ['selector: an attribute', element('selector', '[data-attr="order"]'), ['C']],
    ['selector: a list is any of them', element('selector', ['#buy', 'nav > a']), ['A', 'B']],
    ['selector is_not', element('selector', '#buy', 'is_not'), ['B', 'C', 'D', 'E', 'F']],
    [
      'element filters combine with AND',
      [
        { key: 'tag_name', value: 'button', type: 'element' },
        { key: 'text', value: 'Order', type: 'element' },
      ],
      ['C'],
    ],
  ])('%s', async (_name, properties, expected) => {
    expect(await matching(properties)).toEqual(expected);
  });
});
