// The api in ClickHouse's cluster layout (CLICKHOUSE_CLUSTER, docs/scaling.md): no cluster runs
// here, so the same requests go to an api built for one server and to one built for a cluster,
// both over the same single-server chdb database. Every statement the cluster api sends is
// recorded and checked by ClickHouse's own parser (formatQuery) and against the distributed-read
// rule (a JOIN or IN reading the events inside a query the shards run must be GLOBAL); run on
// one server (where GLOBAL changes nothing), its answers must equal the single-server api's.
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { clickhouseLayout, insertEvents } from '@sightline/clickhouse';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import {
  createTestPerson,
  createTestStores,
  insertGroupType,
  distributedReadsWithoutGlobal,
  formatWithClickHouse,
  recordStatements,
  testEventRow,
  type RecordedStatements,
  type TestStores,
} from '@sightline/testkit';
import { createApiApp } from './app';

const NOW = Date.parse('2024-03-10T15:00:00Z');
const HOUR = 3_600_000;
const ADMIN = 'phx_cluster_layout_admin';
const auth = { Authorization: `Bearer ${ADMIN}` };

type App = ReturnType<typeof createApiApp>;

describe('the api in the cluster layout', () => {
  let stores: TestStores;
  let single: App;
  let cluster: App;
  let recorded: RecordedStatements;
  let singleRecorded: RecordedStatements;
  const ids: Record<string, number | string> = {};

  beforeAll(async () => {
    stores = await createTestStores('cluster-layout', { personalApiKey: ADMIN });
    const people = Array.from({ length: 8 }, (_, i) => ({ id: `p${i}`, plan: i % 2 ? 'pro' : 'free', pays: i % 3 !== 0 }));
    for (const p of people) {
      const person = await createTestPerson(stores, { distinctIds: [p.id, `${p.id}-anon`], properties: { plan: p.plan } });
      ids[`person-${p.id}`] = person.uuid;
    }
    await insertGroupType(stores.db, 1, 'company', 0);
    await insertEvents(
      stores.ch,
      people.flatMap((p, i) => {
        const start = NOW - (i + 1) * 5 * HOUR;
        const session = { $session_id: randomUUID(), $current_url: `https://example.com/${p.plan}?x=1` };
        return [
          // A session spanning two distinct ids of one person (they may hash to different shards).
          testEventRow({ event: 'visit', atMs: start, distinctId: `${p.id}-anon`, properties: { ...session, price: i * 10, $browser: 'Firefox' } }),
          testEventRow({
            event: 'watched_demo',
            atMs: start + 60_000,
            distinctId: p.id,
            properties: { ...session, length: p.pays ? 'long' : 'short', $group_0: `company-${i % 3}` },
          }),
          ...(p.pays ? [testEventRow({ event: 'pay', atMs: start + HOUR, distinctId: p.id, properties: { ...session, price: 99 } })] : []),
        ];
      }),
    );
    const deps = { db: stores.db, logger: silentLogger(), metrics: createMetrics(), now: () => NOW, readiness: [], isShuttingDown: () => false };
    singleRecorded = recordStatements(stores.ch);
    single = createApiApp({ ...deps, ch: singleRecorded.client });
    recorded = recordStatements(stores.ch);
    cluster = createApiApp({ ...deps, ch: recorded.client, clickhouseLayout: clickhouseLayout('sightline') });
    // Cohorts and an action, made through the single-server api.
    const pro = { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } };
    ids['dynamic'] = (await request(single).post('/api/projects/1/cohorts/').set(auth).send({ name: 'Pro', filters: pro })).body.id;
    ids['static'] = (
      await request(single)
        .post('/api/projects/1/cohorts/')
        .set(auth)
        .send({ name: 'Picked', is_static: true, distinct_ids: ['p1', 'p2'] })
    ).body.id;
    ids['action'] = (
      await request(single)
        .post('/api/projects/1/actions/')
        .set(auth)
        .send({ name: 'Paid', steps: [{ event: 'pay' }] })
    ).body.id;
    expect([ids['dynamic'], ids['static'], ids['action']].every((id) => Number.isInteger(id))).toBe(true);
  });
  afterAll(() => stores.close());

  const funnel = {
    events: [
      { id: 'visit', order: 0 },
      { id: 'pay', order: 1 },
    ],
    date_from: '-7d',
  };
  const trend = (body: Record<string, unknown>) => ({ date_from: '-7d', ...body });
  const requests: [string, string, () => Record<string, unknown> | undefined][] = [
    ['trend: total', '/api/environments/1/insights/trend/', () => trend({ events: [{ id: 'visit' }] })],
    [
      'trend: dau by person property',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit', math: 'dau' }], breakdown: 'plan', breakdown_type: 'person' }),
    ],
    [
      'trend: weekly active, hourly',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit', math: 'weekly_active' }], interval: 'hour' }),
    ],
    ['trend: per-actor average', '/api/environments/1/insights/trend/', () => trend({ events: [{ id: 'visit', math: 'avg_count_per_actor' }] })],
    [
      'trend: sum and median of a property',
      '/api/environments/1/insights/trend/',
      () =>
        trend({
          events: [
            { id: 'visit', math: 'sum', math_property: 'price' },
            { id: 'pay', math: 'median', math_property: 'price' },
          ],
        }),
    ],
    ['trend: first time for user', '/api/environments/1/insights/trend/', () => trend({ events: [{ id: 'visit', math: 'first_time_for_user' }] })],
    [
      'trend: session duration breakdown',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit' }], breakdown: '$session_duration', breakdown_type: 'session', display: 'ActionsTable' }),
    ],
    [
      'trend: session filter',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'pay' }], properties: [{ key: '$session_duration', value: 30, operator: 'gt', type: 'session' }] }),
    ],
    [
      'trend: entry url breakdown, normalised',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'pay' }], breakdown: '$entry_current_url', breakdown_type: 'session', breakdown_normalize_url: true }),
    ],
    [
      'trend: dynamic and static cohort filters',
      '/api/environments/1/insights/trend/',
      () =>
        trend({
          events: [{ id: 'visit' }],
          properties: [
            { key: 'id', value: ids['dynamic'], type: 'cohort' },
            { key: 'id', value: ids['static'], type: 'cohort', operator: 'not_in' },
          ],
        }),
    ],
    [
      'trend: cohort breakdown',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit' }], breakdown_type: 'cohort', breakdown: [ids['dynamic'], ids['static'], 'all'] }),
    ],
    [
      'trend: histogram breakdown',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit' }], breakdown: 'price', breakdown_type: 'event', breakdown_histogram_bin_count: 3 }),
    ],
    [
      'trend: hogql breakdown and formula',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit' }, { id: 'pay' }], formula: 'B / A', breakdown: 'properties.$browser', breakdown_type: 'hogql' }),
    ],
    [
      'trend: action, compared with the previous period',
      '/api/environments/1/insights/trend/',
      () => trend({ actions: [{ id: ids['action'], math: 'total' }], compare: true }),
    ],
    [
      'trend: cumulative by event property',
      '/api/environments/1/insights/trend/',
      () => trend({ events: [{ id: 'visit' }], breakdown: '$browser', display: 'ActionsLineGraphCumulative' }),
    ],
    ['funnel: ordered, by person property', '/api/environments/1/insights/funnel/', () => ({ ...funnel, breakdown: 'plan', breakdown_type: 'person' })],
    [
      'funnel: strict, with an exclusion',
      '/api/environments/1/insights/funnel/',
      () => ({ ...funnel, funnel_order_type: 'strict', exclusions: [{ id: 'watched_demo', funnel_from_step: 0, funnel_to_step: 1 }] }),
    ],
    [
      'funnel: unordered, session filter',
      '/api/environments/1/insights/funnel/',
      () => ({ ...funnel, funnel_order_type: 'unordered', properties: [{ key: '$session_duration', value: 0, operator: 'gt', type: 'session' }] }),
    ],
    ['funnel: trends', '/api/environments/1/insights/funnel/', () => ({ ...funnel, funnel_viz_type: 'trends' })],
    ['funnel: time to convert', '/api/environments/1/insights/funnel/', () => ({ ...funnel, funnel_viz_type: 'time_to_convert' })],
    [
      'funnel: a first-time step',
      '/api/environments/1/insights/funnel/',
      () => ({
        ...funnel,
        events: [
          { id: 'visit', order: 0, math: 'first_time_for_user' },
          { id: 'pay', order: 1, math: 'first_time_for_user_with_filters' },
        ],
      }),
    ],
    ['funnel: session breakdown', '/api/environments/1/insights/funnel/', () => ({ ...funnel, breakdown: '$entry_pathname', breakdown_type: 'session' })],
    ['correlation: events', '/api/environments/1/insights/funnel/correlation/', () => ({ ...funnel, funnel_correlation_type: 'events' })],
    [
      'correlation: person properties',
      '/api/environments/1/insights/funnel/correlation/',
      () => ({ ...funnel, funnel_correlation_type: 'properties', funnel_correlation_names: ['plan'] }),
    ],
    [
      'correlation: event properties',
      '/api/environments/1/insights/funnel/correlation/',
      () => ({ ...funnel, funnel_correlation_type: 'event_with_properties', funnel_correlation_event_names: ['watched_demo'] }),
    ],
    [
      'query: TrendsQuery',
      '/api/environments/1/query/',
      () => ({
        query: {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: 'visit' }],
          breakdownFilter: { breakdown: '$session_duration', breakdown_type: 'session' },
        },
      }),
    ],
    [
      'query: FunnelsQuery',
      '/api/environments/1/query/',
      () => ({
        query: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: 'visit' },
            { kind: 'EventsNode', event: 'pay' },
          ],
          dateRange: { date_from: '-7d' },
        },
      }),
    ],
    ['trend: all time (reads the first event)', '/api/environments/1/insights/trend/', () => ({ events: [{ id: 'visit' }], date_from: 'all' })],
    [
      'funnel actors: an ActorsQuery with a search',
      '/api/environments/1/query/',
      () => ({
        query: {
          kind: 'ActorsQuery',
          search: 'p',
          source: {
            kind: 'FunnelsActorsQuery',
            funnelStep: 1,
            source: {
              kind: 'FunnelsQuery',
              series: [
                { kind: 'EventsNode', event: 'visit' },
                { kind: 'EventsNode', event: 'pay' },
              ],
              dateRange: { date_from: '-7d' },
            },
          },
        },
      }),
    ],
    [
      'funnel actors: legacy persons/funnel/ by breakdown value',
      `/api/projects/1/persons/funnel/?events=${encodeURIComponent(
        JSON.stringify([
          { id: 'visit', order: 0 },
          { id: 'pay', order: 1 },
        ]),
      )}&date_from=-7d&breakdown=plan&breakdown_type=person&funnel_step=-2&funnel_step_breakdown=${encodeURIComponent('["free"]')}`,
      () => undefined,
    ],
    ['events list', '/api/projects/1/events/?event=visit', () => undefined],
    ['person by distinct id', '/api/projects/1/persons/?distinct_id=p1-anon', () => undefined],
    ['actors related to a group', '/api/projects/1/groups/related/?id=company-1&group_type_index=0', () => undefined],
    ['actors related to a person', '/api/projects/1/groups/related/?id={person-p1}', () => undefined],
    ['persons list', '/api/projects/1/persons/?search=p1', () => undefined],
    ['person property values', '/api/projects/1/persons/values/?key=plan', () => undefined],
    ['event property values', '/api/projects/1/events/values/?key=%24browser', () => undefined],
    ['dynamic cohort persons', '/api/projects/1/cohorts/{dynamic}/persons/', () => undefined],
    ['dynamic cohort, counted again on update', 'PATCH /api/projects/1/cohorts/{dynamic}/', () => ({ name: 'Pro users' })],
  ];

  const send = (app: App, path: string, body: Record<string, unknown> | undefined) => {
    const url = path.replace(/\{([\w-]+)\}/g, (_m, name: string) => String(ids[name]));
    if (url.startsWith('PATCH ')) return request(app).patch(url.slice(6)).set(auth).send(body);
    return body === undefined ? request(app).get(url).set(auth) : request(app).post(url).set(auth).send(body);
  };

  it.each(requests)('%s: the same answer as on one server', async (_name, path, body) => {
    const before = recorded.statements.length;
    const [one, many] = [await send(single, path, body()), await send(cluster, path, body())];
    expect(one.status).toBe(200);
    // An update counts up the cohort's version: the second one is one higher.
    // An absolute link (persons/funnel/'s `initial`) names each server's own port.
    const comparable = (body: Record<string, unknown>) => ({
      ...body,
      ...(path.startsWith('PATCH ') ? { version: null } : {}),
      ...('initial' in body ? { initial: null } : {}),
    });
    expect({ status: many.status, body: comparable(many.body) }).toEqual({ status: one.status, body: comparable(one.body) });
    expect(recorded.statements.length).toBeGreaterThan(before);
  });

  it('sends only statements ClickHouse parses, with every read of the events inside a sharded query GLOBAL', async () => {
    const statements = [...new Set(recorded.statements)].filter((s) => !s.startsWith('INSERT INTO'));
    expect(statements.length).toBeGreaterThan(requests.length);
    const problems: string[] = [];
    for (const sql of statements) {
      const formatted = await formatWithClickHouse(sql);
      problems.push(...distributedReadsWithoutGlobal(formatted).map((p) => `${p}:\n${sql.slice(0, 300)}`));
    }
    expect(problems).toEqual([]);
    // The session joins are the ones that read the events: the layout reached the query builders.
    expect(statements.filter((s) => /GLOBAL LEFT JOIN \(\s*SELECT JSONExtractString\(properties, '\$session_id'\)/.test(s)).length).toBeGreaterThan(3);
  });

  it('would be refused on a cluster as one server builds it (the check above bites)', async () => {
    const sessionQueries = [...new Set(singleRecorded.statements)].filter((s) => s.includes('session_properties'));
    expect(sessionQueries.length).toBeGreaterThan(0);
    for (const sql of sessionQueries) expect(distributedReadsWithoutGlobal(await formatWithClickHouse(sql))).not.toEqual([]);
  });
});
