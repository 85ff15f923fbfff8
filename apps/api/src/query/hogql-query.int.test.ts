import request from 'supertest';
import { DEFAULT_ANALYTICS_QUERY_LIMITS, insertEvents } from '@sightline/clickhouse';
import { createTestGroup, createTestPerson, testEventRow, type TestPerson } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const DAY = 86_400_000;
const admin = bearer(ADMIN_KEY);
/** The uuid events of `a2` were written with, before `a2` was merged into person A. */
const OLD_PERSON = '00000000-0000-4000-8000-0000000000aa';

type Body = { columns: string[]; types: [string, string][]; results: unknown[][]; hasMore: boolean; limit: number; offset: number; detail?: string };

/** Project 1: persons A (distinct ids a, a2: merged) and B; project 2: person Z with rows of every table. */
async function seed(f: FlagFixture): Promise<{ a: TestPerson; b: TestPerson; z: TestPerson }> {
  const a = await createTestPerson(f, { distinctIds: ['a', 'a2'], properties: { email: 'a@one.test', plan: 'pro' } });
  const b = await createTestPerson(f, { distinctIds: ['b'], properties: { email: 'b@one.test' } });
  const z = await createTestPerson(f, { teamId: 2, distinctIds: ['z'], properties: { email: 'z@two.test' } });
  await insertEvents(f.ch, [
    testEventRow({
      event: 'visit',
      atMs: NOW - 3 * DAY,
      distinctId: 'a',
      personId: a.uuid,
      properties: { $browser: 'Chrome', $session_id: 's1', $group_0: 'org1', amount: 5 },
      personProperties: { email: 'a@one.test' },
      groupProperties: { 0: { name: 'Org One' } },
    }),
    // Sent before the merge: the row holds the old person; person_distinct_id2 re-points a2 to A.
    testEventRow({ event: 'visit', atMs: NOW - 2 * DAY, distinctId: 'a2', personId: OLD_PERSON, properties: { $browser: 'Safari', amount: 1 } }),
    testEventRow({
      event: 'pay',
      atMs: NOW - DAY,
      distinctId: 'b',
      personId: b.uuid,
      properties: { $browser: 'Firefox', amount: 7 },
      elementsChain: 'a:href="/pricing"nth-child="1"',
    }),
    ...Array.from({ length: 120 }, (_, i) => testEventRow({ event: 'bulk', atMs: NOW - 4 * DAY + i * 1000, distinctId: 'b', personId: b.uuid })),
    // Project 2: every field that project 1's queries read, with values that must never show.
    ...['visit', 'pay', 'secret'].map((event) =>
      testEventRow({
        event,
        teamId: 2,
        atMs: NOW - DAY,
        distinctId: 'z',
        personId: z.uuid,
        properties: { $browser: 'Secret', $session_id: 's1', $group_0: 'org2', amount: 1000 },
        personProperties: { email: 'z@two.test' },
      }),
    ),
  ]);
  await createTestGroup(f, { groupTypeIndex: 0, groupKey: 'org1', properties: { name: 'Org One' } });
  await createTestGroup(f, { teamId: 2, groupTypeIndex: 0, groupKey: 'org2', properties: { name: 'Secret Org' } });
  await f.ch.insert({
    table: 'person_static_cohort',
    format: 'JSONEachRow',
    values: [
      { team_id: 1, cohort_id: 5, person_id: a.uuid, version: 1 },
      { team_id: 2, cohort_id: 5, person_id: z.uuid, version: 1 },
    ],
  });
  return { a, b, z };
}

