import { createTestStores, insertCohort, insertJourneys, type JourneyPeople, type TestStores } from '@sightline/testkit';
import type { PropertyGroup } from '@sightline/properties';
import { resolveQueryDateRange } from '../common/date-range';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelFilter } from './funnel-filter';
import { funnelTrendSeries, type FunnelTrendPeriod, type FunnelTrendSeries } from './funnel-trends';

/**
 * Funnel trends (`funnel_viz_type: trends`), ported from PostHog's
 * posthog/hogql_queries/insights/funnels/test/test_funnel_trends.py and test_funnel_trends_udf.py
 * (the UDF answers). Each case has its own team; every journey is written once, before all.
 */
const STEPS = [
  { id: 'step one', order: 0 },
  { id: 'step two', order: 1 },
  { id: 'step three', order: 2 },
];
const base = { insight: 'FUNNELS', funnel_viz_type: 'trends', display: 'ActionsLineGraph', interval: 'day', events: STEPS };

const at = (timestamp: string, event: string, properties?: Record<string, unknown>) => ({ event, timestamp, ...(properties ? { properties } : {}) });

const SAMPLE: JourneyPeople = {
  user_one: [at('2021-05-01', 'step one'), at('2021-05-03', 'step two'), at('2021-05-05', 'step three')],
  user_two: [at('2021-05-02', 'step one'), at('2021-05-04', 'step two')],
  user_three: [at('2021-05-06', 'step one')],
  user_four: [at('2021-05-06', 'step none')],
  user_five: [at('2021-05-01 01:00', 'step one'), at('2021-05-01 02:00', 'step two'), at('2021-05-01 03:00', 'step three')],
  user_six: [at('2021-05-01', 'step one'), at('2021-05-03', 'step two'), at('2021-05-05', 'step three')],
  user_seven: [at('2021-05-02', 'step one'), at('2021-05-04', 'step two')],
  user_eight: [],
};
const ONE_RUN: JourneyPeople = {
  user_one: [at('2021-05-01 00:00', 'step one'), at('2021-05-01 01:00', 'step two'), at('2021-05-01 02:00', 'step three')],
};
const MULTIPLE_PERIODS: JourneyPeople = {
  user_one: [
    at('2021-05-01 01:00', 'step one'),
    at('2021-05-01 02:00', 'step two'),
    at('2021-05-01 03:00', 'step three'),
    at('2021-05-03 01:00', 'step one'),
    at('2021-05-03 02:00', 'step two'),
    at('2021-05-04 11:00', 'step one'),
    at('2021-05-04 12:00', 'step two'),
    at('2021-05-04 13:00', 'step three'),
  ],
  user_two: [at('2021-05-04 18:00', 'step one')],
};
const FROM_TO_STEP: JourneyPeople = {
  user_one: [at('2021-05-01 01:00', 'step one'), at('2021-05-02 02:00', 'step two'), at('2021-05-02 03:00', 'step three')],
  user_two: [at('2021-05-01 01:00', 'step one')],
  user_three: [at('2021-05-02 02:00', 'step two'), at('2021-05-02 03:00', 'step three')],
  user_four: [at('2021-05-02 01:00', 'step one'), at('2021-05-02 02:00', 'step two')],
};
const browser = (b: string) => ({ $browser: b });
const BROWSERS: JourneyPeople = {
  user_one: [
    at('2021-05-01', 'step one', browser('Chrome')),
    at('2021-05-03', 'step two', browser('Chrome')),
    at('2021-05-05', 'step three', browser('Chrome')),
  ],
  user_two: [
    at('2021-05-02', 'step one', browser('Chrome')),
    at('2021-05-03', 'step two', browser('Chrome')),
    at('2021-05-05', 'step three', browser('Chrome')),
  ],
  user_three: [
    at('2021-05-03', 'step one', browser('Safari')),
    at('2021-05-04', 'step two', browser('Safari')),
    at('2021-05-05', 'step three', browser('Safari')),
  ],
};
const second = (s: number, event: string, day = 1) => at(`2021-05-0${day} 00:00:${String(s).padStart(2, '0')}`, event);
const TEN_SECONDS = { funnel_window_interval: 10, funnel_window_interval_unit: 'second', date_from: '2021-05-01 00:00:00', date_to: '2021-05-13 23:59:59' };
const EXCLUDE_0_1 = { exclusions: [{ id: 'exclusion', type: 'events', funnel_from_step: 0, funnel_to_step: 1 }] };
const TWO_STEPS = { events: STEPS.slice(0, 2) };

/** An event `days` days and `hours` hours after 10:00 on `start` (test_funnel_unordered.py's `start_date + timedelta(...)`). */
const after = (start: string, days: number, event: string, hours = 0) =>
  at(new Date(Date.parse(`${start}T10:00:00Z`) + days * 86_400_000 + hours * 3_600_000).toISOString(), event);
const daysOf = (start: string, days: number[], event: string, hours = 0) => days.map((d) => after(start, d, event, hours));
const range = (from: number, to: number, step = 1) => Array.from({ length: Math.ceil((to - from) / step) }, (_, i) => from + i * step);
/** Events 1 and 2 once each, one and two hours after day `day`'s 10:00, for every user. */
const endOfWindow = (start: string, day: number) => [after(start, day, 'event 1', 1), after(start, day, 'event 2', 2)];
const THREE_EVENTS = [
  { id: 'event 1', type: 'events', order: 0 },
  { id: 'event 2', type: 'events', order: 1 },
  { id: 'event 3', type: 'events', order: 2 },
];

