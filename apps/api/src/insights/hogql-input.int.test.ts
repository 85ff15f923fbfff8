/**
 * What a client's HogQL expressions and numeric filter values can make of a query: an answer, or
 * a 400 in the DRF shape naming the expression or the value, never a 500. On both ClickHouse
 * clients the service runs with: the HTTP interface, and the in-process engine `npm start` uses
 * (whose parameter binder refuses integers past 2^53 that HTTP would send as text).
 */
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, testEventRow } from '@sightline/testkit';
import { createFlagFixture, type FlagFixture, serveFixture, type ServedFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');

/** Expressions a probe of the running service found answered 500 (issue 25). */
const REPORTED = [
  '9223372036854775807 + 1',
  'toInt(properties.x) * 9223372036854775807',
  '-9223372036854775808 % -1',
  'substring(event, -9223372036854775807)',
  'substring(event, 1, 9223372036854775807)',
  "toDateTime(timestamp, 'Invalid/Zone')",
  "toString(timestamp) like '%'",
  '[][1]',
  'person.id',
  'constructor(event)',
  'toString(event)',
  'valueOf(event)',
  'hasOwnProperty(event)',
  '__proto__(event)',
  'isPrototypeOf(event)',
  'toLocaleString(event)',
];

/** The three places a trend takes HogQL. */
const ENTRY_POINTS: Record<string, (expression: string) => Record<string, unknown>> = {
  math_hogql: (expression) => ({ events: [{ id: 'signup', math: 'hogql', math_hogql: expression }] }),
  breakdown: (expression) => ({ events: [{ id: 'signup' }], breakdown_type: 'hogql', breakdown: expression }),
  properties: (expression) => ({ events: [{ id: 'signup' }], properties: [{ type: 'hogql', key: expression }] }),
};

const PAST_INT64 = '9223372036854775808';

describe.each(['pg', 'chdb'] as const)('HogQL and numeric filters (ClickHouse: %s)', (store) => {
  let fixture: FlagFixture;
  let served: ServedFixture;
  let personUuid: string;

  beforeAll(async () => {
    fixture = await createFlagFixture(`hogqlinput${store}`, () => NOW, store);
    served = await serveFixture(fixture);
    const person = await createTestPerson(fixture, { distinctIds: ['u1'], properties: { email: 'a@example.com', x: 5 } });
    personUuid = person.uuid;
    const event = (atMs: number) =>
      testEventRow({ event: 'signup', atMs, distinctId: 'u1', personId: person.uuid, properties: { x: 5 }, personProperties: { x: 5 } });
    await insertEvents(fixture.ch, [event(NOW - 3_600_000), event(NOW - 2 * 86_400_000)]);
  });
  afterAll(async () => {
    await served?.close();
    await fixture?.close();
  });

  const trend = (body: Record<string, unknown>) => served.send('POST', '/api/projects/1/insights/trend/', { date_from: '-7d', refresh: true, ...body });
  const get = (path: string, properties: unknown) => served.send('GET', `${path}?properties=${encodeURIComponent(JSON.stringify(properties))}`);
  const counts = (json: Record<string, unknown>) => (json['result'] as { breakdown_value?: unknown; count: number }[]).map((s) => [s.breakdown_value, s.count]);

  /** The contract: never a 5xx; a 400 is the DRF envelope naming the expression. */
  const expectHandled = (answer: { status: number; json: Record<string, unknown>; text: string }, expression: string) => {
    expect([answer.status, answer.text.slice(0, 300)]).toEqual([expect.any(Number), expect.any(String)]);
    if (answer.status === 200) return;
    expect(answer.status).toBe(400);
    expect(Object.keys(answer.json).sort()).toEqual(['attr', 'code', 'detail', 'type']);
    expect(answer.json).toMatchObject({ type: 'validation_error', code: 'invalid_hogql' });
    expect(answer.json['detail']).toContain(JSON.stringify(expression));
  };

  it.each(REPORTED.flatMap((expression) => Object.keys(ENTRY_POINTS).map((entry) => [expression, entry])))(
    '%s as %s: an answer, or a 400 naming it',
    async (expression, entry) => {
      const answer = await trend(ENTRY_POINTS[entry]!(expression));
      expectHandled(answer, expression);
      if (answer.status === 400) expect(answer.json['attr']).toBe(entry);
    },
  );

  it('answers what PostHog answers for the reported expressions it accepts', async () => {
    expect(counts((await trend(ENTRY_POINTS['properties']!("toString(timestamp) like '%'"))).json)).toEqual([[undefined, 2]]);
    expect(counts((await trend(ENTRY_POINTS['math_hogql']!("countIf(toString(timestamp) like '%')"))).json)).toEqual([[undefined, 2]]);
    expect(counts((await trend(ENTRY_POINTS['breakdown']!('toString(event)'))).json)).toEqual([['signup', 2]]);
    expect(counts((await trend(ENTRY_POINTS['breakdown']!('person.id'))).json)).toEqual([[personUuid, 2]]);
    // Int64 arithmetic wraps as ClickHouse's does; an offset before the text's start reads it from its first character.
    expect(counts((await trend(ENTRY_POINTS['breakdown']!('9223372036854775807 + 1'))).json)).toEqual([['-9223372036854775808', 2]]);
    expect(counts((await trend(ENTRY_POINTS['breakdown']!('substring(event, -9223372036854775807)'))).json)).toEqual([['signup', 2]]);
    expect(counts((await trend(ENTRY_POINTS['math_hogql']!('sum(toInt(properties.x) * 1000000000000000)'))).json)).toEqual([[undefined, 1e16]]);
  });

  it('names what it refuses: unknown functions, unknown time zones, what ClickHouse cannot evaluate', async () => {
    expect((await trend(ENTRY_POINTS['math_hogql']!('constructor(event)'))).json).toEqual({
      type: 'validation_error',
      code: 'invalid_hogql',
      detail: 'HogQL expression "constructor(event)": Unsupported function call \'constructor(...)\'',
      attr: 'math_hogql',
    });
    expect((await trend(ENTRY_POINTS['breakdown']!("toDateTime(timestamp, 'Invalid/Zone')"))).json['detail']).toBe(
      'HogQL expression "toDateTime(timestamp, \'Invalid/Zone\')": Unknown time zone "Invalid/Zone" in toDateTime().',
    );
    // A person's id is a UUID, not a condition: ClickHouse refuses it as a filter.
    expect((await trend(ENTRY_POINTS['properties']!('person.id'))).json).toEqual({
      type: 'validation_error',
      code: 'invalid_hogql',
      detail: expect.stringMatching(/^The HogQL expression "person\.id" cannot be evaluated on these events: .+ \(ILLEGAL_TYPE_OF_[A-Z_]+\)\.$/),
      attr: 'properties',
    });
  });

  it('compares numbers within Int64 and refuses those past it, in trends, the events list and the persons list', async () => {
    const within = (value: string) => [{ key: 'x', type: 'person', operator: 'gt', value }];
    // Past 2^53 yet within Int64: compared, not refused (the in-process binder refused them).
    for (const value of ['9007199254740993', '-9223372036854775808', '9223372036854775807']) {
      const expected = value.startsWith('-') ? 2 : 0;
      expect([value, (await trend({ events: [{ id: 'signup' }], properties: within(value) })).json['result']]).toEqual([
        value,
        [expect.objectContaining({ count: expected })],
      ]);
      expect([value, (await get('/api/projects/1/events/', within(value))).status]).toEqual([value, 200]);
      expect([value, (await get('/api/projects/1/persons/', within(value))).status]).toEqual([value, 200]);
    }
    const refused = {
      type: 'validation_error',
      code: 'max_value',
      detail: 'Operator "gt" compares numbers between -9223372036854775808 and 9223372036854775807.',
      attr: 'properties__0__value',
    };
    for (const value of [PAST_INT64, '-9223372036854775809', '1e19', '1.5e300']) {
      expect([value, (await trend({ events: [{ id: 'signup' }], properties: within(value) })).json]).toEqual([value, refused]);
      expect([value, (await get('/api/projects/1/events/', within(value))).json]).toEqual([value, refused]);
      expect([value, (await get('/api/projects/1/persons/', within(value))).json]).toEqual([value, refused]);
    }
    const between = [{ key: 'x', type: 'person', operator: 'between', value: ['1', PAST_INT64] }];
    expect((await get('/api/projects/1/persons/', between)).json).toMatchObject({ code: 'max_value', attr: 'properties__0__value' });
  });

  it('refuses such numbers when a cohort, an action, an insight or the test-account filters are saved, and at query when one was stored before', async () => {
    const big = [{ key: 'x', type: 'person', operator: 'gt', value: PAST_INT64 }];
    const small = [{ key: 'x', type: 'person', operator: 'gt', value: '1' }];
    const cohort = { name: 'big', filters: { properties: { type: 'AND', values: big } } };
    expect((await served.send('POST', '/api/projects/1/cohorts/', cohort)).json).toMatchObject({ code: 'max_value' });
    const action = (properties: unknown) => ({ name: `big ${String(properties === big)}`, steps: [{ event: 'signup', properties }] });
    expect((await served.send('POST', '/api/projects/1/actions/', action(big))).json).toMatchObject({ code: 'max_value' });
    expect((await served.send('PATCH', '/api/projects/1/', { test_account_filters: big })).json).toMatchObject({ code: 'max_value' });
    const insight = (properties: unknown) => ({ name: 'big', filters: { insight: 'TRENDS', events: [{ id: 'signup' }], properties } });
    expect((await served.send('POST', '/api/projects/1/insights/', insight(big))).json).toMatchObject({ code: 'max_value' });

    // Saved with a number in range, then changed in the database as if saved before the check.
    const savedCohort = await served.send('POST', '/api/projects/1/cohorts/', { ...cohort, filters: { properties: { type: 'AND', values: small } } });
    const savedAction = await served.send('POST', '/api/projects/1/actions/', action(small));
    const savedInsight = await served.send('POST', '/api/projects/1/insights/', insight(small));
    expect([savedCohort.status, savedAction.status, savedInsight.status]).toEqual([201, 201, 201]);
    await fixture.db.query('UPDATE cohorts SET filters = $2 WHERE id = $1', [
      savedCohort.json['id'],
      JSON.stringify({ properties: { type: 'AND', values: big } }),
    ]);
    await fixture.db.query('UPDATE actions SET steps = $2 WHERE id = $1', [savedAction.json['id'], JSON.stringify(action(big).steps)]);
    await fixture.db.query('UPDATE insights SET filters = $2 WHERE id = $1', [savedInsight.json['id'], JSON.stringify(insight(big).filters)]);
    await fixture.db.query('UPDATE projects SET test_account_filters = $1 WHERE id = 1', [JSON.stringify(big)]);
    // Stored before the check, as the rows above: announced as a process started over them would read them.
    await fixture.projectChanges.publish(1);

    const cohortFilter = [{ type: 'cohort', key: 'id', value: savedCohort.json['id'] }];
    const answers = {
      'persons in the cohort': await served.send('GET', `/api/projects/1/persons/?cohort=${String(savedCohort.json['id'])}`),
      'a trend filtered by the cohort': await trend({ events: [{ id: 'signup' }], properties: cohortFilter }),
      'a trend of the action': await trend({ actions: [{ id: savedAction.json['id'] }] }),
      'the insight': await served.send('GET', `/api/projects/1/insights/${String(savedInsight.json['id'])}/?refresh=true`),
      'a trend without test accounts': await trend({ events: [{ id: 'signup' }], filter_test_accounts: true }),
    };
    for (const [what, answer] of Object.entries(answers)) {
      expect([what, answer.status, answer.json['type']]).toEqual([what, 400, 'validation_error']);
      expect(String(answer.json['detail'])).toMatch(/-9223372036854775808 and 9223372036854775807/);
    }
    expect(answers['a trend without test accounts'].json['attr']).toBe('test_account_filters');
    // Queries that do not apply the stored filters are unaffected.
    expect((await trend({ events: [{ id: 'signup' }] })).status).toBe(200);
    await fixture.db.query("UPDATE projects SET test_account_filters = '[]' WHERE id = 1");
    await fixture.projectChanges.publish(1);
  });
});