describe('POST /query/ runs a HogQLQuery over the project’s tables', () => {
  let f: FlagFixture;
  let people: { a: TestPerson; b: TestPerson; z: TestPerson };
  const run = async (query: string, values?: Record<string, unknown>, project = 1) =>
    request(f.app)
      .post(`/api/environments/${project}/query/`)
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query, ...(values ? { values } : {}) } });
  const rows = async (query: string, values?: Record<string, unknown>) => {
    const res = await run(query, values);
    expect({ status: res.status, detail: (res.body as Body).detail }).toEqual({ status: 200, detail: undefined });
    return (res.body as Body).results;
  };

  beforeAll(async () => {
    f = await createFlagFixture('hogql-query', () => NOW);
    people = await seed(f);
  });
  afterAll(() => f.close());

  it('answers PostHog’s HogQLQueryResponse: columns, types, results, hogql, hasMore, limit, offset', async () => {
    const query = "SELECT event, count() AS n FROM events WHERE event != 'bulk' GROUP BY event ORDER BY event";
    const res = await run(query);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      columns: ['event', 'n'],
      types: [
        ['event', 'String'],
        ['n', 'UInt64'],
      ],
      results: [
        ['pay', 1],
        ['visit', 2],
      ],
      hogql: query,
      hasMore: false,
      limit: 100,
      offset: 0,
      is_cached: false,
    });
    expect(typeof res.body.clickhouse).toBe('string');
  });

  it('reads every field of events, persons resolved through merges', async () => {
    const results = await rows(
      `SELECT event, properties.$browser, person_id, person.properties.email, distinct_id, elements_chain, $session_id, $group_0,
              group_0.properties.name, properties['amount'] + 1, person.id = pdi.person_id
       FROM events WHERE event != 'bulk' ORDER BY timestamp`,
    );
    const { a, b } = people;
    expect(results).toEqual([
      ['visit', 'Chrome', a.uuid, 'a@one.test', 'a', '', 's1', 'org1', 'Org One', 6, 1],
      ['visit', 'Safari', a.uuid, null, 'a2', '', '', '', null, 2, 1],
      ['pay', 'Firefox', b.uuid, null, 'b', 'a:href="/pricing"nth-child="1"', '', '', null, 8, 1],
    ]);
    // Two distinct ids of one merged person count once.
    expect(await rows("SELECT count(DISTINCT person_id) FROM events WHERE event = 'visit'")).toEqual([[1]]);
  });

  it('selects each table’s fields with *, as PostHog lists them', async () => {
    const columns = async (table: string) => ((await run(`SELECT * FROM ${table} LIMIT 1`)).body as Body).columns;
    expect(await columns('events')).toEqual([
      'uuid',
      'event',
      'properties',
      'timestamp',
      'distinct_id',
      'elements_chain',
      'created_at',
      '$session_id',
      '$window_id',
      'person_id',
      '$group_0',
      '$group_1',
      '$group_2',
      '$group_3',
      '$group_4',
    ]);
    expect(await columns('persons')).toEqual(['id', 'created_at', 'properties', 'is_identified']);
    expect(await columns('person_distinct_ids')).toEqual(['distinct_id', 'person_id']);
    expect(await columns('groups')).toEqual(['index', 'key', 'created_at', 'properties']);
    expect(await columns('static_cohort_people')).toEqual(['cohort_id', 'person_id']);
    const [row] = await rows(
      "SELECT e.*, person.created_at, pdi.distinct_id, pdi.person.properties.email FROM events e WHERE event = 'visit' AND distinct_id = 'a'",
    );
    expect(row).toEqual([
      expect.any(String),
      'visit',
      expect.stringContaining('"$browser":"Chrome"'),
      '2024-01-07T15:00:00Z',
      'a',
      '',
      '2024-01-07T15:00:00Z',
      's1',
      '',
      people.a.uuid,
      'org1',
      '',
      '',
      '',
      '',
      expect.any(String),
      'a',
      'a@one.test',
    ]);
  });

  it('reads date-times in the project’s time zone and answers them in ISO 8601', async () => {
    const setZone = async (timezone: string) => expect((await request(f.app).patch('/api/projects/1/').set(admin).send({ timezone })).status).toBe(200);
    await setZone('Asia/Tokyo');
    try {
      expect(await rows("SELECT timestamp, toDate(timestamp) FROM events WHERE distinct_id = 'a'")).toEqual([['2024-01-08T00:00:00+09:00', '2024-01-08']]);
    } finally {
      await setZone('UTC');
    }
  });

  it('reads persons, person_distinct_ids, groups and static_cohort_people, and joins them', async () => {
    const { a, b } = people;
    expect(await rows('SELECT id, properties.email FROM persons ORDER BY properties.email')).toEqual([
      [a.uuid, 'a@one.test'],
      [b.uuid, 'b@one.test'],
    ]);
    expect(await rows('SELECT distinct_id, person_id FROM person_distinct_ids ORDER BY distinct_id')).toEqual([
      ['a', a.uuid],
      ['a2', a.uuid],
      ['b', b.uuid],
    ]);
    expect(await rows('SELECT index, key, properties.name FROM groups')).toEqual([[0, 'org1', 'Org One']]);
    expect(await rows('SELECT cohort_id, person_id FROM static_cohort_people')).toEqual([[5, a.uuid]]);
    expect(
      await rows(
        `SELECT e.event, p.properties.plan, count() FROM events e JOIN persons p ON p.id = e.person_id
         WHERE e.event = 'visit' GROUP BY e.event, p.properties.plan`,
      ),
    ).toEqual([['visit', 'pro', 2]]);
  });

  it('takes CTEs, subqueries, UNION ALL, ROLLUP, window functions, LIMIT BY', async () => {
    expect(
      await rows(
        `WITH v AS (SELECT distinct_id, event FROM events WHERE event IN ('visit', 'pay'))
         SELECT event, count() FROM v GROUP BY event WITH ROLLUP ORDER BY event`,
      ),
    ).toEqual([
      ['', 3],
      ['pay', 1],
      ['visit', 2],
    ]);
    expect(await rows("SELECT x FROM (SELECT distinct_id AS x FROM events WHERE event = 'pay') UNION ALL SELECT key FROM groups")).toEqual([['b'], ['org1']]);
    expect(
      await rows("SELECT distinct_id, row_number() OVER (PARTITION BY event ORDER BY timestamp) AS n FROM events WHERE event = 'visit' ORDER BY n"),
    ).toEqual([
      ['a', 1],
      ['a2', 2],
    ]);
    expect(await rows("SELECT event, distinct_id FROM events WHERE event != 'bulk' ORDER BY event, timestamp LIMIT 1 BY event")).toEqual([
      ['pay', 'b'],
      ['visit', 'a'],
    ]);
  });

  it('answers its rows as CSV with format=csv', async () => {
    const res = await request(f.app)
      .post('/api/environments/1/query/?format=csv')
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query: "SELECT event, count() AS n FROM events WHERE event != 'bulk' GROUP BY event ORDER BY event" } });
    expect(res.status).toBe(200);
    expect(res.text.trim().split(/\r?\n/)).toEqual(['event,n', 'pay,1', 'visit,2']);
  });

  it('binds placeholders from values, never pasting them into the SQL', async () => {
    const hostile = "x' OR 1=1 --";
    expect(await rows('SELECT count() FROM events WHERE distinct_id = {who}', { who: hostile })).toEqual([[0]]);
    expect(await rows('SELECT count() FROM events WHERE distinct_id IN {who}', { who: ['a', 'a2'] })).toEqual([[2]]);
    const missing = await run('SELECT {nope}');
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/No value given for the placeholder \{nope\} at 7/);
  });

  it('binds a literal longer than a URL of 16 KiB (the test front reads URIs as long as ClickHouse does)', async () => {
    const long = 'x'.repeat(20_000 - 20);
    expect(await rows(`SELECT length('${long}')`)).toEqual([[long.length]]);
  });

  it('answers at most the default 100 rows, hasMore when cut, at most 50,000 whatever LIMIT says', async () => {
    const all = await run("SELECT uuid FROM events WHERE event = 'bulk'");
    expect(all.body).toMatchObject({ hasMore: true, limit: 100, offset: 0 });
    expect(all.body.results).toHaveLength(100);
    const page = await run("SELECT uuid FROM events WHERE event = 'bulk' ORDER BY timestamp LIMIT 10 OFFSET 115");
    expect(page.body).toMatchObject({ hasMore: false, limit: 10, offset: 115 });
    expect(page.body.results).toHaveLength(5);
    const huge = await run("SELECT uuid FROM events WHERE event = 'bulk' LIMIT 1000000");
    expect(huge.body).toMatchObject({ hasMore: false, limit: 50_000 });
    expect(huge.body.results).toHaveLength(120);
  });

  it.each([
    ['SELECT * FROM evnts', "Unknown table 'evnts' at 14"],
    ['SELECT nope FROM events', "Unknown field 'nope' at 7"],
    ["SELECT * FROM file('/etc/passwd')", "Table functions are not allowed: 'file' at 14"],
    ["SELECT * FROM url('http://127.0.0.1/')", "Table functions are not allowed: 'url' at 14"],
    ['SELECT * FROM numbers(1000000000)', "Table functions are not allowed: 'numbers' at 14"],
    ["SELECT * FROM remote('127.0.0.1', system.one)", "Table functions are not allowed: 'remote' at 14"],
    ['SELECT * FROM system.tables', "Unknown table 'system.tables' at 14"],
    ['SELECT * FROM information_schema.tables', "Unknown table 'information_schema.tables' at 14"],
    ['SELECT 1 FROM events SETTINGS max_threads = 1', 'Syntax error in HogQL query'],
    ["SELECT 1 INTO OUTFILE '/tmp/x'", 'Syntax error in HogQL query at 14'],
    ['SELECT 1 FORMAT JSON', 'Syntax error in HogQL query at 16'],
    ['SELECT 1; SELECT 2', 'Syntax error in HogQL query at 10'],
    ['DROP TABLE events', 'Syntax error in HogQL query at 0'],
    ["INSERT INTO events (event) VALUES ('x')", 'Syntax error in HogQL query at 0'],
    ['SELECT 1 FROM events e JOIN (SELECT 1 FROM system.one) s ON 1', "Unknown table 'system.one' at 43"],
    ['SELECT sleep(3)', "Unsupported function call 'sleep(...)' at 7"],
  ])('refuses %s with a 400 naming the problem and where', async (query, detail) => {
    const res = await run(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr: 'query' });
    expect(res.body.detail).toContain(detail);
  });

  describe('never shows a row of another project, however the table is named', () => {
    const queries = [
      'SELECT properties.$browser FROM events',
      'SELECT e.properties.$browser FROM events AS e',
      'WITH x AS (SELECT properties.$browser AS b FROM events) SELECT b FROM x',
      'SELECT b FROM (SELECT properties.$browser AS b FROM events)',
      'SELECT e.properties.$browser FROM events e LEFT JOIN persons p ON p.id = e.person_id',
      "SELECT properties.$browser FROM events WHERE event = 'nothing' UNION ALL SELECT properties.$browser FROM events",
      'SELECT properties.$browser FROM events WHERE distinct_id IN (SELECT distinct_id FROM person_distinct_ids)',
      'SELECT person.properties.email FROM events',
      'SELECT properties.email FROM persons',
      'SELECT distinct_id FROM person_distinct_ids',
      'SELECT properties.name FROM groups',
      'SELECT toString(person_id) FROM static_cohort_people',
      'SELECT x.properties.email FROM persons x JOIN person_distinct_ids y ON x.id = y.person_id',
    ];
    it.each(queries)('%s', async (query) => {
      const res = await run(query);
      expect(res.status).toBe(200);
      const text = JSON.stringify(res.body.results);
      for (const secret of ['Secret', 'z@two.test', '"z"', people.z.uuid]) expect(text).not.toContain(secret);
    });
  });
});