/** team id → journeys (and person properties) written before all. */
const TEAMS: Record<number, { people: JourneyPeople; personProperties?: Record<string, Record<string, unknown>> }> = {
  101: { people: { 'user a': [at('2021-06-06 21:00', 'Step one')] } },
  102: { people: { 'user a': [at('2021-06-07 19:00', 'step one')] } },
  103: { people: {} },
  104: { people: ONE_RUN },
  105: { people: { user_one: [at('2020-05-01 00:00', 'step one'), at('2020-05-01 01:00', 'step two'), at('2020-05-01 02:00', 'step three')] } },
  106: { people: SAMPLE },
  107: {
    people: {
      user_eight: [at('2021-05-20 10:00', 'step one'), at('2021-05-20 10:01', 'step two'), at('2021-05-20 10:02', 'step three')],
    },
  },
  108: {
    people: {
      user_one: [...ONE_RUN.user_one!, at('2021-05-01 13:00', 'step one'), at('2021-05-01 14:00', 'step two'), at('2021-05-01 15:00', 'step three')],
    },
  },
  109: { people: { user_one: [at('2021-05-01 01:00', 'step three'), at('2021-05-01 02:00', 'step two'), at('2021-05-01 03:00', 'step one')] } },
  110: { people: MULTIPLE_PERIODS },
  111: { people: FROM_TO_STEP },
  112: {
    people: {
      user_one: [
        at('2021-05-01 01:00', 'step one'),
        at('2021-05-01 02:00', 'step three'),
        at('2021-05-01 03:00', 'step two'),
        at('2021-05-03 01:00', 'step two'),
        at('2021-05-03 02:00', 'step one'),
        at('2021-05-04 11:00', 'step three'),
        at('2021-05-04 12:00', 'step one'),
        at('2021-05-04 13:00', 'step two'),
      ],
      user_two: [at('2021-05-04 18:00', 'step one')],
    },
  },
  113: {
    people: {
      user_one: [
        at('2021-05-01 01:00', 'step one'),
        at('2021-05-01 02:00', 'step two'),
        at('2021-05-01 03:00', 'step three'),
        at('2021-05-03 01:00', 'step one'),
        at('2021-05-03 02:00', 'step two'),
        at('2021-05-03 02:30', 'blah'),
        at('2021-05-03 03:00', 'step three'),
        at('2021-05-04 11:00', 'step one'),
        at('2021-05-04 12:00', 'step two'),
        at('2021-05-04 13:00', 'step three'),
      ],
      user_two: [at('2021-05-04 18:00', 'step one'), at('2021-05-04 18:20', 'blah'), at('2021-05-04 19:00', 'step two')],
    },
  },
  114: { people: BROWSERS },
  115: {
    people: {
      user_one: [at('2021-05-01', 'step one'), at('2021-05-03', 'step two'), at('2021-05-05', 'step three')],
      user_two: [at('2021-05-02', 'step one'), at('2021-05-03', 'step two'), at('2021-05-05', 'step three')],
      user_three: [at('2021-05-03', 'step one'), at('2021-05-04', 'step two'), at('2021-05-05', 'step three')],
    },
    personProperties: { user_one: browser('Chrome'), user_two: browser('Chrome'), user_three: browser('Safari') },
  },
  116: {
    people: {
      user_one: [at('2021-05-01 10:00', 'step one'), at('2021-05-01 11:00', 'step two'), at('2021-05-01 12:00', 'step three')],
      user_two: [at('2021-05-01 01:00', 'step one'), at('2021-05-01 02:00', 'step two'), at('2021-05-01 03:00', 'step three')],
      user_three: [at('2021-05-01 01:00', 'step one'), at('2021-05-01 10:00', 'step two'), at('2021-05-01 11:00', 'step three')],
      user_eight: [],
    },
  },
  117: {
    people: {
      user_one: [at('2021-05-01 10:00', 'step one'), at('2021-05-01 11:00', 'step two'), at('2021-05-01 12:00', 'step three')],
      user_two: [at('2021-05-01 10:00', 'step one'), at('2021-05-01 11:00', 'step two'), at('2021-05-01 14:00', 'step three')],
    },
  },
  118: { people: { user_one: [at('2021-05-01', 'step one', browser("test''123")), at('2021-05-03', 'step two', browser("test''123"))] } },
  119: {
    people: {
      user_one: [
        second(0, 'step one'),
        second(1, 'exclusion'),
        second(31, 'step two'),
        at('2021-05-01 01:00:00', 'step one'),
        at('2021-05-01 01:00:29', 'step two'),
      ],
    },
  },
  120: {
    people: {
      person1: [at('2021-05-01 01:00', 'user signed up'), at('2021-05-01 02:00', 'paid')],
      person2: [at('2021-05-01 03:00', 'user signed up'), at('2021-05-01 03:30', 'x'), at('2021-05-01 04:00', 'paid')],
      person3: [at('2021-05-01 05:00', 'user signed up'), at('2021-05-01 06:00', 'x')],
      person4: [at('2021-05-01 07:00', 'user signed up'), at('2021-05-02 08:00', 'x')],
    },
  },
  121: { people: { user_one: [second(0, 'step one'), second(1, 'exclusion'), second(31, 'step one')] } },
  122: { people: { user_one: [second(0, 'step one'), second(31, 'step one'), second(32, 'exclusion')] } },
  123: { people: { user_one: [second(0, 'step one'), second(1, 'step one'), second(2, 'exclusion')] } },
  124: {
    people: {
      user_one: [
        second(0, 'step one'),
        second(1, 'step two'),
        second(3, 'step three'),
        second(4, 'step one'),
        second(5, 'step two'),
        second(6, 'exclusion'),
        second(7, 'step three'),
      ],
    },
  },
  125: { people: { user_one: [second(0, 'step one'), second(1, 'step two'), second(4, 'step one', 2), second(5, 'exclusion', 2), second(6, 'step two', 2)] } },
  126: { people: { user_one: [second(0, 'step one'), second(1, 'exclusion'), second(2, 'step two'), second(4, 'step one', 2), second(6, 'step two', 2)] } },
  127: { people: { user_one: [second(0, 'step one'), second(30, 'step one', 2), second(31, 'exclusion', 2), second(32, 'step two', 2)] } },
  128: { people: { user_one: [second(0, 'step one'), second(30, 'step one', 2), second(31, 'exclusion', 2)] } },
  129: { people: { user_one: [second(0, 'step one'), second(1, 'step two'), second(4, 'step one', 2), second(5, 'step two', 2), second(6, 'exclusion', 2)] } },
  130: { people: { user_one: [second(0, 'step one'), second(11, 'exclusion'), second(12, 'step one'), second(13, 'exclusion'), second(14, 'step two')] } },
  131: {
    people: {
      user_excluded: [second(0, 'step one'), { ...second(1, 'exclusion'), properties: { exclude_me: 'true' } }, second(2, 'step two')],
      user_excluded_also: [second(0, 'step one'), { ...second(1, 'exclusion'), properties: { exclude_me: 'yes' } }, second(2, 'step two')],
      user_first_step: [second(0, 'step one')],
      user_included: [second(0, 'step one'), { ...second(1, 'exclusion'), properties: { exclude_me: 'false' } }, second(2, 'step two')],
    },
  },
  132: { people: { only_second_step: [at('2021-05-02', 'added to cart')], only_first_step: [at('2021-05-03', 'user signed up')] } },
  133: { people: { 'user a': [at('2021-06-07 19:00', 'step one'), at('2021-06-07 20:00', 'step three'), at('2021-06-07 21:00', 'step two')] } },
  134: { people: { user_one: [second(0, 'step one'), second(11, 'exclusion'), second(12, 'step two')] } },
  135: {
    people: {
      many_other_events: [
        at('2024-01-02', 'first', { bd: 'one' }),
        at('2024-01-03', 'first', { bd: 'two' }),
        at('2024-01-04', 'unmatched', { bd: 'one' }),
        at('2024-01-05', 'unmatched', { bd: 'two' }),
        at('2024-01-06', 'second', { bd: 'one' }),
        at('2024-01-07', 'second', { bd: 'two' }),
      ],
    },
  },
  137: { people: { user_one: [at('2020-05-01 00:00', 'step one'), at('2020-05-01 01:00', 'step two'), at('2020-05-01 02:00', 'step three')] } },
  138: {
    people: {
      user_one: [
        { ...second(0, 'step one'), properties: browser('Chrome') },
        { ...second(1, 'step one'), properties: browser('Safari') },
        { ...second(14, 'step two'), properties: browser('Chrome') },
        { ...second(0, 'step one', 2), properties: browser('Chrome') },
        { ...second(1, 'step two', 2), properties: browser('Safari') },
        { ...second(14, 'step two', 2), properties: browser('Chrome') },
      ],
    },
  },
  139: {
    people: {
      user_one: [
        { ...second(0, 'step one'), properties: browser('Chrome') },
        { ...second(1, 'step two'), properties: browser('Chrome') },
        { ...second(2, 'step three'), properties: browser('Safari') },
        { ...second(0, 'step one', 2), properties: browser('Safari') },
        { ...second(1, 'step two', 2), properties: browser('Safari') },
        { ...second(2, 'step three', 2), properties: browser('Chrome') },
      ],
    },
  },
  // test_funnel_unordered.py's unordered trends (event 3 on given days, events 1 and 2 at the end).
  140: {
    people: {
      user_1: [...daysOf('2024-03-01', range(0, 8), 'event 3'), ...endOfWindow('2024-03-01', 7)],
      user_2: [...daysOf('2024-03-01', range(0, 8, 2), 'event 3'), ...endOfWindow('2024-03-01', 7)],
      user_3: [...daysOf('2024-03-01', range(0, 8, 4), 'event 3'), ...endOfWindow('2024-03-01', 7)],
      user_4: [after('2024-03-01', 0, 'event 3'), ...endOfWindow('2024-03-01', 7)],
      user_5: endOfWindow('2024-03-01', 7),
    },
  },
  141: {
    people: {
      user_1: [...daysOf('2024-03-01', range(0, 8), 'event 3'), after('2024-03-01', 7, 'event 1', 1)],
      user_2: [...daysOf('2024-03-01', range(0, 8), 'event 3'), after('2024-03-01', 7, 'event 1', 1), after('2024-03-01', 7, 'event 2', 2)],
    },
  },
  142: {
    people: {
      user_1: [
        ...daysOf('2024-12-01', range(0, 8), 'event 3'),
        ...daysOf('2024-12-01', range(0, 4), 'event 2', 1),
        ...daysOf('2024-12-01', range(0, 2), 'event 1', 2),
      ],
    },
  },
  143: {
    people: {
      user_1: [...daysOf('2024-12-01', range(0, 31), 'event 3'), ...endOfWindow('2024-12-01', 30)],
      user_2: [
        ...daysOf(
          '2024-12-01',
          range(0, 31, 7).flatMap((i) => range(0, 7, 3).map((j) => i + j)),
          'event 3',
        ),
        ...endOfWindow('2024-12-01', 30),
      ],
      user_3: [
        ...daysOf(
          '2024-12-01',
          range(0, 31, 7).flatMap((i) => range(0, 7, 4).map((j) => i + j)),
          'event 3',
        ),
        ...endOfWindow('2024-12-01', 30),
      ],
      user_4: [...daysOf('2024-12-01', range(0, 31, 7), 'event 3'), ...endOfWindow('2024-12-01', 30)],
      user_5: [...daysOf('2024-12-01', range(0, 31, 14), 'event 3'), ...endOfWindow('2024-12-01', 30)],
    },
  },
};

