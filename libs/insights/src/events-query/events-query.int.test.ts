import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { QueryFilterError } from '../common/query-filter-error';
import { QueryInputError } from '../common/events-sql';
import { DateRangeError } from '../common/date-range';
import { createQueryService, type QueryService } from '../runners/query-service';

/**
 * EventsQuery on the real engine, ported from posthog/hogql_queries/test/test_events_query_runner.py
 * (each case names the PostHog test it follows) and from the runner's rules
 * (posthog/hogql_queries/events_query_runner.py: default window, GROUP BY, order, the `*` and
 * `person` columns, the page).
 */
const NOW = Date.parse('2020-01-11T12:01:00Z');
const at = (iso: string) => Date.parse(iso);

/** Each data set in its own project, so one set of stores serves every case. */
const BOOLEANS = 11;
const QUOTES = 12;
const DATES = 13;
const PERSONS = 14;
const BIG = 15;
const PAGES = 16;
const OTHER = 17;
const DATES_PHOENIX = 18;
const CHAINS = 19;

describe('EventsQuery', () => {
  let stores: TestStores;
  let service: QueryService;
  const project = (id: number, timezone = 'UTC') => ({ id, timezone });
  const run = (id: number, node: Record<string, unknown>, options: { timezone?: string; nowMs?: number } = {}) =>
    service.runNode(project(id, options.timezone), { kind: 'EventsQuery', ...node }, options.nowMs ?? NOW) as Promise<{
      columns: string[];
      types: string[];
      results: unknown[][];
      hasMore: boolean;
      limit: number;
      offset: number;
    }>;
  const pageview = (teamId: number, distinctId: string, iso: string, properties: Record<string, unknown> = {}, event = '$pageview') =>
    testEventRow({ teamId, event, distinctId, atMs: at(iso), properties });

  beforeAll(async () => {
    stores = await createTestStores('events_query');
    service = createQueryService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    await insertEvents(stores.ch, [
      // test_is_not_set_boolean / test_is_set_boolean (_create_boolean_field_test_events)
      pageview(BOOLEANS, 'p_true', '2020-01-11T12:00:01Z', { boolean_field: true }),
      pageview(BOOLEANS, 'p_false', '2020-01-11T12:00:02Z', { boolean_field: false }),
      pageview(BOOLEANS, 'p_notset', '2020-01-11T12:00:04Z', {}),
      pageview(BOOLEANS, 'p_null', '2020-01-11T12:00:04Z', { boolean_field: null }),
      // test_escaped_single_quotes_in_where_clause
      pageview(QUOTES, 'p_null', '2020-01-11T12:00:04Z', { text_field: "I'm a string with a ' in it" }),
      pageview(QUOTES, 'p_one', '2020-01-11T12:00:14Z', { text_field: 'I"m a string with a " in it' }),
      // test_absolute_date_range: the same wall-clock times in whichever zone the project has (here UTC)
      pageview(DATES, 'p17', '2020-01-11T22:00:00Z'),
      pageview(DATES, 'p2', '2020-01-12T01:00:00Z'),
      pageview(DATES, 'p3', '2020-01-12T12:00:00Z'),
      pageview(DATES, 'p1', '2020-01-12T23:00:00Z'),
      pageview(DATES, 'p3', '2020-01-13T02:00:00Z'),
      // test_absolute_date_range's times in a project seven hours behind UTC (also_test_with_different_timezones)
      ...['2020-01-11T22:00:00', '2020-01-12T01:00:00', '2020-01-12T12:00:00', '2020-01-12T23:00:00', '2020-01-13T02:00:00'].map((local) =>
        pageview(DATES_PHOENIX, 'p', `${local}-07:00`),
      ),
      // test_big_int
      pageview(BIG, 'p_null', '2020-01-11T12:00:04Z', { boolean_field: null, bigInt: 2 ** 159 - 24 }),
      // Another project's events, with the same names and distinct ids: never in project BOOLEANS' answers.
      pageview(OTHER, 'p_true', '2020-01-11T12:00:03Z', { boolean_field: true }),
      pageview(OTHER, 'id1', '2020-01-11T12:00:03Z'),
    ]);
    // A page of 150 events for limits and offsets, one a second.
    await insertEvents(
      stores.ch,
      Array.from({ length: 150 }, (_, i) => pageview(PAGES, `u${i % 3}`, new Date(at('2020-01-11T10:00:00Z') + i * 1000).toISOString(), { i })),
    );
  });
  afterAll(() => stores.close());

  it('reads boolean properties as PostHog does: is_not_set and is_set (test_is_not_set_boolean, test_is_set_boolean)', async () => {
    const query = (operator: string) =>
      run(BOOLEANS, {
        after: '-24h',
        event: '$pageview',
        orderBy: ['timestamp ASC'],
        select: ['*'],
        properties: [{ type: 'event', key: 'boolean_field', operator, value: operator }],
      });
    const notSet = await query('is_not_set');
    expect(new Set(notSet.results.map((row) => (row[0] as { distinct_id: string }).distinct_id))).toEqual(new Set(['p_notset', 'p_null']));
    const set = await query('is_set');
    expect(new Set(set.results.map((row) => (row[0] as { distinct_id: string }).distinct_id))).toEqual(new Set(['p_true', 'p_false']));
  });

  it('answers `*` as the event object: PostHog`s fields, properties parsed, time in the project`s zone', async () => {
    const answer = await run(BOOLEANS, { select: ['*', 'event'], orderBy: ['timestamp ASC'], limit: 1 });
    expect(answer.columns).toEqual(['*', 'event']);
    expect(answer.types[1]).toBe('String');
    expect(answer.types[0]).toMatch(/^Tuple\(UUID, String, String, DateTime64\(6, 'UTC'\), Int64/);
    const [event, name] = answer.results[0]!;
    expect(name).toBe('$pageview');
    expect(event).toMatchObject({
      event: '$pageview',
      distinct_id: 'p_true',
      team_id: BOOLEANS,
      properties: { boolean_field: true },
      timestamp: '2020-01-11T12:00:01Z',
      elements_chain: '',
      person_mode: 'full',
    });
    expect(Object.keys(event as object).slice(0, 9)).toEqual([
      'uuid',
      'event',
      'properties',
      'timestamp',
      'team_id',
      'distinct_id',
      'elements_chain',
      'created_at',
      'person_mode',
    ]);
    const inNewYork = await run(BOOLEANS, { select: ['timestamp'], orderBy: ['timestamp ASC'], limit: 1 }, { timezone: 'America/New_York' });
    expect(inNewYork.results).toEqual([['2020-01-11T07:00:01-05:00']]);
  });

  it('takes `*` when select is empty, and never reads another project`s events', async () => {
    const answer = await run(BOOLEANS, { select: [] });
    expect(answer.columns).toEqual(['*']);
    expect(answer.results).toHaveLength(4);
    expect(answer.results.every((row) => (row[0] as { team_id: number }).team_id === BOOLEANS)).toBe(true);
  });

  it('keeps quotes in where strings as written (test_escaped_single_quotes_in_where_clause)', async () => {
    const single = await run(QUOTES, { after: '-24h', where: ["properties.text_field = 'I\\'m a string with a \\' in it'"], select: ['*'] });
    expect(single.results.map((row) => (row[0] as { properties: { text_field: string } }).properties.text_field)).toEqual(["I'm a string with a ' in it"]);
    const double = await run(QUOTES, { after: '-24h', where: [`properties.text_field = 'I"m a string with a " in it'`], select: ['*'] });
    expect(double.results.map((row) => (row[0] as { distinct_id: string }).distinct_id)).toEqual(['p_one']);
  });

  it('reads after and before in the project`s zone, both exclusive (test_absolute_date_range)', async () => {
    const answer = await run(DATES, { after: '2020-01-12', before: '2020-01-12T23:59:59', event: '$pageview', orderBy: ['timestamp ASC'], select: ['*'] });
    expect(answer.results.map((row) => (row[0] as { timestamp: string }).timestamp)).toEqual([
      '2020-01-12T01:00:00Z',
      '2020-01-12T12:00:00Z',
      '2020-01-12T23:00:00Z',
    ]);
    const phoenix = await run(
      DATES_PHOENIX,
      { after: '2020-01-12', before: '2020-01-12T23:59:59', orderBy: ['timestamp ASC'], select: ['*'] },
      { timezone: 'America/Phoenix' },
    );
    expect(phoenix.results.map((row) => (row[0] as { timestamp: string }).timestamp)).toEqual([
      '2020-01-12T01:00:00-07:00',
      '2020-01-12T12:00:00-07:00',
      '2020-01-12T23:00:00-07:00',
    ]);
    // The default window is the last 24 hours before now: none of these are in it.
    const none = await run(DATES, { select: ['event', 'timestamp'] }, { nowMs: at('2020-01-15T00:00:00Z') });
    expect(none).toMatchObject({ results: [], hasMore: false, types: ['String', "DateTime64(6, 'UTC')"] });
    expect((await run(DATES, { select: ['event'], after: 'all' }, { nowMs: at('2020-01-15T00:00:00Z') })).results).toHaveLength(5);
    // Future events stay out unless asked for: before is now + 5 s by default.
    expect((await run(DATES, { select: ['event'], after: 'all' }, { nowMs: at('2020-01-12T11:59:00Z') })).results).toHaveLength(2);
    expect((await run(DATES, { select: ['event'], after: 'all' }, { nowMs: at('2020-01-12T11:59:56Z') })).results).toHaveLength(3);
  });

  it('filters on event metadata: the distinct id (test_event_metadata_filter)', async () => {
    const answer = await run(DATES, {
      after: '2020-01-11',
      before: '2020-01-15',
      event: '$pageview',
      orderBy: ['timestamp ASC'],
      select: ['*'],
      properties: [{ type: 'event_metadata', operator: 'exact', key: 'distinct_id', value: ['p3'] }],
    });
    expect(answer.results.map((row) => (row[0] as { timestamp: string }).timestamp)).toEqual(['2020-01-12T12:00:00Z', '2020-01-13T02:00:00Z']);
  });

  it('filters on the elements chain as the event property $elements_chain (test_element_chain_property_filter)', async () => {
    await insertEvents(stores.ch, [
      testEventRow({
        teamId: CHAINS,
        event: '$autocapture',
        distinctId: 'test_user',
        atMs: at('2020-01-11T11:00:00Z'),
        properties: { attr: 'has div' },
        elementsChain:
          'a.link:href="/test-url"nth-child="1"nth-of-type="0"text="Click me";div.container:attr_id="main-container"nth-child="0"nth-of-type="0";button.btn.btn-primary:nth-child="0"nth-of-type="0"text="Submit"',
      }),
      testEventRow({
        teamId: CHAINS,
        event: '$autocapture',
        distinctId: 'test_user',
        atMs: at('2020-01-11T11:00:01Z'),
        properties: { attr: 'no div' },
        elementsChain: 'a.link:href="/test-url"nth-child="1"nth-of-type="0"text="Click me";button.btn.btn-primary:nth-child="0"nth-of-type="0"text="Submit"',
      }),
    ]);
    const answer = await run(CHAINS, {
      after: '-24h',
      event: '$autocapture',
      orderBy: ['timestamp ASC'],
      select: ['*'],
      properties: [{ key: '$elements_chain', value: 'div', operator: 'not_icontains', type: 'event' }],
    });
    expect(answer.results).toHaveLength(1);
    const event = answer.results[0]![0] as { properties: { attr: string }; elements: { tag_name: string; text: string | null }[] };
    expect(event.properties.attr).toBe('no div');
    // `*` reads the chain back into elements, as PostHog's ElementSerializer answers them.
    expect(event.elements.map((e) => [e.tag_name, e.text])).toEqual([
      ['a', 'Click me'],
      ['button', 'Submit'],
    ]);
  });

  it('answers big integers in properties as numbers (test_big_int)', async () => {
    const answer = await run(BIG, { after: '-24h', event: '$pageview', orderBy: ['timestamp ASC'], select: ['*'] });
    expect((answer.results[0]![0] as { properties: { bigInt: number } }).properties.bigInt).toBe(2 ** 159 - 24);
  });

  describe('persons', () => {
    let merged: { id: number; uuid: string };
    beforeAll(async () => {
      // One person with two distinct ids (merged: events of id2 were written with another person id), one of another project.
      merged = await createTestPerson(stores, { teamId: PERSONS, distinctIds: ['id1', 'id2'], properties: { email: 'user@email.com', name: 'Test User' } });
      await createTestPerson(stores, { teamId: OTHER, distinctIds: ['id1'], properties: { email: 'other@email.com' } });
      await insertEvents(stores.ch, [
        testEventRow({
          teamId: PERSONS,
          event: '$pageview',
          distinctId: 'id1',
          personId: merged.uuid,
          atMs: at('2020-01-11T12:00:01Z'),
          personProperties: { email: 'user@email.com', name: 'Test User' },
        }),
        testEventRow({ teamId: PERSONS, event: '$pageview', distinctId: 'id2', atMs: at('2020-01-11T12:00:02Z'), properties: { some: 'other' } }),
        testEventRow({ teamId: PERSONS, event: '$pageview', distinctId: 'anon', atMs: at('2020-01-11T12:00:03Z') }),
      ]);
    });

    it('answers the person column as the person behind the distinct id now (test_select_person_column)', async () => {
      const answer = await run(PERSONS, { select: ['person'], orderBy: ['timestamp ASC'] });
      expect(answer.columns).toEqual(['person']);
      expect(answer.results.map((row) => row[0])).toEqual([
        { uuid: merged.uuid, created_at: expect.any(String), properties: { email: 'user@email.com', name: 'Test User' }, distinct_id: 'id1' },
        { uuid: merged.uuid, created_at: expect.any(String), properties: { email: 'user@email.com', name: 'Test User' }, distinct_id: 'id2' },
        { distinct_id: 'anon' },
      ]);
    });

    it('filters by personId: the person`s distinct ids, by uuid or id, never another project`s (test_person_id_expands_to_distinct_ids)', async () => {
      for (const personId of [merged.uuid, String(merged.id), merged.id]) {
        const answer = await run(PERSONS, { select: ['distinct_id'], personId, orderBy: ['timestamp ASC'] });
        expect(answer.results).toEqual([['id1'], ['id2']]);
      }
      expect((await run(OTHER, { select: ['distinct_id'], personId: merged.uuid })).results).toEqual([]);
    });

    it('counts a merged person once through person_id, as trends do', async () => {
      const answer = await run(PERSONS, { select: ['person_id', 'count()'], where: ["distinct_id != 'anon'"] });
      expect(answer.results).toEqual([[merged.uuid, 2]]);
      expect(answer.types).toEqual(['UUID', 'UInt64']);
    });

    it('answers person_display_name from the default display properties, then the distinct id (test_person_display_name_field)', async () => {
      const answer = await run(PERSONS, { select: ['event', 'person_display_name -- Person'], orderBy: ['timestamp ASC'] });
      expect(answer.columns).toEqual(['event', 'person_display_name -- Person']);
      expect(answer.results.map((row) => (row[1] as { display_name: string }).display_name)).toEqual(['user@email.com', 'id2', 'anon']);
      expect(answer.results[0]![1]).toEqual({ display_name: 'user@email.com', id: merged.uuid, distinct_id: 'id1' });
    });

    it('reads the project`s own display properties, then the distinct id (test_person_display_name_field_2, _fallback)', async () => {
      const displayNames = async (properties: string[]) => {
        const answer = (await service.runNode(
          { id: PERSONS, timezone: 'UTC', person_display_name_properties: properties },
          { kind: 'EventsQuery', select: ['event', 'person_display_name -- Person'], orderBy: ['timestamp ASC'] },
          NOW,
        )) as { results: [string, { display_name: string }][] };
        return answer.results.map((row) => row[1].display_name);
      };
      expect(await displayNames(['name'])).toEqual(['Test User', 'id2', 'anon']);
      expect(await displayNames(['nonexistent'])).toEqual(['id1', 'id2', 'anon']);
    });
  });

  it('groups by the other columns when one aggregates, and orders by count() by default', async () => {
    const answer = await run(PAGES, {
      select: ['distinct_id', 'count()', 'max(toInt(properties.i))'],
      where: ['toInt(properties.i) NOT IN (0, 1, 3)'],
      after: 'all',
    });
    expect(answer.results).toEqual([
      ['u2', 50, 149],
      ['u1', 49, 148],
      ['u0', 48, 147],
    ]);
    expect(answer.types).toEqual(['String', 'UInt64', 'Nullable(Int64)']);
    // An aggregate condition goes to HAVING.
    const having = await run(PAGES, {
      select: ['distinct_id', 'count()'],
      where: ['max(toInt(properties.i)) >= 149', 'toInt(properties.i) > 0'],
      after: 'all',
    });
    expect(having.results).toEqual([['u2', 50]]);
  });

  it('orders by timestamp, newest first, when timestamp is selected; else by the first column', async () => {
    const newest = await run(PAGES, { select: ['properties.i', 'timestamp'], after: 'all', limit: 2 });
    expect(newest.results.map((row) => row[0])).toEqual(['149', '148']);
    const first = await run(PAGES, { select: ['distinct_id'], after: 'all', limit: 1 });
    expect(first.results).toEqual([['u0']]);
  });

  it('pages: 100 rows by default, hasMore when more follow, offset, and at most 50,000 rows', async () => {
    const page = await run(PAGES, { select: ['properties.i'], after: 'all', orderBy: ['timestamp ASC'] });
    expect(page).toMatchObject({ limit: 100, offset: 0, hasMore: true });
    expect(page.results).toHaveLength(100);
    const next = await run(PAGES, { select: ['properties.i'], after: 'all', orderBy: ['timestamp ASC'], offset: 100 });
    expect(next).toMatchObject({ limit: 100, offset: 100, hasMore: false });
    expect(next.results[0]).toEqual(['100']);
    expect(next.results).toHaveLength(50);
    const exact = await run(PAGES, { select: ['properties.i'], after: 'all', limit: 150 });
    expect(exact.hasMore).toBe(false);
    expect((await run(PAGES, { select: ['event'], after: 'all', limit: 10_000_000 })).limit).toBe(50_000);
  });

  it('refuses what it cannot run with an error naming the field', async () => {
    await expect(run(PAGES, { select: ['nosuchfield'] })).rejects.toMatchObject({ attr: 'select', code: 'invalid_hogql' });
    await expect(run(PAGES, { select: ['event'], where: ['event ='] })).rejects.toMatchObject({ attr: 'where', code: 'invalid_hogql' });
    await expect(run(PAGES, { select: ['event'], orderBy: ['file(1) DESC'] })).rejects.toMatchObject({ attr: 'orderBy' });
    await expect(run(PAGES, { select: 'event' })).rejects.toBeInstanceOf(QueryFilterError);
    await expect(run(PAGES, { select: ['event'], after: 'yesterday' })).rejects.toBeInstanceOf(DateRangeError);
    // ClickHouse's own refusal of per-event values beside an aggregate is the client's error, named.
    await expect(run(PAGES, { select: ['event', 'count()'], orderBy: ['timestamp DESC'] })).rejects.toBeInstanceOf(QueryInputError);
  });
});
