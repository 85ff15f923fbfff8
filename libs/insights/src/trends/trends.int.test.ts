import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import { createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { parseTrendFilter } from './trend-filter';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER } from '../common/events-sql';
import { createQueryService, type QueryService } from '../runners/query-service';
import { type QueryProjectRow } from '../common/query-project';

/**
 * Trends against generated events on the real ClickHouse engine. Every expected number is
 * computed here from the generated list in plain TypeScript, never by running our SQL.
 */
const NOW = Date.parse('2024-01-10T15:00:00Z');
const TZ = 'America/New_York';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface Generated {
  event: string;
  atMs: number;
  distinctId: string;
  properties: Record<string, unknown>;
  personProperties: Record<string, unknown>;
  groupProperties?: Record<number, Record<string, unknown>>;
}

const INDUSTRIES = ['tech', 'retail'];
/** Sessions of the "sess" events: id, first event, and the seconds after it of the others. */
const SESSIONS: [string, number, number[]][] = [
  ['long', Date.parse('2024-01-09T12:00:00Z'), [30, 100]],
  ['short', Date.parse('2024-01-09T13:00:00Z'), [5]],
  ['single', Date.parse('2024-01-09T14:00:00Z'), []],
  ['hour', Date.parse('2024-01-08T10:00:00Z'), [1800, 3600]],
];

/** A small deterministic generator (mulberry32), so failures reproduce. */
function random(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BROWSERS = ['Chrome', 'Firefox', 'Safari', 'Edge', null];
const PLANS = ['free', 'pro', 'enterprise'];

function generate(): Generated[] {
  const next = random(42);
  const out: Generated[] = [];
  for (let i = 0; i < 600; i++) {
    const user = Math.floor(next() * 12);
    const browser = BROWSERS[Math.floor(next() * BROWSERS.length)];
    const properties: Record<string, unknown> = { price: Math.floor(next() * 100), $session_id: `s${user}-${Math.floor(next() * 3)}` };
    if (browser) properties['$browser'] = browser;
    if (next() < 0.3) properties['$current_url'] = `https://example.com/page${Math.floor(next() * 3)}/?q=${i}`;
    properties['$feature/beta'] = user % 2 ? 'test' : 'control';
    let groupProperties: Record<number, Record<string, unknown>> | undefined;
    if (user % 3 !== 0) {
      properties['$group_0'] = `org${user % 4}`;
      groupProperties = { 0: { industry: INDUSTRIES[user % 2] } };
    }
    out.push({
      groupProperties,
      event: next() < 0.7 ? '$pageview' : 'signup',
      // 20 days back from NOW, at any minute.
      atMs: NOW - Math.floor(next() * 20 * 24 * 60) * 60_000,
      distinctId: `user${user}`,
      properties,
      personProperties: { plan: PLANS[user % 3], email: user === 0 ? 'dev@internal.test' : `u${user}@example.com` },
    });
  }
  for (const [id, start, offsets] of SESSIONS) {
    for (const seconds of [0, ...offsets]) {
      out.push({
        event: 'sess',
        atMs: start + seconds * 1000,
        distinctId: 'user2',
        properties: { $session_id: id, $current_url: `https://example.com/${id}` },
        personProperties: {},
      });
    }
  }
  // Edges of the New York day: 23:59 local on Jan 8 and 00:00 local on Jan 9.
  out.push({ event: 'edge', atMs: Date.parse('2024-01-09T04:59:00Z'), distinctId: 'user1', properties: {}, personProperties: {} });
  out.push({ event: 'edge', atMs: Date.parse('2024-01-09T05:00:00Z'), distinctId: 'user1', properties: {}, personProperties: {} });
  return out;
}

const EVENTS = generate();
/** user11 merged into user10 after its events were written: same person from then on. */
const PERSON_OF: Record<string, string> = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [`user${i}`, `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`]),
);
const currentPerson = (distinctId: string) => (distinctId === 'user11' ? PERSON_OF['user10']! : PERSON_OF[distinctId]!);

const local = (ms: number) => DateTime.fromMillis(ms, { zone: TZ });
const dayKey = (ms: number) => local(ms).toFormat('yyyy-MM-dd');

/** The default range in New York time: Jan 3 00:00 to Jan 10 23:59:59.999 (NOW is 10:00 there). */
const DAYS = Array.from({ length: 8 }, (_, i) => local(Date.parse('2024-01-03T05:00:00Z')).plus({ days: i }).toFormat('yyyy-MM-dd'));
const inRange = (e: Generated) => DAYS.includes(dayKey(e.atMs));