/** The cohort case reads persons' own properties: its team (1, a project of the test stores) gets person rows. */
const COHORT_TEAM = 1;
const COHORT_PEOPLE: JourneyPeople = {
  user_one: [at('2021-05-01', 'step one'), at('2021-05-03', 'step two'), at('2021-05-05', 'step three')],
  user_two: [at('2021-05-02', 'step one'), at('2021-05-03', 'step two'), at('2021-05-05', 'step three')],
  user_three: [at('2021-05-03', 'step one'), at('2021-05-04', 'step two'), at('2021-05-05', 'step three')],
};
let cohortId: number;

let stores: TestStores;
let service: TrendsService;
const NOW = Date.parse('2021-06-20T12:00:00Z');

beforeAll(async () => {
  stores = await createTestStores('funnel_trends');
  service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
  // No person rows: every case reads the events (person properties are frozen on them).
  await Promise.all(
    Object.entries(TEAMS).map(([team, t]) =>
      insertJourneys(stores, t.people, { teamId: Number(team), personProperties: t.personProperties, createPeople: false }),
    ),
  );
  await insertJourneys(stores, COHORT_PEOPLE, {
    teamId: COHORT_TEAM,
    personProperties: { user_one: { key: 'value' }, user_two: { key: 'value' }, user_three: browser('Safari') },
  });
  cohortId = await insertCohort(stores.db, COHORT_TEAM, {
    isStatic: false,
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'key', value: 'value', type: 'person' }] }] } },
  });
}, 60_000);
afterAll(() => stores.close());