describe('a HogQL query past its ClickHouse limits', () => {
  let f: FlagFixture;
  beforeAll(async () => {
    f = await createFlagFixture('hogql-limits', () => NOW, 'pg', {
      analytics: { queryLimits: { ...DEFAULT_ANALYTICS_QUERY_LIMITS, maxExecutionSeconds: 1 }, cacheMaxBytes: 1024 * 1024 },
    });
    await insertEvents(
      f.ch,
      Array.from({ length: 200 }, (_, i) => testEventRow({ event: 'e', atMs: NOW - i * 1000, distinctId: `d${i}` })),
    );
  });
  afterAll(() => f.close());

  it('is stopped by max_execution_time, answers a 400 naming the limit, and the service goes on', async () => {
    const slow = `SELECT count() FROM events a CROSS JOIN events b CROSS JOIN events c CROSS JOIN events d CROSS JOIN events e
                  WHERE length(concat(a.distinct_id, b.distinct_id, c.distinct_id, d.distinct_id, e.distinct_id)) % 7 = 3`;
    const started = Date.now();
    const res = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query: slow } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', code: 'query_limit_exceeded' });
    expect(res.body.detail).toMatch(/longer than 1 s \(max_execution_time\)/);
    expect(Date.now() - started).toBeLessThan(30_000);
    const after = await request(f.app)
      .post('/api/environments/1/query/')
      .set(admin)
      .send({ query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } });
    expect(after.body.results).toEqual([[200]]);
  });
});