function perDay<T>(events: Generated[], reduce: (events: Generated[]) => T): T[] {
  return DAYS.map((day) => reduce(events.filter((e) => dayKey(e.atMs) === day)));
}

const distinctPersons = (events: Generated[]) => new Set(events.map((e) => currentPerson(e.distinctId))).size;

describe('trends on the ClickHouse engine (generated data, answers computed independently)', () => {
  let stores: TestStores;
  let ch: ClickHouseClient;
  let trends: QueryService;
  const project: QueryProjectRow = {
    id: 1,
    timezone: TZ,
    week_start_day: 0,
    test_account_filters: [{ key: 'email', value: '@internal.test', operator: 'not_icontains', type: 'person' }],
  };
  const run = (body: Record<string, unknown>, row: QueryProjectRow = project) => trends.run('TrendsQuery', row, parseTrendFilter(body), NOW);

  beforeAll(async () => {
    stores = await createTestStores('trends');
    ch = stores.ch;
    trends = createQueryService({ db: stores.db, ch, cacheTtlMs: 0 });
    await insertEvents(
      ch,
      EVENTS.map((e) =>
        testEventRow({
          event: e.event,
          atMs: e.atMs,
          distinctId: e.distinctId,
          // The person id frozen on the row is the one at ingestion time: user11 had its own.
          personId: PERSON_OF[e.distinctId],
          properties: e.properties,
          personProperties: e.personProperties,
          groupProperties: e.groupProperties,
        }),
      ),
    );
    // Another project's events never count.
    await insertEvents(ch, [testEventRow({ event: '$pageview', atMs: NOW, teamId: 2 })]);
    await ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [
        ...Object.entries(PERSON_OF).map(([distinct_id, person_id]) => ({ team_id: 1, distinct_id, person_id, is_deleted: 0, version: 0 })),
        { team_id: 1, distinct_id: 'user11', person_id: PERSON_OF['user10'], is_deleted: 0, version: 1 },
      ],
    });
  });
  afterAll(() => stores.close());

  it('buckets days in the project timezone, both ends inclusive, zero-filled', async () => {
    const answer = await run({ events: [{ id: '$pageview' }] });
    const [series] = answer.result;
    expect(answer.timezone).toBe(TZ);
    expect(series!.days).toEqual(DAYS);
    expect(series!.labels).toEqual(DAYS.map((d) => DateTime.fromISO(d).toFormat('d-LLL-yyyy', { locale: 'en-US' })));
    const expected = perDay(
      EVENTS.filter((e) => e.event === '$pageview'),
      (es) => es.length,
    );
    expect(series!.data).toEqual(expected);
    expect(series!.count).toBe(expected.reduce((a, b) => a + b, 0));
    const edge = await run({ events: [{ id: 'edge' }], date_from: '2024-01-08', date_to: '2024-01-09' });
    // 04:59 UTC on Jan 9 is 23:59 on Jan 8 in New York.
    expect(edge.result[0]!.data).toEqual([1, 1]);
    const utc = await run({ events: [{ id: 'edge' }], date_from: '2024-01-08', date_to: '2024-01-09' }, { ...project, timezone: 'UTC' });
    expect(utc.result[0]!.data).toEqual([0, 2]);
  });

  it('counts a merged person once, events written before the merge included', async () => {
    const answer = await run({ events: [{ id: null, math: 'dau' }] });
    expect(answer.result[0]!.label).toBe('All events');
    expect(answer.result[0]!.data).toEqual(perDay(EVENTS.filter(inRange), distinctPersons));
    const frozen = perDay(EVENTS.filter(inRange), (es) => new Set(es.map((e) => PERSON_OF[e.distinctId])).size);
    // The generated data has days where both user10 and user11 were active; the frozen ids would count them twice.
    expect(answer.result[0]!.data).not.toEqual(frozen);
  });

  it('weekly and monthly active: distinct persons in the 7 / 30 days ending with each day', async () => {
    for (const [math, days] of [
      ['weekly_active', 7],
      ['monthly_active', 30],
    ] as const) {
      const answer = await run({ events: [{ id: '$pageview', math }] });
      const expected = DAYS.map((day) => {
        const end = DateTime.fromISO(day, { zone: TZ }).plus({ days: 1 }).toMillis();
        return distinctPersons(EVENTS.filter((e) => e.event === '$pageview' && e.atMs < end && e.atMs >= end - days * DAY));
      });
      expect(answer.result[0]!.data).toEqual(expected);
    }
  });

  it('property maths, count per actor, unique sessions and first time for user', async () => {
    const pageviews = EVENTS.filter((e) => e.event === '$pageview');
    const prices = (es: Generated[]) => es.map((e) => Number(e.properties['price']));
    const sum = await run({ events: [{ id: '$pageview', math: 'sum', math_property: 'price' }] });
    expect(sum.result[0]!.data).toEqual(perDay(pageviews, (es) => prices(es).reduce((a, b) => a + b, 0)));
    const max = await run({ events: [{ id: '$pageview', math: 'max', math_property: 'price' }] });
    expect(max.result[0]!.data).toEqual(perDay(pageviews, (es) => (es.length ? Math.max(...prices(es)) : 0)));
    const avg = await run({ events: [{ id: '$pageview', math: 'avg', math_property: 'price' }] });
    avg.result[0]!.data!.forEach((value, i) => {
      const es = prices(pageviews.filter((e) => dayKey(e.atMs) === DAYS[i]));
      expect(value).toBeCloseTo(es.length ? es.reduce((a, b) => a + b, 0) / es.length : 0, 6);
    });
    const perActor = await run({ events: [{ id: '$pageview', math: 'max_count_per_actor' }] });
    expect(perActor.result[0]!.data).toEqual(
      perDay(pageviews, (es) => {
        const counts = new Map<string, number>();
        for (const e of es) counts.set(currentPerson(e.distinctId), (counts.get(currentPerson(e.distinctId)) ?? 0) + 1);
        return counts.size ? Math.max(...counts.values()) : 0;
      }),
    );
    const sessions = await run({ events: [{ id: '$pageview', math: 'unique_session' }] });
    expect(sessions.result[0]!.data).toEqual(perDay(pageviews, (es) => new Set(es.map((e) => e.properties['$session_id'])).size));
    const first = await run({ events: [{ id: 'signup', math: 'first_time_for_user' }] });
    const firsts = new Map<string, number>();
    for (const e of EVENTS.filter((x) => x.event === 'signup')) {
      const person = currentPerson(e.distinctId);
      firsts.set(person, Math.min(firsts.get(person) ?? Infinity, e.atMs));
    }
    expect(first.result[0]!.data).toEqual(DAYS.map((day) => [...firsts.values()].filter((ms) => dayKey(ms) === day).length));
  });

  it('filters with query-side semantics: a missing property matches is_not, numbers compare as numbers', async () => {
    const count = async (properties: unknown) => (await run({ events: [{ id: '$pageview' }], properties })).result[0]!.count;
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    const expectCount = (match: (e: Generated) => boolean) => pageviews.filter(match).length;
    expect(await count([{ key: '$browser', value: 'Chrome', operator: 'is_not', type: 'event' }])).toBe(
      expectCount((e) => e.properties['$browser'] !== 'Chrome'),
    );
    expect(await count([{ key: '$browser', value: 'chr', operator: 'icontains', type: 'event' }])).toBe(
      expectCount((e) => e.properties['$browser'] === 'Chrome'),
    );
    expect(await count([{ key: 'price', value: '9', operator: 'gt', type: 'event' }])).toBe(expectCount((e) => Number(e.properties['price']) > 9));
    expect(await count([{ key: '$browser', operator: 'is_not_set', type: 'event' }])).toBe(expectCount((e) => !('$browser' in e.properties)));
    expect(await count([{ key: '$browser', value: '^(Fire|Saf)', operator: 'regex', type: 'event' }])).toBe(
      expectCount((e) => /^(Fire|Saf)/.test(String(e.properties['$browser'] ?? ''))),
    );
    expect(
      await count({
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }] },
          { key: 'price', value: [10, 20], operator: 'between' },
        ],
      }),
    ).toBe(expectCount((e) => e.personProperties['plan'] === 'pro' || (Number(e.properties['price']) >= 10 && Number(e.properties['price']) <= 20)));
    // The documented request shape: series properties as a list of property groups.
    const grouped = await run({
      events: [{ id: '$pageview', properties: [{ type: 'AND', values: [{ key: '$browser', value: 'Safari', operator: 'exact', type: 'event' }] }] }],
    });
    expect(grouped.result[0]!.count).toBe(expectCount((e) => e.properties['$browser'] === 'Safari'));
    const testAccounts = await run({ events: [{ id: '$pageview' }], filter_test_accounts: true });
    expect(testAccounts.result[0]!.count).toBe(expectCount((e) => !String(e.personProperties['email']).includes('@internal.test')));
  });

  it('breaks down by event property: top values by count, then none, then other', async () => {
    const answer = await run({ events: [{ id: '$pageview' }], breakdown: '$browser', breakdown_limit: 2 });
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    const counts = new Map<string, number>();
    for (const e of pageviews) {
      const value = (e.properties['$browser'] as string | undefined) ?? BREAKDOWN_NULL;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([v]) => v);
    const top = ranked.slice(0, 2);
    const bucketOf = (e: Generated) => {
      const value = (e.properties['$browser'] as string | undefined) ?? BREAKDOWN_NULL;
      return top.includes(value) ? value : BREAKDOWN_OTHER;
    };
    const expectedValues = [...top.filter((v) => v !== BREAKDOWN_NULL), ...top.filter((v) => v === BREAKDOWN_NULL), BREAKDOWN_OTHER];
    expect(answer.result.map((s) => s.breakdown_value)).toEqual(expectedValues);
    for (const series of answer.result) {
      expect(series.label).toBe(series.breakdown_value);
      expect(series.data).toEqual(perDay(pageviews, (es) => es.filter((e) => bucketOf(e) === series.breakdown_value).length));
    }
    const hidden = await run({ events: [{ id: '$pageview' }], breakdown: '$browser', breakdown_limit: 2, breakdown_hide_other_aggregation: true });
    expect(hidden.result.map((s) => s.breakdown_value)).toEqual(expectedValues.filter((v) => v !== BREAKDOWN_OTHER));
  });

  it('breaks down by person property with dau, by several properties, and normalises URLs', async () => {
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    const answer = await run({ events: [{ id: '$pageview', math: 'dau' }], breakdown: 'plan', breakdown_type: 'person', display: 'ActionsTable' });
    for (const series of answer.result) {
      expect(series.data).toEqual([]);
      expect(series.aggregated_value).toBe(distinctPersons(pageviews.filter((e) => e.personProperties['plan'] === series.breakdown_value)));
    }
    expect(answer.result.map((s) => s.breakdown_value).sort()).toEqual([...PLANS].sort());
    const multiple = await run({
      events: [{ id: '$pageview' }],
      breakdowns: [
        { property: 'plan', type: 'person' },
        { property: '$browser', type: 'event' },
      ],
      display: 'ActionsPie',
    });
    for (const series of multiple.result) {
      const [plan, browser] = series.breakdown_value as string[];
      expect(series.aggregated_value).toBe(
        pageviews.filter((e) => e.personProperties['plan'] === plan && ((e.properties['$browser'] as string) ?? BREAKDOWN_NULL) === browser).length,
      );
    }
    expect(multiple.result.reduce((a, s) => a + s.aggregated_value!, 0)).toBe(pageviews.length);
    const urls = await run({ events: [{ id: '$pageview' }], breakdown: '$current_url', breakdown_normalize_url: true, display: 'BoldNumber' });
    const values = urls.result.map((s) => s.breakdown_value).filter((v) => v !== BREAKDOWN_NULL);
    expect(values.every((v) => /^https:\/\/example\.com\/page\d$/.test(String(v)))).toBe(true);
  });

  it('a total-value display counts distinct persons over the whole range, not the sum of days', async () => {
    const answer = await run({ events: [{ id: '$pageview', math: 'dau' }], display: 'BoldNumber' });
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    // A total has no dates: PostHog's query selects none (test_breakdown_filtering_bar_chart_by_value).
    expect(answer.result[0]).toMatchObject({ data: [], count: 0, aggregated_value: distinctPersons(pageviews), days: [] });
    expect(answer.result[0]!.labels).toBeUndefined();
    const cumulative = await run({ events: [{ id: '$pageview' }], display: 'ActionsLineGraphCumulative' });
    const daily = perDay(pageviews, (es) => es.length);
    const running = daily.map((_, i) => daily.slice(0, i + 1).reduce((a, b) => a + b, 0));
    expect(cumulative.result[0]!.data).toEqual(running);
    expect(cumulative.result[0]!.count).toBe(running[running.length - 1]);
  });

  it('compares with the previous period and with compare_to, each labelled with its own dates', async () => {
    const answer = await run({ events: [{ id: '$pageview' }], compare: true });
    const [current, previous] = answer.result;
    expect(current).toMatchObject({ compare: true, compare_label: 'current', days: DAYS });
    expect(previous!.compare_label).toBe('previous');
    const previousDays = DAYS.map((d) => DateTime.fromISO(d).minus({ days: 8 }).toFormat('yyyy-MM-dd'));
    // PostHog labels the previous period with its own dates (test_trends_compare_day_interval_relative_range).
    expect(previous!.labels).toEqual(previousDays.map((d) => DateTime.fromISO(d).toFormat('d-LLL-yyyy', { locale: 'en-US' })));
    expect(previous!.days).toEqual(previousDays);
    const pageviews = EVENTS.filter((e) => e.event === '$pageview');
    expect(previous!.data).toEqual(previousDays.map((day) => pageviews.filter((e) => dayKey(e.atMs) === day).length));
    const week = await run({ events: [{ id: '$pageview' }], compare: true, compare_to: '-1w' });
    const weekBefore = DAYS.map((d) => DateTime.fromISO(d).minus({ weeks: 1 }).toFormat('yyyy-MM-dd'));
    expect(week.result[1]!.days).toEqual(weekBefore);
    expect(week.result[1]!.data).toEqual(weekBefore.map((day) => pageviews.filter((e) => dayKey(e.atMs) === day).length));
  });

  it('applies formulas element-wise, division by zero as zero, per breakdown value', async () => {
    const answer = await run({ events: [{ id: '$pageview' }, { id: 'signup' }], formula: '(A-B)/B' });
    const pv = perDay(
      EVENTS.filter((e) => e.event === '$pageview'),
      (es) => es.length,
    );
    const su = perDay(
      EVENTS.filter((e) => e.event === 'signup'),
      (es) => es.length,
    );
    expect(answer.result).toHaveLength(1);
    expect(answer.result[0]!.label).toBe('Formula ((A-B)/B)');
    answer.result[0]!.data!.forEach((v, i) => expect(v).toBeCloseTo(su[i] === 0 ? 0 : (pv[i]! - su[i]!) / su[i]!, 9));
    const zero = await run({ events: [{ id: '$pageview' }, { id: 'never-happens' }], formula: 'A/B' });
    expect(zero.result[0]!.data).toEqual(DAYS.map(() => 0));
    const perPlan = await run({ events: [{ id: '$pageview' }, { id: 'signup' }], formula: 'A+B', breakdown: 'plan', breakdown_type: 'person' });
    for (const series of perPlan.result) {
      const events = EVENTS.filter((e) => inRange(e) && e.personProperties['plan'] === series.breakdown_value);
      expect(series.count).toBe(events.length);
    }
  });

  it('hour, minute, week and month intervals', async () => {
    const hourly = await run({ events: [{ id: '$pageview' }], interval: 'hour', date_from: '-48h' });
    const series = hourly.result[0]!;
    expect(series.days).toHaveLength(49);
    const firstHour = local(NOW).startOf('hour').minus({ hours: 48 });
    expect(series.days[0]).toBe(firstHour.toFormat('yyyy-MM-dd HH:mm:ss'));
    expect(series.labels![0]).toBe(firstHour.toFormat('d-LLL HH:mm', { locale: 'en-US' }));
    expect(series.data).toEqual(
      series.days.map((_, i) => {
        const start = firstHour.plus({ hours: i }).toMillis();
        return EVENTS.filter((e) => e.event === '$pageview' && e.atMs >= start && e.atMs < start + HOUR).length;
      }),
    );
    const minutes = await run({ events: [{ id: '$pageview' }], interval: 'minute', date_from: '-1h' });
    expect(minutes.result[0]!.count).toBe(
      EVENTS.filter((e) => e.event === '$pageview' && e.atMs >= local(NOW).startOf('minute').minus({ hours: 1 }).toMillis()).length,
    );

    for (const weekStartDay of [0, 1] as const) {
      const weekly = await run({ events: [{ id: '$pageview' }], interval: 'week', date_from: '-14d' }, { ...project, week_start_day: weekStartDay });
      const from = local(NOW).startOf('day').minus({ days: 14 });
      const firstWeek = from.minus({ days: weekStartDay === 1 ? from.weekday - 1 : from.weekday % 7 });
      expect(weekly.result[0]!.days[0]).toBe(firstWeek.toFormat('yyyy-MM-dd'));
      expect(weekly.result[0]!.data).toEqual(
        weekly.result[0]!.days.map((_, i) => {
          // The first week counts nothing before date_from (PostHog's test_interval_rounding).
          const start = Math.max(firstWeek.plus({ weeks: i }).toMillis(), from.toMillis());
          const end = firstWeek.plus({ weeks: i + 1 }).toMillis();
          return EVENTS.filter((e) => e.event === '$pageview' && e.atMs >= start && e.atMs < end).length;
        }),
      );
    }
    const monthly = await run({ events: [{ id: '$pageview' }], interval: 'month', date_from: '-1m' });
    expect(monthly.result[0]!.labels).toEqual(['Dec 2023', 'Jan 2024']);
  });

  it('session properties: $session_duration from the session’s events, as a filter and a breakdown', async () => {
    const duration = Object.fromEntries(SESSIONS.map(([id, , offsets]) => [id, Math.max(0, ...offsets)]));
    const sess = EVENTS.filter((e) => e.event === 'sess');
    const long = await run({ events: [{ id: 'sess' }], properties: [{ key: '$session_duration', value: 60, operator: 'gt', type: 'session' }] });
    expect(long.result[0]!.count).toBe(sess.filter((e) => duration[e.properties['$session_id'] as string]! > 60).length);
    const byDuration = await run({ events: [{ id: 'sess' }], breakdown: '$session_duration', breakdown_type: 'session', display: 'ActionsTable' });
    const expected = new Map<string, number>();
    for (const e of sess) {
      const key = String(duration[e.properties['$session_id'] as string]);
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    expect(new Map(byDuration.result.map((s) => [s.breakdown_value, s.aggregated_value]))).toEqual(expected);
    const entry = await run({ events: [{ id: 'sess' }], breakdown: '$entry_current_url', breakdown_type: 'session', display: 'ActionsTable' });
    expect(entry.result.map((s) => s.breakdown_value).sort()).toEqual(SESSIONS.map(([id]) => `https://example.com/${id}`).sort());
  });

  it('groups: unique_group, aggregation by group, group filters and group breakdowns', async () => {
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    const groupsOf = (es: Generated[]) => new Set(es.map((e) => e.properties['$group_0']).filter((g) => g !== undefined)).size;
    const unique = await run({ events: [{ id: '$pageview', math: 'unique_group', math_group_type_index: 0 }] });
    expect(unique.result[0]!.data).toEqual(perDay(pageviews, groupsOf));
    const aggregated = await run({ events: [{ id: '$pageview', math: 'dau' }], aggregation_group_type_index: 0, display: 'BoldNumber' });
    expect(aggregated.result[0]!.aggregated_value).toBe(groupsOf(pageviews));
    const tech = await run({ events: [{ id: '$pageview' }], properties: [{ key: 'industry', value: 'tech', type: 'group', group_type_index: 0 }] });
    expect(tech.result[0]!.count).toBe(pageviews.filter((e) => e.groupProperties?.[0]?.['industry'] === 'tech').length);
    const byIndustry = await run({
      events: [{ id: '$pageview' }],
      breakdown: 'industry',
      breakdown_type: 'group',
      breakdown_group_type_index: 0,
      display: 'ActionsPie',
    });
    expect(Object.fromEntries(byIndustry.result.map((s) => [s.breakdown_value, s.aggregated_value]))).toEqual({
      tech: pageviews.filter((e) => e.groupProperties?.[0]?.['industry'] === 'tech').length,
      retail: pageviews.filter((e) => e.groupProperties?.[0]?.['industry'] === 'retail').length,
      [BREAKDOWN_NULL]: pageviews.filter((e) => !e.groupProperties).length,
    });
  });

  it('histogram bins, flag-variant and metadata breakdowns', async () => {
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    const bins = await run({ events: [{ id: '$pageview' }], breakdown: 'price', breakdown_histogram_bin_count: 4, display: 'ActionsTable' });
    // PostHog's bins: four equal widths from the lowest price to the highest, each holding
    // lower ≤ price < upper, the last one's upper edge 0.01 past the highest price.
    const prices = pageviews.map((e) => Number(e.properties['price']));
    const [min, max] = [Math.min(...prices), Math.max(...prices)];
    const expected = new Map<string, number>();
    for (let x = 0; x < 4; x++) {
      const lower = ((max - min) / 4) * x + min;
      const upper = ((max - min) / 4) * (x + 1) + min + (x === 3 ? 0.01 : 0);
      const count = prices.filter((p) => lower <= p && p < upper).length;
      if (count > 0) expected.set(`[${lower},${upper}]`, count);
    }
    expect(new Map(bins.result.map((s) => [s.breakdown_value, s.aggregated_value]))).toEqual(expected);
    const variants = await run({ events: [{ id: '$pageview' }], breakdown: '$feature/beta', display: 'ActionsTable' });
    expect(Object.fromEntries(variants.result.map((s) => [s.breakdown_value, s.aggregated_value]))).toEqual({
      test: pageviews.filter((e) => e.properties['$feature/beta'] === 'test').length,
      control: pageviews.filter((e) => e.properties['$feature/beta'] === 'control').length,
    });
    const byId = await run({
      events: [{ id: '$pageview' }],
      breakdown: 'distinct_id',
      breakdown_type: 'event_metadata',
      breakdown_limit: 3,
      display: 'ActionsTable',
    });
    expect(byId.result).toHaveLength(4);
    expect(byId.result[3]!.breakdown_value).toBe(BREAKDOWN_OTHER);
    expect(byId.result.reduce((a, s) => a + s.aggregated_value!, 0)).toBe(pageviews.length);
  });

  it('HogQL: an aggregate as the math, an expression as the breakdown, a condition as a filter', async () => {
    const pageviews = EVENTS.filter((e) => e.event === '$pageview' && inRange(e));
    const total = await run({ events: [{ id: '$pageview', math: 'hogql', math_hogql: 'sum(properties.price) / count()' }], display: 'BoldNumber' });
    expect(total.result[0]!.aggregated_value).toBeCloseTo(pageviews.reduce((a, e) => a + Number(e.properties['price']), 0) / pageviews.length, 6);
    const expensive = await run({
      events: [{ id: '$pageview' }],
      properties: [{ key: "properties.price >= 50 and person.properties.plan != 'free'", type: 'hogql' }],
    });
    expect(expensive.result[0]!.count).toBe(pageviews.filter((e) => Number(e.properties['price']) >= 50 && e.personProperties['plan'] !== 'free').length);
    const banded = await run({
      events: [{ id: '$pageview' }],
      breakdown: "if(properties.price >= 50, 'high', 'low')",
      breakdown_type: 'hogql',
      display: 'ActionsTable',
    });
    expect(Object.fromEntries(banded.result.map((r) => [r.breakdown_value, r.aggregated_value]))).toEqual({
      high: pageviews.filter((e) => Number(e.properties['price']) >= 50).length,
      low: pageviews.filter((e) => Number(e.properties['price']) < 50).length,
    });
    await expect(run({ events: [{ id: '$pageview' }], properties: [{ key: 'sleep(1)', type: 'hogql' }] })).rejects.toThrow(
      /Unsupported function call 'sleep\(\.\.\.\)'/,
    );
    await expect(run({ events: [{ id: '$pageview', math: 'hogql', math_hogql: 'sum(lower(event))' }] })).rejects.toMatchObject({
      code: 'invalid_hogql',
      attr: 'math_hogql',
      message: expect.stringContaining('The HogQL expression "sum(lower(event))" cannot be evaluated on these events'),
    });
  });

  it('answers the same query from the cache until refresh', async () => {
    const cached = createQueryService({ db: stores.db, ch, cacheTtlMs: 60_000 });
    const filter = parseTrendFilter({ events: [{ id: 'late' }] });
    const first = await cached.run('TrendsQuery', project, filter, NOW);
    expect(first).toMatchObject({ is_cached: false });
    await insertEvents(ch, [testEventRow({ event: 'late', atMs: NOW - HOUR, uuid: randomUUID() })]);
    const second = await cached.run('TrendsQuery', project, filter, NOW + 1000);
    expect(second).toMatchObject({ is_cached: true, last_refresh: first.last_refresh });
    expect(second.result[0]!.count).toBe(0);
    const refreshed = await cached.run('TrendsQuery', project, filter, NOW + 2000, { refresh: true });
    expect(refreshed).toMatchObject({ is_cached: false, last_refresh: new Date(NOW + 2000).toISOString() });
    expect(refreshed.result[0]!.count).toBe(1);
  });
});