/** The funnel trend's series of periods as PostHog's runner summarises them (`just_summarize=True`). */
async function funnelTrendsOf(
  teamId: number,
  body: Record<string, unknown>,
  options: { nowMs?: number; timezone?: string } = {},
): Promise<FunnelTrendSeries[]> {
  const filter = parseFunnelFilter(body);
  const nowMs = options.nowMs ?? NOW;
  const earliest = async () => {
    const rows = await stores.ch
      .query({
        query: 'SELECT toUnixTimestamp64Milli(min(timestamp)) AS ms FROM events WHERE team_id = {team:UInt64}',
        query_params: { team: teamId },
        format: 'JSONEachRow',
      })
      .then((r) => r.json<{ ms: string }>());
    return Number(rows[0]!.ms);
  };
  const range = resolveQueryDateRange({
    dateFrom: filter.date_from,
    dateTo: filter.date_to,
    interval: filter.interval,
    timezone: options.timezone ?? 'UTC',
    weekStartDay: 0,
    nowMs,
    explicitDate: filter.explicit_date,
    earliestEventMs: filter.date_from === 'all' ? await earliest() : null,
  });
  const noPorts = () => {
    throw new Error('not used by these cases');
  };
  const properties: PropertyGroup = { type: 'AND', values: [filter.properties] };
  const series = await funnelTrendSeries(stores.ch, {
    filter,
    properties,
    range,
    ports: { teamId, nowMs, actionMatch: noPorts, cohortMembership: noPorts, hogql: noPorts },
  });
  return series;
}

async function summarize(teamId: number, body: Record<string, unknown>, options: { nowMs?: number; timezone?: string } = {}): Promise<FunnelTrendPeriod[]> {
  const series = await funnelTrendsOf(teamId, body, options);
  expect(series).toHaveLength(1);
  return series[0]!.periods;
}

const counts = (periods: FunnelTrendPeriod[]) => periods.map((p) => [p.reached_from_step_count, p.reached_to_step_count, p.conversion_rate]);

async function legacy(teamId: number, body: Record<string, unknown>, nowMs = NOW, timezone = 'UTC') {
  return (await service.runFunnel({ id: teamId, timezone }, parseFunnelFilter(body), nowMs)).result as {
    data: number[];
    days: string[];
    labels: string[];
    count: number;
    breakdown_value?: unknown;
  }[];
}

describe('funnel trends (test_funnel_trends.py, test_funnel_trends_udf.py)', () => {
  it('test_no_event_in_period (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-06-07 00:00:00', date_to: '2021-06-13 23:59:59', funnel_window_days: 7 };
    expect(await summarize(101, body)).toHaveLength(7);
    expect((await legacy(101, body))[0]!.days[0]).toBe('2021-06-07');
  });

  it.each(['US/Pacific', 'UTC'])('test_only_one_user_reached_one_step %s (test_funnel_trends.py)', async (timezone) => {
    const body = { ...base, date_from: '2021-06-07 00:00:00', date_to: '2021-06-13 23:59:59', funnel_window_days: 7 };
    const periods = await summarize(102, body, { timezone });
    expect(periods.map((p) => p.timestamp)).toEqual(['2021-06-07', '2021-06-08', '2021-06-09', '2021-06-10', '2021-06-11', '2021-06-12', '2021-06-13']);
    expect(counts(periods)).toEqual([[1, 0, 0], ...Array.from({ length: 6 }, () => [0, 0, 0])]);
  });

  it('test_hour_interval (test_funnel_trends.py)', async () => {
    const body = { ...base, interval: 'hour', date_from: '2021-05-01 00:00:00', funnel_window_interval: 7 };
    expect(await summarize(103, body, { nowMs: Date.parse('2021-05-06T23:40:59Z') })).toHaveLength(144);
  });

  it('test_day_interval (test_funnel_trends.py)', async () => {
    const periods = await summarize(104, { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00', funnel_window_days: 7 });
    expect(periods).toHaveLength(7);
    expect(counts(periods)[0]).toEqual([1, 1, 100]);
  });

  it('test_week_interval (test_funnel_trends.py)', async () => {
    const periods = await summarize(104, {
      ...base,
      interval: 'week',
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-07 00:00:00',
      funnel_window_days: 7,
    });
    expect(periods).toHaveLength(2);
    expect(periods.map((p) => p.timestamp)).toEqual(['2021-04-25', '2021-05-02']);
    expect(counts(periods)[0]).toEqual([1, 1, 100]);
  });

  it.each(['US/Pacific', 'UTC'])('test_month_interval %s (test_funnel_trends.py)', async (timezone) => {
    const body = { ...base, interval: 'month', date_from: '2020-01-01 00:00:00', date_to: '2020-07-01 00:00:00', funnel_window_days: 7 };
    const periods = await summarize(timezone === 'UTC' ? 105 : 137, body, { timezone });
    expect(periods.map((p) => p.timestamp)).toEqual(['2020-01-01', '2020-02-01', '2020-03-01', '2020-04-01', '2020-05-01', '2020-06-01', '2020-07-01']);
    const converted = timezone === 'UTC' ? 4 : 3;
    expect(counts(periods)).toEqual(periods.map((_, i) => (i === converted ? [1, 1, 100] : [0, 0, 0])));
  });

  it('test_all_date_range (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: 'all', funnel_window_days: 7 };
    expect(await summarize(104, body, { nowMs: Date.parse('2021-05-20T13:01:01Z') })).toHaveLength(20);
  });

  it('test_all_results_for_day_interval (test_funnel_trends.py)', async () => {
    const periods = await summarize(106, { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00', funnel_window_days: 7 });
    expect(counts(periods)).toEqual([
      [3, 3, 100],
      [2, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
      [1, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('test_window_size_one_day (test_funnel_trends.py)', async () => {
    const periods = await summarize(106, { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00', funnel_window_interval: 1 });
    expect(counts(periods)).toEqual([
      [3, 1, 33.33],
      [2, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
      [1, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('test_period_not_final (test_funnel_trends.py)', async () => {
    // "now" is 2021-05-20 10:00: yesterday and today (to the end of the day).
    const body = { ...base, date_from: '2021-05-19 10:00:00', date_to: '2021-05-20 23:59:59', funnel_window_days: 1 };
    const periods = await summarize(107, body, { nowMs: Date.parse('2021-05-20T10:00:00Z') });
    expect(periods.map((p) => p.timestamp)).toEqual(['2021-05-19', '2021-05-20']);
    expect(counts(periods)).toEqual([
      [0, 0, 0],
      [1, 1, 100],
    ]);
  });

  it('test_two_runs_by_single_user_in_one_period (test_funnel_trends.py)', async () => {
    const periods = await summarize(108, { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-01 23:59:59', funnel_window_days: 1 });
    expect(counts(periods)).toEqual([[1, 1, 100]]);
  });

  it('test_steps_performed_in_period_but_in_reverse (test_funnel_trends.py)', async () => {
    const periods = await summarize(109, { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-01 23:59:59', funnel_window_days: 1 });
    expect(counts(periods)).toEqual([[1, 0, 0]]);
  });

  it('test_one_person_in_multiple_periods_and_windows (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-04 23:59:59', funnel_window_interval: 1 };
    expect(counts(await summarize(110, body))).toEqual([
      [1, 1, 100],
      [0, 0, 0],
      [1, 0, 0],
      [2, 1, 50],
    ]);
    expect((await legacy(110, body))[0]!.data).toEqual([100, 0, 0, 50]);
  });

  it('test_from_second_step (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-02 23:59:59', funnel_window_days: 3, funnel_from_step: 1 };
    expect(counts(await summarize(111, body))).toEqual([
      [1, 1, 100],
      [1, 0, 0],
    ]);
  });

  it('test_to_second_step (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-02 23:59:59', funnel_window_days: 3, funnel_to_step: 1 };
    expect(counts(await summarize(111, body))).toEqual([
      [2, 1, 50],
      [1, 1, 100],
    ]);
  });

  it('test_one_person_in_multiple_periods_and_windows_in_unordered_funnel (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-04 23:59:59', funnel_window_interval: 1, funnel_order_type: 'unordered' };
    expect(counts(await summarize(112, body))).toEqual([
      [1, 1, 100],
      [0, 0, 0],
      [1, 0, 0],
      [2, 1, 50],
    ]);
  });

  it('test_one_person_in_multiple_periods_and_windows_in_strict_funnel (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-04 23:59:59', funnel_window_days: 1, funnel_order_type: 'strict' };
    expect(counts(await summarize(113, body))).toEqual([
      [1, 1, 100],
      [0, 0, 0],
      [1, 0, 0],
      [2, 1, 50],
    ]);
  });

  const thirteenDays = { ...base, date_from: '2021-05-01 00:00:00', date_to: '2021-05-13 23:59:59', funnel_window_days: 7 };
  const zeros = (n: number) => Array.from({ length: n }, () => 0);

  it('test_funnel_step_breakdown_event (test_funnel_trends.py)', async () => {
    const result = await legacy(114, { ...thirteenDays, breakdown_type: 'event', breakdown: '$browser' });
    expect(result.map((r) => [r.breakdown_value, r.data])).toEqual([
      [['Chrome'], [100, 100, ...zeros(11)]],
      [['Safari'], [0, 0, 100, ...zeros(10)]],
    ]);
  });

  it('test_funnel_step_breakdown_event_with_breakdown_limit (test_funnel_trends.py)', async () => {
    const result = await legacy(114, { ...thirteenDays, breakdown_limit: 1, breakdown_type: 'event', breakdown: '$browser' });
    expect(result.map((r) => [r.breakdown_value, r.data])).toEqual([[['Chrome'], [100, 100, ...zeros(11)]]]);
  });

  it('test_funnel_step_breakdown_person (test_funnel_trends.py)', async () => {
    const result = await legacy(115, { ...thirteenDays, breakdown_type: 'person', breakdown: '$browser' });
    expect(result.map((r) => [r.breakdown_value, r.data])).toEqual([
      [['Chrome'], [100, 100, ...zeros(11)]],
      [['Safari'], [0, 0, 100, ...zeros(10)]],
    ]);
  });

  it.each(['all_events', 'first_touch', 'last_touch', 'step'])('test_funnel_step_breakdown_empty %s (test_funnel_trends.py)', async (attribution) => {
    const body = {
      ...thirteenDays,
      breakdown_type: 'hogql',
      breakdown: "IF(distinct_id = 'user_two', NULL, 'foo')",
      breakdown_attribution_type: attribution,
      ...(attribution === 'step' ? { breakdown_attribution_value: 1 } : {}),
    };
    const result = await legacy(114, body);
    expect(result.map((r) => [r.breakdown_value, r.data])).toEqual([
      [[''], [0, 100, ...zeros(11)]],
      [['foo'], [100, 0, 100, ...zeros(10)]],
    ]);
  });

  it('test_timezones_trends (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-04-30 00:00:00', date_to: '2021-05-07 00:00:00', funnel_window_days: 7 };
    expect(counts(await summarize(116, body))[1]).toEqual([3, 3, 100]);
    const pacific = counts(await summarize(116, body, { timezone: 'US/Pacific' }));
    expect(pacific[0]).toEqual([2, 2, 100]);
    expect(pacific[1]!.slice(0, 2)).toEqual([1, 1]);
  });

  it('test_trend_for_hour_based_conversion_window (test_funnel_trends.py)', async () => {
    const body = { ...base, funnel_window_interval: 3, funnel_window_interval_unit: 'hour', date_from: '2021-05-01 00:00:00' };
    const periods = await summarize(117, body, { nowMs: Date.parse('2021-05-06T23:40:59Z') });
    expect(periods.map((p) => p.conversion_rate)).toEqual([50, 0, 0, 0, 0, 0]);
  });

  it('test_parses_breakdown_correctly (test_funnel_trends.py)', async () => {
    const result = await legacy(118, { ...thirteenDays, ...TWO_STEPS, breakdown_type: 'event', breakdown: '$browser' });
    expect(result).toHaveLength(1);
    expect(result[0]!.breakdown_value).toEqual(["test''123"]);
  });

  it('test_short_exclusions (test_funnel_trends.py)', async () => {
    const body = {
      ...thirteenDays,
      ...TWO_STEPS,
      ...EXCLUDE_0_1,
      funnel_window_interval: 30,
      funnel_window_interval_unit: 'second',
      breakdown_type: 'event',
      breakdown: '$browser',
    };
    const result = await legacy(119, body);
    expect(result).toHaveLength(1);
    expect(result[0]!.data).toEqual([100, ...zeros(12)]);
  });

  it('test_funnel_exclusion_no_end_event (test_funnel_trends.py)', async () => {
    const body = {
      ...base,
      events: [
        { id: 'user signed up', type: 'events', order: 0 },
        { id: 'paid', type: 'events', order: 1 },
      ],
      funnel_window_interval: 1,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-14 00:00:00',
      exclusions: [{ id: 'x', type: 'events', funnel_from_step: 0, funnel_to_step: 1 }],
    };
    const result = await legacy(120, body);
    expect(result).toHaveLength(1);
    expect(result[0]!.data).toEqual([50, ...zeros(13)]);
  });

  const exclusionCase = (teamId: number, body: Record<string, unknown>) =>
    summarize(teamId, { ...base, ...TEN_SECONDS, ...TWO_STEPS, ...EXCLUDE_0_1, ...body });

  it('test_funnel_exclusion_multiple_possible_no_end_event1 (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(121, {}))[0]).toEqual([1, 0, 0]);
  });

  it('test_funnel_exclusion_multiple_possible_no_end_event2 (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(122, {}))[0]).toEqual([1, 0, 0]);
  });

  it('test_funnel_exclusion_multiple_possible_no_end_event3 (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(123, {}))[0]).toEqual([0, 0, 0]);
  });

  it('test_exclusion_after_goal (test_funnel_trends.py)', async () => {
    const periods = await exclusionCase(124, { events: STEPS, exclusions: [{ id: 'exclusion', type: 'events', funnel_from_step: 1, funnel_to_step: 2 }] });
    expect(counts(periods)[0]!.slice(0, 2)).toEqual([1, 1]);
  });

  it('test_exclusion_multiday_completion_on_first_day (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(125, {})).slice(0, 2)).toEqual([
      [1, 1, 100],
      [0, 0, 0],
    ]);
  });

  it('test_exclusion_multiday_completion_on_second_day (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(126, {})).slice(0, 2)).toEqual([
      [0, 0, 0],
      [1, 1, 100],
    ]);
  });

  it('test_exclusion_multiday_partial_first_day_exclusion_second_day (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(127, {})).slice(0, 2)).toEqual([
      [0, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('test_exclusion_multiday_partial_first_day_open_exclusion_second_day (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(128, {})).slice(0, 2)).toEqual([
      [1, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('test_open_exclusion_multiday (test_funnel_trends.py)', async () => {
    const periods = await exclusionCase(129, { events: STEPS, exclusions: [{ id: 'exclusion', type: 'events', funnel_from_step: 1, funnel_to_step: 2 }] });
    expect(counts(periods).slice(0, 2)).toEqual([
      [1, 0, 0],
      [0, 0, 0],
    ]);
  });

  it('test_excluded_completion (test_funnel_trends.py)', async () => {
    expect(counts(await exclusionCase(130, {}))[0]).toEqual([0, 0, 0]);
  });

  it('test_excluded_after_time_expires (test_funnel_trends_udf.py)', async () => {
    expect(counts(await exclusionCase(134, {}))[0]).toEqual([1, 0, 0]);
  });

  it('test_exclusion_with_property_filter (test_funnel_trends.py)', async () => {
    const exclusion = (value: string) => ({
      kind: 'EventsNode',
      event: 'exclusion',
      properties: [{ key: 'exclude_me', value, operator: 'exact', type: 'event' }],
      funnelFromStep: 0,
      funnelToStep: 1,
    });
    const body = {
      kind: 'FunnelsQuery',
      dateRange: { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 23:59:59' },
      interval: 'day',
      series: [
        { kind: 'EventsNode', event: 'step one', name: 'step one' },
        { kind: 'EventsNode', event: 'step two', name: 'step two' },
      ],
      funnelsFilter: {
        funnelVizType: 'trends',
        funnelWindowInterval: 10,
        funnelWindowIntervalUnit: 'second',
        exclusions: [exclusion('true'), exclusion('yes')],
      },
    };
    const { funnelsQueryToFilter } = await import('./funnels-query-node');
    const periods = await summarize(131, funnelsQueryToFilter(body));
    expect(periods).toHaveLength(7);
    expect(counts(periods)[0]!.slice(0, 2)).toEqual([2, 1]);
  });

  it('test_funnel_with_long_interval_no_first_step (test_funnel_trends.py)', async () => {
    const body = {
      ...base,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-07 00:00:00',
      events: [
        { id: 'user signed up', order: 0 },
        { id: 'added to cart', order: 1 },
      ],
      funnel_window_interval: 3122064000,
      funnel_window_interval_unit: 'second',
    };
    const periods = counts(await summarize(132, body));
    expect(periods).toEqual(periods.map((_, i) => (i === 2 ? [1, 0, 0] : [0, 0, 0])));
  });

  it('test_funnel_trends_with_out_of_order_completion (test_funnel_trends.py)', async () => {
    const body = { ...base, date_from: '2021-06-07 00:00:00', date_to: '2021-06-13 23:59:59', funnel_window_days: 7, funnel_from_step: 0, funnel_to_step: 1 };
    const periods = await summarize(133, body);
    expect(periods).toHaveLength(7);
    expect(periods.slice(0, 2).map((p) => p.reached_to_step_count)).toEqual([1, 0]);
  });

  it('test_different_prop_val_in_strict_filter (test_funnel_trends_udf.py)', async () => {
    const body = {
      ...base,
      events: [
        { id: 'first', order: 0 },
        { id: 'second', order: 1 },
      ],
      breakdown: 'bd',
      breakdown_type: 'event',
      date_from: '2024-01-01',
      date_to: '2024-01-08',
      funnel_order_type: 'strict',
    };
    const result = await legacy(135, body, Date.parse('2024-02-01T00:00:00Z'));
    expect(result.map(({ breakdown_value, count, data, days, labels }) => ({ breakdown_value, count, data, days, labels }))).toEqual([
      {
        breakdown_value: ['one'],
        count: 8,
        data: zeros(8),
        days: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06', '2024-01-07', '2024-01-08'],
        labels: ['1-Jan-2024', '2-Jan-2024', '3-Jan-2024', '4-Jan-2024', '5-Jan-2024', '6-Jan-2024', '7-Jan-2024', '8-Jan-2024'],
      },
    ]);
  });

  it('test_funnel_trend_cohort_breakdown (test_funnel_trends.py)', async () => {
    const result = await legacy(COHORT_TEAM, { ...thirteenDays, breakdown_type: 'cohort', breakdown: [cohortId] });
    expect(result.map((r) => [r.breakdown_value, r.data])).toEqual([['test cohort', [100, 100, ...zeros(11)]]]);
  });

  /** Per breakdown value, the entered and converted counts of each period (PostHog's test filters the summary so). */
  const byValue = (series: FunnelTrendSeries[]) =>
    Object.fromEntries(
      series.map((s) => [
        (s.breakdown_value as string[]).join(','),
        { from: s.periods.map((p) => p.reached_from_step_count), to: s.periods.map((p) => p.reached_to_step_count) },
      ]),
    );

  it('test_breakdown_with_attribution (test_funnel_trends.py, UDF answers)', async () => {
    const body = {
      ...base,
      ...TWO_STEPS,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-02 23:59:59',
      funnel_window_interval: 30,
      funnel_window_interval_unit: 'second',
      breakdown_type: 'event',
      breakdown: '$browser',
    };
    expect(byValue(await funnelTrendsOf(138, body))).toEqual({ Chrome: { from: [1, 1], to: [1, 1] } });
    expect(byValue(await funnelTrendsOf(138, { ...body, breakdown_attribution_type: 'all_events' }))).toEqual({
      Chrome: { from: [1, 1], to: [1, 1] },
      Safari: { from: [1, 0], to: [0, 0] },
    });
    expect(byValue(await funnelTrendsOf(138, { ...body, breakdown_attribution_type: 'step', breakdown_attribution_value: 0 }))).toEqual({
      Chrome: { from: [1, 1], to: [1, 1] },
      Safari: { from: [1, 0], to: [1, 0] },
    });
    expect(byValue(await funnelTrendsOf(138, { ...body, breakdown_attribution_type: 'step', breakdown_attribution_value: 1 }))).toEqual({
      Chrome: { from: [1, 1], to: [1, 1] },
      Safari: { from: [1, 1], to: [0, 1] },
    });
  });

  it('test_breakdown_with_attribution_2 (test_funnel_trends.py, UDF answers)', async () => {
    const body = {
      ...base,
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-02 23:59:59',
      funnel_window_interval: 30,
      funnel_window_interval_unit: 'second',
      breakdown_type: 'event',
      breakdown: '$browser',
      funnel_from_step: 0,
      funnel_to_step: 2,
    };
    expect(byValue(await funnelTrendsOf(139, body))).toEqual({ Chrome: { from: [1, 1], to: [1, 1] } });
    expect(byValue(await funnelTrendsOf(139, { ...body, breakdown_attribution_type: 'all_events' }))).toEqual({
      Chrome: { from: [1, 0], to: [0, 0] },
      Safari: { from: [0, 1], to: [0, 0] },
    });
    expect(byValue(await funnelTrendsOf(139, { ...body, breakdown_attribution_type: 'step', breakdown_attribution_value: 0 }))).toEqual({
      Chrome: { from: [1, 0], to: [1, 0] },
      Safari: { from: [0, 1], to: [0, 1] },
    });
    expect(byValue(await funnelTrendsOf(139, { ...body, breakdown_attribution_type: 'step', breakdown_attribution_value: 2 }))).toEqual({
      Chrome: { from: [1, 1], to: [0, 1] },
      Safari: { from: [1, 1], to: [1, 0] },
    });
  });

  it('test_different_prop_val_in_strict_filter, all events (test_funnel_trends_udf.py)', async () => {
    const body = {
      ...base,
      events: [
        { id: 'first', order: 0 },
        { id: 'second', order: 1 },
      ],
      breakdown: 'bd',
      breakdown_type: 'event',
      date_from: '2024-01-01',
      date_to: '2024-01-08',
      funnel_order_type: 'strict',
      breakdown_attribution_type: 'all_events',
    };
    const result = await legacy(135, body, Date.parse('2024-02-01T00:00:00Z'));
    expect(result).toHaveLength(2);
    expect(result.every((r) => r.data.every((d) => d === 0))).toBe(true);
  });

  describe('unordered funnel trends (test_funnel_unordered.py)', () => {
    const unordered = { ...base, events: THREE_EVENTS, funnel_order_type: 'unordered' };
    const nowMs = Date.parse('2025-01-01T00:00:00Z');

    it('test_unordered_trend (test_funnel_unordered.py)', async () => {
      const body = { ...unordered, funnel_window_days: 8, date_from: '2024-03-01', date_to: '2024-03-08' };
      const periods = await summarize(140, body, { nowMs });
      expect(periods.map((p) => p.timestamp.slice(0, 10))).toEqual(range(1, 9).map((d) => `2024-03-0${d}`));
      expect(counts(periods)).toEqual([
        [4, 4, 100],
        [1, 1, 100],
        [2, 2, 100],
        [1, 1, 100],
        [3, 3, 100],
        [1, 1, 100],
        [2, 2, 100],
        [5, 1, 20],
      ]);
    });

    it('test_unordered_trend_second_step (test_funnel_unordered.py)', async () => {
      const body = { ...unordered, funnel_window_days: 8, funnel_from_step: 1, funnel_to_step: 2, date_from: '2024-03-01', date_to: '2024-03-08' };
      expect(counts(await summarize(141, body, { nowMs }))).toEqual(Array.from({ length: 8 }, () => [2, 1, 50]));
    });

    it('test_unordered_trend_one_user (test_funnel_unordered.py)', async () => {
      const body = { ...unordered, funnel_window_days: 8, funnel_from_step: 1, funnel_to_step: 2, date_from: '2024-12-01', date_to: '2024-12-08' };
      const periods = await summarize(142, body, { nowMs });
      expect(periods.map((p) => p.reached_from_step_count)).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
      expect(periods.map((p) => p.reached_to_step_count)).toEqual([1, 1, 0, 0, 0, 0, 0, 0]);
    });

    it('test_unordered_trend_weekly_monthly (test_funnel_unordered.py)', async () => {
      const body = { ...unordered, funnel_window_interval: 40, funnel_window_interval_unit: 'day', date_from: '2024-12-01', date_to: '2024-12-31' };
      const monthly = await summarize(143, { ...body, interval: 'month' }, { nowMs });
      expect([monthly[0]!.reached_from_step_count, monthly[0]!.reached_to_step_count]).toEqual([5, 5]);
      const weekly = await summarize(143, { ...body, interval: 'week' }, { nowMs });
      expect(weekly.map((p) => p.timestamp.slice(0, 10))).toEqual(['2024-12-01', '2024-12-08', '2024-12-15', '2024-12-22', '2024-12-29']);
      expect(weekly.map((p) => [p.reached_from_step_count, p.reached_to_step_count])).toEqual([
        [5, 5],
        [4, 4],
        [5, 5],
        [4, 4],
        [5, 5],
      ]);
    });
  });
});
