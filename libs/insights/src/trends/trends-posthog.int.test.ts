import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import {
  createTestStores,
  freePort,
  insertJourneys,
  journeyPersonUuid,
  journeyTimeMs,
  type JourneyEvent,
  type JourneyPeople,
  type TestStores,
} from '@sightline/testkit';
import { BREAKDOWN_NULL, BREAKDOWN_OTHER } from '../common/events-sql';
import { parseTrendFilter } from './trend-filter';
import type { TrendSeries } from './trends.query';
import { createTrendsService, type TrendsService } from './trends.service';
import { type QueryProjectRow } from '../common/query-project';

/**
 * Cases of PostHog's trends query-runner tests
 * (posthog/hogql_queries/insights/trends/test/test_trends.py), each with its data, query and
 * asserted numbers, on the real ClickHouse engine. Every case has its own project, so all data
 * goes in once.
 */
const NULL = BREAKDOWN_NULL;

/** The PostHog test's `freeze_time` instant. */
const at = (timestamp: string) => journeyTimeMs(timestamp);

/** test_trends.py `_create_events`: one person with two distinct ids, "sign up" and "no events". */
function createEvents(useTime: boolean): JourneyPeople {
  const [first, second, third] = useTime ? ['2019-12-24 03:45:34', '2020-01-01 00:06:34', '2020-01-02 16:34:34'] : ['2019-12-24', '2020-01-01', '2020-01-02'];
  const e = (event: string, timestamp: string, properties: Record<string, unknown> = {}, distinctId?: string): JourneyEvent => ({
    event,
    timestamp,
    properties,
    ...(distinctId ? { distinctId } : {}),
  });
  return {
    blabla: [
      e('sign up', first!, { $some_property: 'value', $bool_prop: true }),
      e('sign up', second!, { $some_property: 'value', $bool_prop: false }),
      e('sign up', second!, { $bool_prop: false }, 'anonymous_id'),
      e('sign up', second!),
      e('sign up', third!, { $some_property: 'other_value', $some_numerical_prop: 80 }),
      e('no events', third!),
    ],
  };
}
const createEventsOptions = { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } };

/** test_trends.py `_create_multiple_people`: four persons watching movies. */
const MULTIPLE_PEOPLE: JourneyPeople = {
  person1: [{ event: 'watched movie', timestamp: '2020-01-01 12:00:00', properties: { order: '1', name: '1' } }],
  person2: [
    { event: 'watched movie', timestamp: '2020-01-01 12:00:00', properties: { order: '1', name: '2' } },
    { event: 'watched movie', timestamp: '2020-01-02 12:00:00', properties: { order: '2', name: '2' } },
    { event: 'watched movie', timestamp: '2020-01-02 12:00:00', properties: { order: '2', name: '2' } },
  ],
  person3: [
    { event: 'watched movie', timestamp: '2020-01-01 12:00:00', properties: { order: '1', name: '3' } },
    { event: 'watched movie', timestamp: '2020-01-02 12:00:00', properties: { order: '2', name: '3' } },
    { event: 'watched movie', timestamp: '2020-01-03 12:00:00', properties: { order: '2', name: '3' } },
  ],
  person4: [{ event: 'watched movie', timestamp: '2020-01-05 12:00:00', properties: { order: '1', name: '4' } }],
};
const MULTIPLE_PEOPLE_PROPERTIES = { personProperties: Object.fromEntries(['person1', 'person2', 'person3', 'person4'].map((p) => [p, { name: p }])) };

/** test_trends.py `_test_events_with_dates`: person_1's "event_name" at each date. */
const eventsWithDates = (dates: string[]): JourneyPeople => ({
  person_1: dates.map((timestamp) => ({ event: 'event_name', timestamp, properties: { $browser: 'Safari' } })),
});

/** test_trends.py `_create_active_users_events`. */
const ACTIVE_USERS: JourneyPeople = {
  p0: [
    { event: '$pageview', timestamp: '2020-01-03T11:00:00Z', properties: { key: 'val' } },
    { event: '$pageview', timestamp: '2020-01-03T12:00:00Z', properties: { key: 'val' } },
    { event: '$pageview', timestamp: '2020-01-12T12:00:00Z', properties: { key: 'val' } },
  ],
  p1: [
    { event: '$pageview', timestamp: '2020-01-09T12:00:00Z', properties: { key: 'bor' } },
    { event: '$pageview', timestamp: '2020-01-10T12:00:00Z', properties: { key: 'bor' } },
    { event: '$pageview', timestamp: '2020-01-11T12:00:00Z', properties: { key: 'val' } },
  ],
  p2: [
    { event: '$pageview', timestamp: '2020-01-09T12:00:00Z', properties: { key: 'val' } },
    { event: '$pageview', timestamp: '2020-01-11T12:00:00Z', properties: { key: 'bor' } },
  ],
};
const ACTIVE_USERS_PROPERTIES = { personProperties: { p0: { name: 'p1' }, p1: { name: 'p1' }, p2: { name: 'p2' } } };

/** test_trends.py `_create_event_count_per_actor_events` (groups by `$group_0`). */
const COUNT_PER_ACTOR: JourneyPeople = {
  blabla: [
    { event: 'viewed video', timestamp: '2020-01-01 00:06:02', properties: { color: 'red', $group_0: 'bouba' }, distinctId: 'anonymous_id' },
    { event: 'viewed video', timestamp: '2020-01-01 00:06:02', properties: { $group_0: 'bouba' } },
    { event: 'viewed video', timestamp: '2020-01-05 19:06:34', properties: { color: 'blue', $group_0: 'bouba' } },
  ],
  tintin: [
    { event: 'sign up', timestamp: '2020-01-01 00:06:02', properties: { $group_0: 'kiki' } },
    { event: 'viewed video', timestamp: '2020-01-04 23:17:00', properties: { color: 'red', $group_0: 'kiki' } },
    { event: 'viewed video', timestamp: '2020-01-05 19:06:34', properties: { color: 'red' } },
    { event: 'viewed video', timestamp: '2020-01-05 19:06:34', properties: { color: 'red', $group_0: 'bouba' } },
    { event: 'viewed video', timestamp: '2020-01-05 19:06:34', properties: { color: 'blue', $group_0: 'kiki' } },
  ],
  murmur: [{ event: 'sign up', timestamp: '2020-01-03 19:06:34', properties: { $group_0: 'kiki' } }],
  reeree: [{ event: 'viewed video', timestamp: '2020-01-01 00:06:02', properties: { color: 'blue', $group_0: 'bouba' } }],
};
const COUNT_PER_ACTOR_OPTIONS = {
  personProperties: { blabla: { fruit: 'mango' }, tintin: { fruit: 'mango' }, murmur: {}, reeree: { fruit: 'tomato' } },
  distinctIds: { blabla: ['anonymous_id'] },
};

/** test_trends.py `_create_maths_events`: `_create_events` and someone_else's "sign up"s with some_number. */
function mathsEvents(values: unknown[]): JourneyPeople {
  return {
    ...createEvents(false),
    someone_else: [...values, null].map((value) => ({ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { some_number: value } })),
  };
}

/** Each case's data, by a name of the case's own; each gets its own project. */
const DATASETS = {
  events: { people: createEvents(false), options: createEventsOptions },
  eventsWithTime: { people: createEvents(true), options: createEventsOptions },
  eventsWithTimeLateSignUp: {
    people: { ...createEvents(true), blabla: [...createEvents(true)['blabla']!, { event: 'sign up', timestamp: '2020-01-02 23:30:00' }] },
    options: createEventsOptions,
  },
  eventsNewUser: {
    people: {
      ...createEvents(false),
      new_user: [{ event: 'sign up', timestamp: '2020-01-03T13:00:01Z', properties: { $some_property: 'value', $bool_prop: false } }],
    },
    options: { ...createEventsOptions, personProperties: { ...createEventsOptions.personProperties, new_user: { $some_prop: 'some_val' } } },
  },
  eventsOtherValue: {
    people: {
      ...createEvents(false),
      blabla: [...createEvents(false)['blabla']!, { event: 'sign up', timestamp: '2020-01-02T13:01:01Z', properties: { $some_property: 'other_value' } }],
    },
    options: createEventsOptions,
  },
  multiplePeople: { people: MULTIPLE_PEOPLE, options: MULTIPLE_PEOPLE_PROPERTIES },
  emptyCohort: { people: { p1: [{ event: '$pageview', timestamp: '2020-01-04T12:00:00Z' }] }, options: { personProperties: { p1: { name: 'p1' } } } },
  twoCohorts: {
    people: Object.fromEntries(['p1', 'p2', 'p3'].map((p) => [p, [{ event: '$pageview', timestamp: '2020-01-02T12:00:00Z', properties: { key: 'val' } }]])),
    options: { personProperties: { p1: { key: 'value' }, p2: { key_2: 'value_2' }, p3: { key_2: 'value_2' } } },
  },
  janeJohnJill: {
    people: {
      John: [0, 1].map(() => ({ event: 'sign up', timestamp: '2020-01-01 00:06:34', properties: { $some_property: 'value', $browser: 'Chrome' } })),
      Jill: [0, 1, 2].map(() => ({ event: 'sign up', timestamp: '2020-01-01 00:06:34', properties: { $some_property: 'value', $browser: 'Safari' } })),
      Jane: [0, 1].map(() => ({ event: 'sign up', timestamp: '2020-01-02 00:06:34', properties: { $some_property: 'value', $browser: 'Safari' } })),
    },
    options: { personProperties: { Jane: { name: 'Jane' }, John: { name: 'John' }, Jill: { name: 'Jill' } } },
  },
  cohortFilter: {
    people: {
      person_1: [{ event: 'event_name', timestamp: '2020-01-04T10:00:00Z', properties: { $browser: 'Safari' } }],
      person_2: [
        { event: 'event_name', timestamp: '2020-01-04T10:00:00Z', properties: { $browser: 'Chrome' } },
        { event: 'event_name', timestamp: '2020-01-04T10:00:00Z', properties: { $browser: 'Safari' } },
      ],
    },
    options: { personProperties: { person_1: { name: 'John' }, person_2: { name: 'Jane' } } },
  },
  multipleBreakdowns: {
    people: {
      blabla: [
        ...[
          ['Chrome', '1'],
          ['Chrome', '2'],
          ['Safari', '1'],
          ['Safari', '1'],
          ['Safari', '2'],
          ['Safari', ''],
        ].map(([browser, variant]) => ({
          event: 'sign up',
          timestamp: '2020-01-01 00:06:34',
          properties: { $some_property: 'value', $browser: browser, $variant: variant },
        })),
        ...[
          ['Safari', '2'],
          ['Safari', '2'],
          ['Chrome', ''],
        ].map(([browser, variant]) => ({
          event: 'sign up',
          timestamp: '2020-01-02 00:06:34',
          properties: { $some_property: 'value', $browser: browser, $variant: variant },
        })),
      ],
    },
    options: { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  activeUsers: { people: ACTIVE_USERS, options: ACTIVE_USERS_PROPERTIES },
  countPerActor: { people: COUNT_PER_ACTOR, options: COUNT_PER_ACTOR_OPTIONS },
  weeklyActiveGroups: {
    people: {
      ...COUNT_PER_ACTOR,
      blabla: [...COUNT_PER_ACTOR['blabla']!, { event: 'viewed video', timestamp: '2020-01-19 00:00:00', properties: { $group_0: 'bouba' } }],
    },
    options: COUNT_PER_ACTOR_OPTIONS,
  },
  weekInterval: { people: eventsWithDates(['2020-11-01', '2020-11-10', '2020-11-11', '2020-11-18']), options: {} },
  monthInterval: { people: eventsWithDates(['2020-07-10', '2020-07-30', '2020-10-18']), options: {} },
  monthRounding: { people: eventsWithDates(['2020-06-02', '2020-07-30']), options: {} },
  today: { people: eventsWithDates(['2020-11-01 10:20:00', '2020-11-01 10:22:00', '2020-11-01 10:25:00']), options: {} },
  yesterday: { people: eventsWithDates(['2020-11-01 05:20:00', '2020-11-01 10:22:00', '2020-11-01 10:25:00']), options: {} },
  lastHours: { people: eventsWithDates(['2020-11-01 05:20:00', '2020-11-01 10:22:00', '2020-11-01 10:25:00', '2020-11-02 08:25:00']), options: {} },
  last7days: { people: eventsWithDates(['2020-11-01 05:20:00', '2020-11-02 10:22:00', '2020-11-04 10:25:00', '2020-11-05 08:25:00']), options: {} },
  last14days: {
    people: eventsWithDates([
      '2020-11-01 05:20:00',
      '2020-11-02 10:22:00',
      '2020-11-04 10:25:00',
      '2020-11-05 08:25:00',
      '2020-11-05 08:25:00',
      '2020-11-10 08:25:00',
    ]),
    options: {},
  },
  novemberSix: {
    people: eventsWithDates([
      '2020-11-01 05:20:00',
      '2020-11-11 10:22:00',
      '2020-11-24 10:25:00',
      '2020-11-05 08:25:00',
      '2020-11-05 08:25:00',
      '2020-11-10 08:25:00',
    ]),
    options: {},
  },
  last90days: {
    people: eventsWithDates([
      '2020-09-01 05:20:00',
      '2020-10-05 05:20:00',
      '2020-10-20 05:20:00',
      '2020-11-01 05:20:00',
      '2020-11-11 10:22:00',
      '2020-11-24 10:25:00',
      '2020-11-05 08:25:00',
      '2020-11-05 08:25:00',
      '2020-11-10 08:25:00',
    ]),
    options: {},
  },
  yearToDate: {
    people: eventsWithDates([
      '2020-01-01 05:20:00',
      '2020-01-11 10:22:00',
      '2020-02-24 10:25:00',
      '2020-02-05 08:25:00',
      '2020-03-05 08:25:00',
      '2020-05-10 08:25:00',
    ]),
    options: {},
  },
  allTime: {
    people: eventsWithDates(['2020-01-01 05:20:00', '2020-01-11 10:22:00', '2020-02-24 10:25:00', '2020-02-05 08:25:00', '2020-03-05 08:25:00']),
    options: {},
  },
  customRange: {
    people: eventsWithDates(['2020-01-05 05:20:00', '2020-01-05 10:22:00', '2020-01-04 10:25:00', '2020-01-11 08:25:00', '2020-01-09 08:25:00']),
    options: {},
  },
  breakdownAggregate: {
    people: {
      blabla: [
        ...['Chrome', 'Chrome', 'Safari', 'Safari', 'Safari'].map((browser) => ({
          event: 'sign up',
          timestamp: '2020-01-01 00:06:34',
          properties: { $some_property: 'value', $browser: browser },
        })),
        ...['Safari', 'Safari'].map((browser) => ({
          event: 'sign up',
          timestamp: '2020-01-02 00:06:34',
          properties: { $some_property: 'value', $browser: browser },
        })),
      ],
    },
    options: { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  multipleBreakdownsAggregate: {
    people: {
      blabla: [
        ...[
          ['Chrome', '1'],
          ['Chrome', '2'],
          ['Safari', '1'],
          ['Safari', '1'],
          ['Safari', '2'],
        ].map(([browser, variant]) => ({
          event: 'sign up',
          timestamp: '2020-01-01 00:06:34',
          properties: { $some_property: 'value', $browser: browser, $variant: variant },
        })),
        ...[0, 1].map(() => ({
          event: 'sign up',
          timestamp: '2020-01-02 00:06:34',
          properties: { $some_property: 'value', $browser: 'Safari', $variant: '2' },
        })),
      ],
    },
    options: { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  mathProp: {
    people: {
      blabla: [
        ...[1, 1, 1, 2, 3].map((v) => ({ event: 'sign up', timestamp: '2020-01-01 00:06:34', properties: { $some_property: 'value', $math_prop: v } })),
        ...[4, 4].map((v) => ({ event: 'sign up', timestamp: '2020-01-02 00:06:34', properties: { $some_property: 'value', $math_prop: v } })),
      ],
    },
    options: { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  mathFunc: {
    people: {
      ...Object.fromEntries(
        Array.from({ length: 20 }, (_, i) => [
          `person${i}`,
          [0, 1].map(() => ({ event: 'sign up', timestamp: '2020-01-01 00:06:34', properties: { $some_property: `value_${i}`, $math_prop: 1 } })),
        ]),
      ),
      person21: [{ event: 'sign up', timestamp: '2020-01-01 00:06:34', properties: { $some_property: 'value_21', $math_prop: 25 } }],
    },
    options: {},
  },
  mathsSmall: { people: mathsEvents([2, 3, 5.5, 7.5]), options: createEventsOptions },
  mathsRange: { people: mathsEvents(Array.from({ length: 100 }, (_, i) => 101 + i)), options: createEventsOptions },
  mathsNonNumber: { people: mathsEvents([2, 'x', 8]), options: createEventsOptions },
  dauFiltering: { people: { ...createEvents(false), someone_else: [{ event: 'sign up', timestamp: '2020-01-02' }] }, options: createEventsOptions },
  weeklyActiveBreakdown: {
    people: {
      p1: ['2020-01-09', '2020-01-10', '2020-01-11'].map((d) => ({ event: '$pageview', timestamp: `${d}T12:00:00Z`, properties: { key: 'val' } })),
      p2: ['2020-01-09', '2020-01-11'].map((d) => ({ event: '$pageview', timestamp: `${d}T12:00:00Z`, properties: { key: 'val' } })),
    },
    options: { personProperties: { p1: { name: 'p1' }, p2: { name: 'p2' } } },
  },
  weeklyActiveFiltering: {
    people: Object.fromEntries(
      ['p1', 'p2', 'p3'].map((p, i) => [p, [{ event: '$pageview', timestamp: `2020-01-${String(9 + i).padStart(2, '0')}T12:00:00Z` }]]),
    ),
    options: { personProperties: { p1: { name: 'person-1' }, p2: { name: 'person-2' }, p3: { name: 'person-3' } } },
  },
  breakdownPersons: {
    people: Object.fromEntries(
      ['person1', 'person2', 'person3'].map((p) => [p, [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val' } }]]),
    ),
    options: { personProperties: { person1: { email: 'test@posthog.com' }, person2: { email: 'test@gmail.com' }, person3: {} } },
  },
  breakdownLimit: {
    people: { blabla: Array.from({ length: 25 }, (_, i) => ({ event: 'sign up', timestamp: '2020-01-02', properties: { $some_property: i } })) },
    options: {},
  },
  eventMetadata: {
    people: {
      p1: [0, 1].map(() => ({ event: '$pageview', timestamp: '2020-01-04T12:00:00Z' })),
      p2: [{ event: '$pageview', timestamp: '2020-01-04T12:00:00Z' }],
    },
    options: { createPeople: false },
  },
  breakdownProperties: {
    people: {
      blabla: [
        { event: 'sign up', timestamp: '2020-01-03T13:01:01Z', properties: { $current_url: 'first url', $browser: 'Firefox', $os: 'Mac' } },
        { event: 'sign up', timestamp: '2020-01-03T13:01:01Z', properties: { $current_url: 'first url', $browser: 'Chrome', $os: 'Windows' } },
        { event: 'sign up', timestamp: '2020-01-04T13:01:01Z', properties: { $current_url: 'second url', $browser: 'Firefox', $os: 'Mac' } },
        { event: 'sign up', timestamp: '2020-01-04T13:01:01Z', properties: { $current_url: 'second url', $browser: 'Chrome', $os: 'Windows' } },
      ],
    },
    options: { createPeople: false },
  },
  breakdownPropertiesNewFormat: {
    people: {
      blabla: [
        { event: 'sign up', timestamp: '2020-01-03T13:01:01Z', properties: { $current_url: 'first url', $browser: 'Firefox', $os: 'Windows' } },
        { event: 'sign up', timestamp: '2020-01-03T13:01:01Z', properties: { $current_url: 'first url', $browser: 'Chrome', $os: 'Mac' } },
      ],
      blabla1: [{ event: 'sign up', timestamp: '2020-01-04T13:01:01Z', properties: { $current_url: 'second url', $browser: 'Firefox', $os: 'Mac' } }],
      blabla2: [{ event: 'sign up', timestamp: '2020-01-04T13:01:01Z', properties: { $current_url: 'second url', $browser: 'Chrome', $os: 'Windows' } }],
    },
    options: { createPeople: false },
  },
  mauBreakdown: {
    people: Object.fromEntries(
      ['blabla', 'blabla2', 'blabla3'].map((p) => [p, ['2020-01-02T13:01:01Z', '2020-01-03T13:01:01Z'].map((timestamp) => ({ event: 'sign up', timestamp }))]),
    ),
    options: {
      personProperties: {
        blabla: { $some_prop: 'some_val', filter_prop: 'filter_val' },
        blabla2: { $some_prop: 'some_val3', filter_prop: 'filter_val2' },
        blabla3: { $some_prop: 'some_val2', filter_prop: 'filter_val' },
      },
    },
  },
  dauBreakdownPropFilter: {
    people: {
      ...createEvents(false),
      blabla: [
        ...createEvents(false)['blabla']!,
        { event: 'sign up', timestamp: '2020-01-02T13:01:01Z', properties: { $some_property: 'other_value', $os: 'Windows' } },
      ],
    },
    options: createEventsOptions,
  },
  clashingNames: {
    people: { blabla: [{ event: '$pageview', timestamp: '2020-01-03T12:00:00Z', properties: { $host: 'app.example.com' } }] },
    options: { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  partialPushdowns: {
    people: Object.fromEntries(
      ['person1', 'person2', 'person3', 'person32', 'person4', 'person5', 'person6'].map((p) => [
        p,
        [{ event: 'sign up', timestamp: '2020-05-01 00:00:00', properties: { key: 'val' } }],
      ]),
    ),
    options: {
      personProperties: {
        person1: { email: 'test@posthog.com', $os: 'ios', $browser: 'chrome' },
        person2: { email: 'test@gmail.com', $os: 'ios', $browser: 'safari' },
        person3: { email: 'test2@posthog.com', $os: 'android', $browser: 'chrome' },
        person32: { email: 'test2@posthog.com', $os: 'android', $browser: 'chrome' },
        person4: { email: 'test3@posthog.com', $os: 'android', $browser: 'safari' },
        person5: { email: 'test4@posthog.com', $os: 'android', $browser: 'safari' },
        person6: { email: 'test5@posthog.com', $os: 'android', $browser: 'safari' },
      },
    },
  },
  groups: {
    people: {
      person1: [
        {
          event: 'sign up',
          timestamp: '2020-01-02T12:00:00Z',
          properties: { key: 'oh', $group_0: 'org:7', $group_1: 'company:10' },
          groupProperties: { 0: { industry: 'finance' }, 1: { industry: 'finance' } },
        },
        { event: 'sign up', timestamp: '2020-01-02T12:00:01Z', properties: { key: 'uh', $group_0: 'org:5' }, groupProperties: { 0: { industry: 'finance' } } },
        {
          event: 'sign up',
          timestamp: '2020-01-02T12:00:02Z',
          properties: { key: 'uh', $group_0: 'org:6' },
          groupProperties: { 0: { industry: 'technology' } },
        },
      ],
    } as JourneyPeople,
    options: { createPeople: false },
  },
  groupsWithPersonFilter: {
    people: {
      person1: [{ event: 'sign up', timestamp: '2020-01-02T12:00:00Z', properties: { $group_0: 'org:5' }, groupProperties: { 0: { industry: 'finance' } } }],
      person2: [
        {
          event: 'sign up',
          timestamp: '2020-01-02T12:00:00Z',
          properties: { $group_0: 'org:6' },
          groupProperties: { 0: { industry: 'technology' } },
          personProperties: {},
        },
      ],
      // test_filtering_with_group_props
      person1b: [
        { event: '$pageview', timestamp: '2020-01-02T12:00:00Z', distinctId: 'person1', personProperties: { key: 'value' } },
        {
          event: '$pageview',
          timestamp: '2020-01-02T12:00:00Z',
          distinctId: 'person1',
          personProperties: { key: 'value' },
          properties: { $group_0: 'org:5' },
          groupProperties: { 0: { industry: 'finance' } },
        },
        {
          event: '$pageview',
          timestamp: '2020-01-02T12:00:00Z',
          distinctId: 'person1',
          personProperties: { key: 'value' },
          properties: { $group_0: 'org:6' },
          groupProperties: { 0: { industry: 'technology' } },
        },
        {
          event: '$pageview',
          timestamp: '2020-01-02T12:00:00Z',
          distinctId: 'person1',
          personProperties: { key: 'value' },
          properties: { $group_0: 'org:6', $group_1: 'company:10' },
          groupProperties: { 0: { industry: 'technology' }, 1: { industry: 'finance' } },
        },
        // test_filtering_with_group_props_event_with_no_group_data
        ...[0, 1, 2, 3].map(() => ({ event: 'no group', timestamp: '2020-01-02T12:00:00Z', distinctId: 'person1', personProperties: { key: 'value' } })),
      ],
    } as JourneyPeople,
    options: { createPeople: false, personProperties: { person1: { key: 'value' } } },
  },
  multipleGroups: {
    people: {
      person1: [
        {
          event: 'sign up',
          timestamp: '2020-01-02T12:00:00Z',
          properties: { $group_0: 'org:5', $group_2: 'company:6' },
          groupProperties: { 0: { industry: 'finance' }, 2: { name: 'six' } },
        },
        { event: 'sign up', timestamp: '2020-01-02T12:30:00Z', properties: { $group_2: 'company:6' }, groupProperties: { 2: { name: 'six' } } },
        { event: 'sign up', timestamp: '2020-01-02T13:00:00Z', properties: { $group_0: 'org:6' }, groupProperties: { 0: { industry: 'technology' } } },
        { event: 'sign up', timestamp: '2020-01-03T15:00:00Z', properties: { $group_2: 'company:5' }, groupProperties: { 2: { name: 'five' } } },
      ],
    } as JourneyPeople,
    options: {},
  },
  hourlyYesterday: {
    people: {
      person1: Array.from({ length: 24 }, (_, hour) =>
        Array.from({ length: hour }, () => ({ event: 'sign up', timestamp: `2020-01-02T${String(hour).padStart(2, '0')}:30:00Z` })),
      ).flat(),
    },
    options: {},
  },
  timezonesHourly: {
    people: {
      blabla: ['2020-01-04T22:01:01', '2020-01-05T07:01:01', '2020-01-05T08:01:01'].map((timestamp) => ({
        event: 'sign up',
        timestamp,
        properties: { $os: 'Mac' },
      })),
    },
    options: {},
  },
  timezonesDaily: {
    people: {
      blabla: ['2020-01-02T17:01:01', '2020-01-03T17:01:01', '2020-01-06T00:30:01'].map((timestamp) => ({
        event: 'sign up',
        timestamp,
        properties: { $os: 'Mac' },
      })),
    },
    options: {},
  },
  timezonesWeekly: {
    people: { blabla: ['2020-01-11T19:01:01', '2020-01-12T02:01:01', '2020-01-21T18:01:01'].map((timestamp) => ({ event: 'sign up', timestamp })) },
    options: {},
  },
  pacific: {
    people: {
      blabla: ['2022-11-03T01:01:01Z', '2022-11-10T01:01:01Z', '2022-11-17T08:30:01Z', '2022-11-24T08:30:01Z', '2022-11-30T08:30:01Z'].map((timestamp) => ({
        event: 'sign up',
        timestamp,
      })),
    },
    options: {},
  },
  sameDay: { people: { blabla: [{ event: 'sign up', timestamp: '2020-01-03T01:01:01Z' }] }, options: {} },
  groupProps: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-02T12:00:00Z', properties: { $group_0: 'org:5' }, groupProperties: { 0: { industry: 'finance' } } },
        { event: 'sign up', timestamp: '2020-01-02T13:00:00Z', properties: { $group_0: 'org:6' }, groupProperties: { 0: { industry: 'technology' } } },
        {
          event: 'sign up',
          timestamp: '2020-01-02T15:00:00Z',
          properties: { $group_0: 'org:7', $group_1: 'company:10' },
          groupProperties: { 0: { industry: 'finance' }, 1: { industry: 'finance' } },
        },
      ],
    } as JourneyPeople,
    options: {},
  },
  actionPersonProperties: {
    people: Object.fromEntries(['d1', 'd2', 'd3', 'd4'].map((d) => [d, [{ event: '$pageview', timestamp: '2020-01-02 16:34:34' }]])),
    options: {
      personProperties: {
        d1: { email: 'foo@example.com', bar: 'aa' },
        d2: { email: 'bar@example.com', bar: 'bb' },
        d3: { email: 'efg@example.com', bar: 'ab' },
        d4: { bar: 'aa' },
      },
    },
  },
  actionWithCohort: {
    people: {
      blabla: [
        { event: 'sign up', timestamp: '2020-01-02T12:00:00Z', properties: { $some_property: 'value' } },
        { event: 'sign up', timestamp: '2020-01-03T12:00:00Z', properties: { $some_property: 'value2' } },
      ],
      xyz: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { $some_property: 'value' } }],
    },
    options: { personProperties: { blabla: { $some_property: 'value', $bool_prop: 'x' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  actionProps: {
    people: {
      person1: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val', $current_url: '/some/page' } }],
      person2: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val', $current_url: '/some/page' } }],
      person3: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val', $current_url: '/another/page' } }],
    },
    options: {},
  },
  normalizeUrl: {
    people: {
      blabla: ['http://hogflix/first', 'http://hogflix/first/', 'http://hogflix/second'].map((url) => ({
        event: 'sign up',
        timestamp: '2020-01-02',
        properties: { $current_url: url },
      })),
    },
    options: {},
  },
  breakdownWithFilter: {
    people: {
      person1: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val' } }],
      person2: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'oh' } }],
    },
    options: { personProperties: { person1: { email: 'test@posthog.com' }, person2: { email: 'test@gmail.com' } } },
  },
  activeUsersFullWeek: {
    people: {
      p0: [{ event: '$pageview', timestamp: '2020-01-03T10:59:59Z', properties: { key: 'val' } }],
      p1: [{ event: '$pageview', timestamp: '2020-01-03T11:00:00Z', properties: { key: 'val' } }],
      p2: [{ event: '$pageview', timestamp: '2020-01-03T11:00:01Z', properties: { key: 'val' } }],
    },
    options: {},
  },
  countPerActorOrange: {
    people: { ...COUNT_PER_ACTOR, another_user: [{ event: 'viewed video', timestamp: '2020-01-03 19:06:34', properties: { color: 'orange' } }] },
    options: COUNT_PER_ACTOR_OPTIONS,
  },
  hogqlMath: {
    people: {
      blabla: [
        { event: 'sign up', timestamp: '2020-01-01 00:06:30', properties: { $session_id: 's1', x: 1 } },
        { event: 'sign up', timestamp: '2020-01-02 00:06:45', properties: { $session_id: 's5', x: 5 } },
      ],
    },
    options: { personProperties: { blabla: { $some_prop: 'some_val', number: 8 } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  actionWithProp: {
    people: { blabla: [{ event: 'sign up', timestamp: '2020-01-02T13:01:01Z', properties: { $current_url: 'https://posthog.com/feedback/1234' } }] },
    options: { personProperties: { blabla: { $some_prop: 'some_val' } }, distinctIds: { blabla: ['anonymous_id'] } },
  },
  breakdownWeeklyActiveAction: {
    people: {
      p1: ['2020-01-09', '2020-01-10', '2020-01-11'].map((d) => ({ event: '$pageview', timestamp: `${d}T12:00:00Z`, properties: { key: 'val' } })),
      p2: ['2020-01-09', '2020-01-11'].map((d) => ({ event: '$pageview', timestamp: `${d}T12:00:00Z`, properties: { key: 'val' } })),
      p3: ['2020-01-09', '2020-01-11'].map((d) => ({ event: '$pageview', timestamp: `${d}T12:00:00Z`, properties: { key: 'val' } })),
    },
    options: { personProperties: { p1: { name: 'p1' }, p2: { name: 'p2' }, p3: { name: 'p3' } } },
  },
  userPropsWithFilter: {
    people: {
      person1: [],
      person2: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val' } }],
      // create_person_distinct_id(person1 → person3) before the events: "person1" sends as person3.
      person3: [{ event: 'sign up', timestamp: '2020-01-04T12:00:00Z', properties: { key: 'val' }, distinctId: 'person1' }],
    },
    options: { personProperties: { person1: { email: 'test@posthog.com' }, person2: { email: 'test@gmail.com' }, person3: { email: 'test@gmail.com' } } },
  },
  // test_breakdown_with_filter_groups_person_on_events_v2: two persons, test_breakdown_d1's later
  // re-pointed to test_breakdown_d2's person (a person_distinct_id2 row written in beforeAll).
  groupsPersonOverride: {
    people: {
      d1: [
        { key: 'oh', group: 'org:7', industry: 'finance', at: '2020-01-02T12:00:00Z' },
        { key: 'uh', group: 'org:5', industry: 'finance', at: '2020-01-02T12:00:01Z' },
        { key: 'uh', group: 'org:6', industry: 'technology', at: '2020-01-02T12:00:02Z' },
      ].map(({ key, group, industry, at }) => ({
        event: 'sign up',
        timestamp: at,
        distinctId: 'test_breakdown_d1',
        properties: { key, $group_0: group, ...(group === 'org:7' ? { $group_1: 'company:10' } : {}) },
        groupProperties: { 0: { industry }, ...(group === 'org:7' ? { 1: { industry: 'finance' } } : {}) },
      })),
      d2: [
        {
          event: 'sign up',
          timestamp: '2020-01-02T12:00:02Z',
          distinctId: 'test_breakdown_d2',
          properties: { key: 'uh', $group_0: 'org:6' },
          groupProperties: { 0: { industry: 'technology' } },
        },
      ],
    } as JourneyPeople,
    options: { createPeople: false },
  },
  sameDayOverride: {
    people: Object.fromEntries(
      ['1', '2'].map((n) => [
        `p${n}`,
        [
          {
            event: 'sign up',
            timestamp: '2020-01-03T01:01:01Z',
            distinctId: `distinctid${n}`,
            properties: { $current_url: 'first url', $browser: 'Firefox', $os: 'Mac' },
          },
        ],
      ]),
    ),
    options: { createPeople: false },
  },
  sameDayLatestOverride: {
    people: Object.fromEntries(
      ['1', '2', '3'].map((n) => [
        `p${n}`,
        [
          {
            event: n === '2' ? 'some other event' : 'sign up',
            timestamp: '2020-01-03T01:01:01Z',
            distinctId: `distinctid${n}`,
            properties: { $current_url: 'first url', $browser: 'Firefox', $os: 'Mac' },
          },
        ],
      ]),
    ),
    options: { createPeople: false },
  },
  // test_no_props_*: no events at all, only a property definition of each type.
  noPropsString: { people: {}, options: {} },
  noPropsNumeric: { people: {}, options: {} },
  noPropsBoolean: { people: {}, options: {} },
} satisfies Record<string, { people: JourneyPeople; options: Parameters<typeof insertJourneys>[2] }>;
type Dataset = keyof typeof DATASETS;
/**
 * Datasets whose cases match persons to cohorts: only these get person rows. Every event carries
 * its person's id and properties (person-on-events), which is all the other cases read, and
 * persons are the slow part of the setup.
 */
const WITH_PERSONS: ReadonlySet<Dataset> = new Set<Dataset>([
  'events',
  'eventsWithTime',
  'eventsWithTimeLateSignUp',
  'multiplePeople',
  'twoCohorts',
  'janeJohnJill',
  'cohortFilter',
  'actionWithCohort',
  'breakdownWeeklyActiveAction',
]);

describe('trends as PostHog answers them (test_trends.py)', () => {
  let stores: TestStores;
  let trends: TrendsService;
  const teams = {} as Record<Dataset, number>;
  /** Cohort and action ids by `dataset:name`. */
  const cohorts: Record<string, number> = {};
  const actions: Record<string, number> = {};

  /**
   * PostHog's create_person_id_override_by_distinct_id: the distinct id now belongs to another
   * journey's person, at this version (the latest version wins).
   */
  const repointDistinctId = async (dataset: Dataset, distinctId: string, toPerson: string, version: number) => {
    await stores.ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [{ team_id: teams[dataset], distinct_id: distinctId, person_id: journeyPersonUuid(toPerson, teams[dataset]), is_deleted: 0, version }],
    });
  };

  beforeAll(async () => {
    stores = await createTestStores('trendsph');
    trends = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const name of Object.keys(DATASETS) as Dataset[]) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_trendsph_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
    }
    await Promise.all(
      (Object.keys(DATASETS) as Dataset[]).map((name) =>
        insertJourneys(stores, DATASETS[name].people, {
          ...DATASETS[name].options,
          teamId: teams[name],
          ...(WITH_PERSONS.has(name) ? {} : { createPeople: false }),
        }),
      ),
    );
    const person = (key: string, value: unknown) => ({ key, value, type: 'person' });
    const insertCohort = async (dataset: Dataset, name: string, groups: unknown[][]) => {
      const properties = { type: 'OR', values: groups.map((values) => ({ type: 'AND', values })) };
      const [row] = await stores.db.query<{ id: number }>('INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, $2, false, $3) RETURNING id', [
        teams[dataset],
        name,
        JSON.stringify({ properties }),
      ]);
      cohorts[`${dataset}:${name}`] = row!.id;
    };
    await insertCohort('multiplePeople', 'cohort1', [[person('name', 'person1')]]);
    await insertCohort('multiplePeople', 'cohort2', [[person('name', 'person2')]]);
    await insertCohort('multiplePeople', 'cohort3', [[person('name', 'person1')], [person('name', 'person2')]]);
    await insertCohort('twoCohorts', 'cohort_1', [[person('key', 'value')]]);
    await insertCohort('twoCohorts', 'cohort_2', [[person('key_2', 'value_2')]]);
    for (const [i, name] of ['Jane', 'John', 'Jill'].entries()) await insertCohort('janeJohnJill', `cohort${i + 1}`, [[person('name', name)]]);
    await insertCohort('cohortFilter', 'cohort1', [[person('name', 'Jane')]]);
    for (const dataset of ['eventsWithTime', 'eventsWithTimeLateSignUp'] as const) await insertCohort(dataset, 'cohort1', [[person('$some_prop', 'some_val')]]);
    // test_trends.py `_create_action`: an action of one step, the event of its name.
    const insertAction = async (dataset: Dataset, name: string, steps: unknown[]) => {
      const [row] = await stores.db.query<{ id: number }>('INSERT INTO actions (team_id, name, steps) VALUES ($1, $2, $3) RETURNING id', [
        teams[dataset],
        name,
        JSON.stringify(steps),
      ]);
      actions[`${dataset}:${name}`] = row!.id;
    };
    for (const dataset of ['events', 'dauFiltering', 'eventsOtherValue'] as const) await insertAction(dataset, 'sign up', [{ event: 'sign up' }]);
    await insertAction('multiplePeople', 'watched movie', [{ event: 'watched movie' }]);
    await insertAction('actionPersonProperties', '$pageview from non-internal', [
      { event: '$pageview', properties: [{ key: 'bar', type: 'person', value: 'a', operator: 'icontains' }] },
    ]);
    await insertCohort('actionWithCohort', 'cohort1', [[person('$some_property', 'value')]]);
    await insertAction('actionWithCohort', 'sign up', [
      { event: 'sign up', properties: [{ key: 'id', type: 'cohort', value: cohorts['actionWithCohort:cohort1'] }] },
    ]);
    await insertAction('activeUsers', '$pageview', [{ event: '$pageview' }]);
    await insertAction('breakdownPersons', 'sign up', [{ event: 'sign up', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' }] }]);
    await insertCohort('events', 'a', [[person('key', 'value')]]);
    for (const dataset of ['mathsSmall', 'mathsRange'] as const) await insertAction(dataset, 'sign up', [{ event: 'sign up' }]);
    await insertAction('actionWithProp', 'sign up', [
      { event: 'sign up', properties: [{ key: '$current_url', type: 'event', value: ['https://posthog.com/feedback/1234'], operator: 'exact' }] },
    ]);
    await insertCohort('breakdownWeeklyActiveAction', 'p1 or p2', [[{ key: 'name', operator: 'exact', value: ['p1', 'p2'], type: 'person' }]]);
    await insertAction('breakdownWeeklyActiveAction', '$pageview', [
      {
        event: '$pageview',
        properties: [
          { key: 'name', operator: 'exact', value: ['p1', 'p2', 'p3'], type: 'person' },
          { type: 'cohort', key: 'id', value: cohorts['breakdownWeeklyActiveAction:p1 or p2'] },
        ],
      },
    ]);
    await insertCohort('events', 'some_val', [[person('$some_prop', 'some_val')]]);
    await insertAction('events', 'sign up by a cohort member', [
      { event: 'sign up', properties: [{ key: 'id', value: cohorts['events:some_val'], type: 'cohort' }] },
    ]);
    for (const [dataset, propertyType] of [
      ['noPropsString', 'String'],
      ['noPropsNumeric', 'Numeric'],
      ['noPropsBoolean', 'Boolean'],
    ] as const) {
      await stores.db.query("INSERT INTO property_definitions (team_id, name, type, property_type) VALUES ($1, '$some_property', 1, $2)", [
        teams[dataset],
        propertyType,
      ]);
    }
    await repointDistinctId('groupsPersonOverride', 'test_breakdown_d1', 'd2', 1);
    await repointDistinctId('sameDayOverride', 'distinctid1', 'p2', 1);
    await insertAction('actionProps', 'sign up', [
      { event: 'sign up', url: '/some/page', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' }] },
    ]);
  }, 120_000);

  afterAll(async () => {
    await stores?.close();
  });

  const run = async (dataset: Dataset, now: string, body: Record<string, unknown>, project: Partial<QueryProjectRow> = {}): Promise<TrendSeries[]> =>
    (await trends.run({ id: teams[dataset], timezone: 'UTC', ...project }, parseTrendFilter(body), at(now))).result;
  const sum = (s: TrendSeries) => s.data!.reduce((a, b) => a + b, 0);
  const signUp = { events: [{ id: 'sign up' }] };

  it('test_trends_per_day (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:00:01Z', { date_from: '-7d', events: [{ id: 'sign up' }, { id: 'no events' }] });
    expect(r[0]!.label).toBe('sign up');
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.labels![5], r[0]!.data![5]]).toEqual(['1-Jan-2020', 3, '2-Jan-2020', 1]);
  });

  it('test_trends_per_day_48hours (test_trends.py)', async () => {
    const r = await run('events', '2020-01-03T13:00:01Z', { date_from: '-48h', interval: 'day', events: [{ id: 'sign up' }, { id: 'no events' }] });
    expect([r[0]!.data![1], r[0]!.labels![1]]).toEqual([1, '2-Jan-2020']);
  });

  it('test_trends_per_day_cumulative (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:00:01Z', { date_from: '-7d', display: 'ActionsLineGraphCumulative', ...signUp });
    expect(r[0]!.label).toBe('sign up');
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.labels![5], r[0]!.data![5]]).toEqual(['1-Jan-2020', 3, '2-Jan-2020', 4]);
  });

  it('test_trends_per_day_dau_cumulative (test_trends.py)', async () => {
    const r = await run('eventsNewUser', '2020-01-04T13:00:01Z', {
      date_from: '-7d',
      display: 'ActionsLineGraphCumulative',
      events: [{ id: 'sign up', math: 'dau' }],
    });
    expect(r[0]!.label).toBe('sign up');
    expect(r[0]!.labels!.slice(4, 7)).toEqual(['1-Jan-2020', '2-Jan-2020', '3-Jan-2020']);
    expect(r[0]!.data!.slice(4, 7)).toEqual([1, 1, 2]);
  });

  it('test_trends_groups_per_day (test_trends.py)', async () => {
    const r = await run('countPerActor', '2020-01-06T13:00:01Z', {
      date_from: '-7d',
      display: 'ActionsLineGraph',
      events: [{ id: 'viewed video', math: 'unique_group', math_group_type_index: 0 }],
    });
    expect(r[0]!.label).toBe('viewed video');
    expect(r[0]!.labels!.at(-1)).toBe('6-Jan-2020');
    expect(r[0]!.data).toEqual([0, 0, 1, 0, 0, 1, 2, 0]);
  });

  // Weekly active groups: each day counts the distinct $group_0 of the 7 days ending that day;
  // tintin's event without a group is not counted (3 on Jan 8 to 11 if it were).
  it('test_weekly_active_groups_daily (test_trends.py)', async () => {
    const r = await run('weeklyActiveGroups', '2020-01-20T00:00:00Z', {
      date_from: '2020-01-08',
      date_to: '2020-01-19',
      events: [{ id: 'viewed video', type: 'events', order: 0, math: 'weekly_active', math_group_type_index: 0 }],
    });
    expect(r[0]!.days).toEqual(Array.from({ length: 12 }, (_, i) => `2020-01-${String(8 + i).padStart(2, '0')}`));
    expect(r[0]!.data).toEqual([2, 2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1]);
  });

  // The same groups counted per day (dau with a group index is a groups math in PostHog's
  // trends/utils.py is_groups_math), and per week, where weekly active is per-interval.
  it('dau and monthly_active with math_group_type_index count groups (trends/utils.py is_groups_math)', async () => {
    const dau = await run('weeklyActiveGroups', '2020-01-20T00:00:00Z', {
      date_from: '2020-01-01',
      date_to: '2020-01-06',
      events: [{ id: 'viewed video', math: 'dau', math_group_type_index: 0 }],
    });
    expect(dau[0]!.data).toEqual([1, 0, 0, 1, 2, 0]);
    const monthly = await run('weeklyActiveGroups', '2020-01-20T00:00:00Z', {
      date_from: '2020-01-18',
      date_to: '2020-01-19',
      events: [{ id: 'viewed video', math: 'monthly_active', math_group_type_index: 0 }],
    });
    expect(monthly[0]!.data).toEqual([2, 2]);
  });

  it('test_trends_groups_per_day_cumulative (test_trends.py)', async () => {
    const r = await run('countPerActor', '2020-01-06T13:00:01Z', {
      date_from: '-7d',
      display: 'ActionsLineGraphCumulative',
      events: [{ id: 'viewed video', math: 'unique_group', math_group_type_index: 0 }],
    });
    expect(r[0]!.label).toBe('viewed video');
    expect(r[0]!.labels!.at(-1)).toBe('6-Jan-2020');
    expect(r[0]!.data).toEqual([0, 0, 1, 1, 1, 2, 2, 2]);
  });

  it('test_trends_breakdown_cumulative (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:00:01Z', {
      date_from: '-7d',
      display: 'ActionsLineGraphCumulative',
      events: [{ id: 'sign up', math: 'dau' }],
      breakdown: '$some_property',
    });
    expect(r.map((s) => [s.label, s.labels![4], s.data])).toEqual([
      ['value', '1-Jan-2020', [0, 0, 0, 0, 1, 1, 1, 1]],
      ['other_value', '1-Jan-2020', [0, 0, 0, 0, 0, 1, 1, 1]],
      [NULL, '1-Jan-2020', [0, 0, 0, 0, 1, 1, 1, 1]],
    ]);
  });

  it('test_trends_single_aggregate_dau (test_trends.py)', async () => {
    const week = await run('events', '2020-01-04T13:00:01Z', { display: 'ActionsTable', interval: 'week', events: [{ id: 'sign up', math: 'dau' }] });
    const day = await run('events', '2020-01-04T13:00:01Z', { display: 'ActionsTable', interval: 'day', events: [{ id: 'sign up', math: 'dau' }] });
    expect(week[0]!.aggregated_value).toBe(1);
    expect(day[0]!.aggregated_value).toBe(week[0]!.aggregated_value);
  });

  it('test_trends_any_event_total_count (test_trends.py)', async () => {
    const all = await run('events', '2020-01-04T13:00:01Z', { display: 'ActionsLineGraph', interval: 'day', events: [{ id: null, math: 'total' }] });
    const signUps = await run('events', '2020-01-04T13:00:01Z', { display: 'ActionsLineGraph', interval: 'day', events: [{ id: 'sign up', math: 'total' }] });
    expect([all[0]!.count, signUps[0]!.count]).toEqual([5, 4]);
  });

  it('test_trends_compare_day_interval_relative_range (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:00:01Z', { compare: 'true', date_from: '-7d', ...signUp });
    expect(r[0]!.label).toBe('sign up');
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.labels![5], r[0]!.data![5]]).toEqual(['1-Jan-2020', 3, '2-Jan-2020', 1]);
    expect(r[0]!.days).toEqual(['2019-12-28', '2019-12-29', '2019-12-30', '2019-12-31', '2020-01-01', '2020-01-02', '2020-01-03', '2020-01-04']);
    // The previous period ends on the current one's first day, so weekdays line up.
    expect(r[1]!.days).toEqual(['2019-12-21', '2019-12-22', '2019-12-23', '2019-12-24', '2019-12-25', '2019-12-26', '2019-12-27', '2019-12-28']);
    expect(r[1]!.label).toBe('sign up');
    expect([r[1]!.labels![3], r[1]!.data![3], r[1]!.labels![4], r[1]!.data![4]]).toEqual(['24-Dec-2019', 1, '25-Dec-2019', 0]);
    expect([r[0]!.compare_label, r[1]!.compare_label]).toEqual(['current', 'previous']);

    const noCompare = await run('events', '2020-01-04T13:00:01Z', { compare: 'false', ...signUp });
    expect(noCompare).toHaveLength(1);
    expect([noCompare[0]!.labels![4], noCompare[0]!.data![4], noCompare[0]!.labels![5], noCompare[0]!.data![5]]).toEqual(['1-Jan-2020', 3, '2-Jan-2020', 1]);
  });

  it('test_trends_compare_day_interval_fixed_range_single (test_trends.py)', async () => {
    const r = await run('eventsWithTime', '2020-01-02T20:17:00Z', { compare: 'true', date_from: '2020-01-02', interval: 'day', ...signUp });
    expect([r[0]!.days, r[0]!.data]).toEqual([['2020-01-02'], [1]]);
    expect([r[1]!.days, r[1]!.data]).toEqual([['2020-01-01'], [3]]);
  });

  it('test_trends_compare_hour_interval_relative_range (test_trends.py)', async () => {
    const r = await run('eventsWithTime', '2020-01-02T20:17:00Z', { compare: 'true', date_from: 'dStart', interval: 'hour', ...signUp });
    const hours = (day: string) => Array.from({ length: 21 }, (_, h) => `${day} ${String(h).padStart(2, '0')}:00:00`);
    expect(r[0]!.days).toEqual(hours('2020-01-02'));
    expect(r[0]!.data).toEqual(Array.from({ length: 21 }, (_, h) => (h === 16 ? 1 : 0)));
    expect(r[1]!.days).toEqual(hours('2020-01-01'));
    expect(r[1]!.data).toEqual(Array.from({ length: 21 }, (_, h) => (h === 0 ? 3 : 0)));
    expect(r[1]!.labels![0]).toBe('1-Jan 00:00');
  });

  /** test_trends.py `_test_events_with_dates`: count, labels, data and days of the one series. */
  const expectDates = async (
    dataset: Dataset,
    now: string,
    params: Record<string, unknown>,
    expected: { count: number; data: number[]; labels: string[]; days: string[] },
  ) => {
    const r = await run(dataset, now, { ...params, events: [{ id: 'event_name' }] });
    expect({ count: r[0]!.count, data: r[0]!.data, labels: r[0]!.labels, days: r[0]!.days }).toEqual(expected);
  };

  it('test_week_interval (test_trends.py)', async () => {
    await expectDates(
      'weekInterval',
      '2020-12-01T00:00:00Z',
      { interval: 'week', date_from: '2020-10-29', date_to: '2020-11-24' },
      {
        count: 4,
        data: [0, 1, 2, 1, 0],
        labels: ['29–31 Oct', '1–7 Nov', '8–14 Nov', '15–21 Nov', '22–24 Nov'],
        days: ['2020-10-25', '2020-11-01', '2020-11-08', '2020-11-15', '2020-11-22'],
      },
    );
  });

  it('test_month_interval (test_trends.py)', async () => {
    await expectDates(
      'monthInterval',
      '2020-12-01T00:00:00Z',
      { interval: 'month', date_from: '2020-6-01', date_to: '2020-11-24' },
      {
        count: 3,
        data: [0, 2, 0, 0, 1, 0],
        labels: ['Jun 2020', 'Jul 2020', 'Aug 2020', 'Sep 2020', 'Oct 2020', 'Nov 2020'],
        days: ['2020-06-01', '2020-07-01', '2020-08-01', '2020-09-01', '2020-10-01', '2020-11-01'],
      },
    );
  });

  it('test_interval_rounding (test_trends.py)', async () => {
    // The week of Nov 1 starts before date_from: its Nov 1 event is not counted.
    await expectDates(
      'weekInterval',
      '2020-12-01T00:00:00Z',
      { interval: 'week', date_from: '2020-11-04', date_to: '2020-11-24' },
      {
        count: 3,
        data: [0, 2, 1, 0],
        labels: ['4–7 Nov', '8–14 Nov', '15–21 Nov', '22–24 Nov'],
        days: ['2020-11-01', '2020-11-08', '2020-11-15', '2020-11-22'],
      },
    );
  });

  it('test_interval_rounding_monthly (test_trends.py)', async () => {
    // A month interval counts from the start of date_from's month.
    await expectDates(
      'monthRounding',
      '2020-12-01T00:00:00Z',
      { interval: 'month', date_from: '2020-6-7', date_to: '2020-7-30' },
      { count: 2, data: [1, 1], labels: ['Jun 2020', 'Jul 2020'], days: ['2020-06-01', '2020-07-01'] },
    );
  });

  it('test_today_timerange (test_trends.py)', async () => {
    await expectDates('today', '2020-11-01 10:20:00', { date_from: 'dStart' }, { count: 3, data: [3], labels: ['1-Nov-2020'], days: ['2020-11-01'] });
  });

  it('test_yesterday_timerange (test_trends.py)', async () => {
    await expectDates(
      'yesterday',
      '2020-11-02 10:20:00',
      { date_from: '-1d', date_to: '-1d' },
      { count: 3, data: [3], labels: ['1-Nov-2020'], days: ['2020-11-01'] },
    );
  });

  it('test_last24hours_timerange (test_trends.py)', async () => {
    // From 10:00 the day before: the 05:20 event is outside the last 24 hours.
    await expectDates(
      'lastHours',
      '2020-11-02 10:20:00',
      { date_from: '-24h' },
      { count: 3, data: [2, 1], labels: ['1-Nov-2020', '2-Nov-2020'], days: ['2020-11-01', '2020-11-02'] },
    );
  });

  it('an explicit 24-hour range counts exactly that range (QueryDateRange explicitDate, as test_last24hours_timerange)', async () => {
    // explicitDate: no widening to whole days, events from date_from itself (use_start_of_interval is off).
    const r = await run('lastHours', '2020-11-03 00:00:00', {
      date_from: '2020-11-01 10:20:00',
      date_to: '2020-11-02 10:20:00',
      explicit_date: true,
      events: [{ id: 'event_name' }],
    });
    expect({ count: r[0]!.count, data: r[0]!.data, days: r[0]!.days }).toEqual({ count: 3, data: [2, 1], days: ['2020-11-01', '2020-11-02'] });
  });

  it('test_last48hours_timerange (test_trends.py)', async () => {
    await expectDates(
      'lastHours',
      '2020-11-02 10:20:00',
      { date_from: '-48h' },
      { count: 4, data: [0, 3, 1], labels: ['31-Oct-2020', '1-Nov-2020', '2-Nov-2020'], days: ['2020-10-31', '2020-11-01', '2020-11-02'] },
    );
  });

  it('test_last7days_timerange (test_trends.py)', async () => {
    const days = ['2020-10-31', '2020-11-01', '2020-11-02', '2020-11-03', '2020-11-04', '2020-11-05', '2020-11-06', '2020-11-07'];
    await expectDates(
      'last7days',
      '2020-11-07 10:20:00',
      { date_from: '-7d' },
      {
        count: 4,
        data: [0, 1, 1, 0, 1, 1, 0, 0],
        labels: ['31-Oct-2020', '1-Nov-2020', '2-Nov-2020', '3-Nov-2020', '4-Nov-2020', '5-Nov-2020', '6-Nov-2020', '7-Nov-2020'],
        days,
      },
    );
  });

  it('test_last14days_timerange (test_trends.py)', async () => {
    const days = Array.from({ length: 15 }, (_, i) => new Date(Date.UTC(2020, 9, 31 + i)).toISOString().slice(0, 10));
    const labels = days.map((d) => `${Number(d.slice(8))}-${d.slice(5, 7) === '10' ? 'Oct' : 'Nov'}-2020`);
    await expectDates(
      'last14days',
      '2020-11-14 10:20:00',
      { date_from: '-14d' },
      { count: 6, data: [0, 1, 1, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0], labels, days },
    );
  });

  it('test_last30days_timerange (test_trends.py)', async () => {
    await expectDates(
      'novemberSix',
      '2020-11-30 10:20:00',
      { date_from: '-30d', interval: 'week' },
      {
        count: 6,
        data: [0, 3, 2, 0, 1, 0],
        labels: ['31-Oct-2020', '1–7 Nov', '8–14 Nov', '15–21 Nov', '22–28 Nov', '29–30 Nov'],
        days: ['2020-10-25', '2020-11-01', '2020-11-08', '2020-11-15', '2020-11-22', '2020-11-29'],
      },
    );
  });

  it('test_last90days_timerange (test_trends.py)', async () => {
    await expectDates(
      'last90days',
      '2020-11-30 10:20:00',
      { date_from: '-90d', interval: 'month' },
      { count: 9, data: [1, 2, 6], labels: ['Sep 2020', 'Oct 2020', 'Nov 2020'], days: ['2020-09-01', '2020-10-01', '2020-11-01'] },
    );
  });

  it('test_this_month_timerange (test_trends.py)', async () => {
    await expectDates(
      'novemberSix',
      '2020-11-30 10:20:00',
      { date_from: 'mStart', interval: 'month' },
      { count: 6, data: [6], labels: ['Nov 2020'], days: ['2020-11-01'] },
    );
  });

  it('test_previous_month_timerange (test_trends.py)', async () => {
    await expectDates(
      'novemberSix',
      '2020-12-30 10:20:00',
      { date_from: '-1mStart', date_to: '-1mEnd', interval: 'month' },
      { count: 6, data: [6], labels: ['Nov 2020'], days: ['2020-11-01'] },
    );
  });

  it('test_year_to_date_timerange (test_trends.py)', async () => {
    await expectDates(
      'yearToDate',
      '2020-04-30 10:20:00',
      { date_from: 'yStart', interval: 'month' },
      {
        count: 5,
        data: [2, 2, 1, 0],
        labels: ['Jan 2020', 'Feb 2020', 'Mar 2020', 'Apr 2020'],
        days: ['2020-01-01', '2020-02-01', '2020-03-01', '2020-04-01'],
      },
    );
  });

  it('test_all_time_timerange (test_trends.py)', async () => {
    await expectDates(
      'allTime',
      '2020-04-30 10:20:00',
      { date_from: 'all', interval: 'month' },
      {
        count: 5,
        data: [2, 2, 1, 0],
        labels: ['Jan 2020', 'Feb 2020', 'Mar 2020', 'Apr 2020'],
        days: ['2020-01-01', '2020-02-01', '2020-03-01', '2020-04-01'],
      },
    );
  });

  it('test_custom_range_timerange (test_trends.py)', async () => {
    await expectDates(
      'customRange',
      '2020-01-10',
      { date_from: '2020-01-05' },
      {
        count: 3,
        data: [2, 0, 0, 0, 1, 0],
        labels: ['5-Jan-2020', '6-Jan-2020', '7-Jan-2020', '8-Jan-2020', '9-Jan-2020', '10-Jan-2020'],
        days: ['2020-01-05', '2020-01-06', '2020-01-07', '2020-01-08', '2020-01-09', '2020-01-10'],
      },
    );
  });

  it('test_interval_filtering_hour (test_trends.py)', async () => {
    const r = await run('eventsWithTime', '2020-01-02', { date_from: '2019-12-24', interval: 'hour', ...signUp });
    expect([r[0]!.labels![3], r[0]!.data![3], r[0]!.data![192]]).toEqual(['24-Dec 03:00', 1, 3]);
  });

  it('test_interval_filtering_week (test_trends.py)', async () => {
    const r = await run('eventsWithTime', '2020-01-02', { date_from: '2019-11-24', interval: 'week', ...signUp });
    expect(r[0]!.labels!.slice(0, 5)).toEqual(['24–30 Nov', '1–7 Dec', '8–14 Dec', '15–21 Dec', '22–28 Dec']);
    expect(r[0]!.data!.slice(0, 5)).toEqual([0, 0, 0, 0, 1]);
  });

  it('test_interval_filtering_month (test_trends.py)', async () => {
    const r = await run('eventsWithTime', '2020-01-02', { date_from: '2019-9-24', interval: 'month', ...signUp });
    expect([r[0]!.labels![0], r[0]!.data![0], r[0]!.labels![3], r[0]!.data![3], r[0]!.labels![4], r[0]!.data![4]]).toEqual([
      'Sep 2019',
      0,
      'Dec 2019',
      1,
      'Jan 2020',
      4,
    ]);
  });

  it('test_interval_filtering_today_hourly (test_trends.py)', async () => {
    const r = await run('eventsWithTimeLateSignUp', '2020-01-02T23:31:00Z', { date_from: 'dStart', interval: 'hour', ...signUp });
    expect([r[0]!.labels![23], r[0]!.data![23]]).toEqual(['2-Jan 23:00', 1]);
  });

  it('test_property_filtering (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04', { properties: [{ key: '$some_property', value: 'value' }], ...signUp });
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.labels![5], r[0]!.data![5]]).toEqual(['1-Jan-2020', 1, '2-Jan-2020', 0]);
  });

  it('test_per_entity_filtering (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:00:01Z', {
      date_from: '-7d',
      events: [
        { id: 'sign up', properties: [{ key: '$some_property', value: 'value' }] },
        { id: 'sign up', properties: [{ key: '$some_property', value: 'other_value' }] },
      ],
    });
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.count]).toEqual(['1-Jan-2020', 1, 1]);
    expect([r[1]!.labels![5], r[1]!.data![5], r[1]!.count]).toEqual(['2-Jan-2020', 1, 1]);
  });

  it('test_bar_chart_by_value (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:00:01Z', { date_from: '-7d', events: [{ id: 'sign up' }, { id: 'no events' }], display: 'ActionsBarValue' });
    expect(r.map((s) => s.aggregated_value)).toEqual([4, 1]);
    // A total has no dates (PostHog's query selects none).
    expect(r.map((s) => s.days)).toEqual([[], []]);
  });

  it('test_breakdown_filtering_bar_chart_by_value (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:01:01Z', {
      date_from: '-7d',
      breakdown: '$some_property',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      display: 'ActionsBarValue',
    });
    expect(r.map((s) => s.aggregated_value)).toEqual([1, 1, 2]);
    // Ties by value; the events without a value last.
    expect(r.map((s) => s.breakdown_value)).toEqual(['other_value', 'value', NULL]);
    expect(r[0]!.days).toEqual([]);
  });

  it('test_breakdown_filtering (test_trends.py)', async () => {
    const base = { date_from: '-14d', events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }, { id: 'no events' }] };
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const r = await run('events', '2020-01-04T13:01:01Z', { ...base, ...breakdown });
      expect(r.map((s) => s.label)).toEqual(['sign up - value', 'sign up - other_value', `sign up - ${NULL}`, `no events - ${NULL}`]);
      expect(r.map((s) => s.data!.reduce((a, b) => a + b, 0))).toEqual([2, 1, 2, 1]);
    }
  });

  it('test_dau_with_breakdown_filtering (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const r = await run('eventsOtherValue', '2020-01-04T13:01:01Z', { ...breakdown, events: [{ id: 'sign up', math: 'dau' }] });
      expect(r.map((s) => s.label)).toEqual(['other_value', 'value', NULL]);
      expect([r[0]!.data!.reduce((a, b) => a + b, 0), r[0]!.data![5]]).toEqual([1, 1]);
      expect([r[1]!.data!.reduce((a, b) => a + b, 0), r[1]!.data![4]]).toEqual([1, 1]);
    }
  });

  it('test_breakdown_weekly_active_users_aggregated (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-11',
      date_to: '2020-01-11',
      display: 'ActionsTable',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
      breakdown: 'key',
    });
    // A tie: the values in order.
    expect(r.map((s) => [s.breakdown_value, s.aggregated_value])).toEqual([
      ['bor', 2],
      ['val', 2],
    ]);
  });

  it('test_weekly_active_users_aggregated_range_wider_than_week (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01',
      date_to: '2020-01-18',
      display: 'ActionsTable',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.aggregated_value).toBe(1);
  });

  it('test_weekly_active_users_aggregated_range_narrower_than_week (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-11',
      date_to: '2020-01-12',
      display: 'ActionsTable',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.aggregated_value).toBe(3);
  });

  it('test_weekly_active_users_daily (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-08',
      date_to: '2020-01-19',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.days).toEqual(Array.from({ length: 12 }, (_, i) => `2020-01-${String(8 + i).padStart(2, '0')}`));
    expect(r[0]!.data).toEqual([1, 3, 2, 2, 3, 3, 3, 3, 3, 3, 1, 0]);
  });

  it('test_weekly_active_users_weekly (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2019-12-29',
      date_to: '2020-01-18',
      interval: 'week',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.days).toEqual(['2019-12-29', '2020-01-05', '2020-01-12']);
    expect(r[0]!.data).toEqual([1, 2, 1]);
  });

  it('test_weekly_active_users_hourly (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-09T06:00:00Z',
      date_to: '2020-01-09T17:00:00Z',
      interval: 'hour',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.days).toEqual(Array.from({ length: 12 }, (_, i) => `2020-01-09 ${String(6 + i).padStart(2, '0')}:00:00`));
    expect(r[0]!.data).toEqual([1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3]);
  });

  it('test_multiple_breakdowns_label_formatting (test_trends.py)', async () => {
    const r = await run('multipleBreakdowns', '2020-01-04T13:00:01Z', {
      date_from: '-14d',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }, { id: 'no events' }],
      breakdowns: [{ property: '$browser' }, { property: '$variant' }],
    });
    expect(r.map((s) => s.label)).toEqual([
      'sign up - Safari::2',
      'sign up - Safari::1',
      'sign up - Chrome::1',
      'sign up - Chrome::2',
      `sign up - Chrome::${NULL}`,
      `sign up - Safari::${NULL}`,
    ]);
    const limited = await run('multipleBreakdowns', '2020-01-04T13:00:01Z', {
      date_from: '-14d',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }, { id: 'no events' }],
      breakdowns: [{ property: '$browser' }, { property: '$variant' }],
      breakdown_limit: 1,
    });
    expect(limited.map((s) => s.label)).toEqual(['sign up - Safari::2', `sign up - ${BREAKDOWN_OTHER}::${BREAKDOWN_OTHER}`]);
  });
  it('test_breakdown_by_cohort (test_trends.py)', async () => {
    const ids = ['cohort1', 'cohort2', 'cohort3'].map((name) => cohorts[`multiplePeople:${name}`]!);
    const r = await run('multiplePeople', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      breakdown: JSON.stringify([...ids, 'all']),
      breakdown_type: 'cohort',
      events: [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0 }],
    });
    // One query per cohort (the list holds "all"): each label names the series.
    const counts = Object.fromEntries(r.map((s) => [s.label, s.data!.reduce((a, b) => a + b, 0)]));
    expect(counts).toEqual({ 'watched movie - cohort1': 1, 'watched movie - cohort2': 3, 'watched movie - cohort3': 4, 'watched movie - all users': 7 });
    expect(r.map((s) => s.breakdown_value)).toEqual([...ids, 'all']);
  });

  it('test_breakdown_by_empty_cohort (test_trends.py)', async () => {
    const r = await run('emptyCohort', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      breakdown: JSON.stringify(['all']),
      breakdown_type: 'cohort',
      events: [{ id: '$pageview', type: 'events', order: 0 }],
    });
    expect(r[0]!.label).toBe('all users');
    expect(r[0]!.data!.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('test_breakdown_multiple_cohorts (test_trends.py)', async () => {
    const ids = [cohorts['twoCohorts:cohort_1']!, cohorts['twoCohorts:cohort_2']!];
    const r = await run('twoCohorts', '2020-01-04T13:01:01Z', {
      date_from: '-7d',
      events: [{ id: '$pageview' }],
      properties: [],
      breakdown: ids,
      breakdown_type: 'cohort',
    });
    // Several cohorts without "all" are one query, ordered by count.
    expect(r.map((s) => [s.count, s.label, s.breakdown_value])).toEqual([
      [2, 'cohort_2', ids[1]],
      [1, 'cohort_1', ids[0]],
    ]);
  });

  it('test_breakdown_single_cohort (test_trends.py)', async () => {
    const id = cohorts['twoCohorts:cohort_1']!;
    const r = await run('twoCohorts', '2020-01-04T13:01:01Z', {
      date_from: '-7d',
      events: [{ id: '$pageview' }],
      properties: [],
      breakdown: id,
      breakdown_type: 'cohort',
    });
    expect(r.map((s) => [s.count, s.label])).toEqual([[1, 'cohort_1']]);
  });

  it('test_trends_breakdown_single_aggregate_cohorts (test_trends.py)', async () => {
    const ids = ['cohort1', 'cohort2', 'cohort3'].map((name) => cohorts[`janeJohnJill:${name}`]!);
    const r = await run('janeJohnJill', '2020-01-04T13:00:01Z', {
      display: 'ActionsTable',
      breakdown: JSON.stringify([...ids, 'all']),
      breakdown_type: 'cohort',
      ...signUp,
    });
    expect(Object.fromEntries(r.map((s) => [s.label, s.aggregated_value]))).toEqual({
      'sign up - cohort1': 2,
      'sign up - cohort2': 2,
      'sign up - cohort3': 3,
      'sign up - all users': 7,
    });
  });

  it('test_filter_events_by_cohort (test_trends.py)', async () => {
    const r = await run('cohortFilter', '2020-01-04T13:00:00Z', {
      properties: [{ key: 'id', value: cohorts['cohortFilter:cohort1'], type: 'cohort' }],
      events: [{ id: 'event_name' }],
    });
    expect([r[0]!.count, r[0]!.data!.at(-1)]).toEqual([2, 2]);
  });

  it('test_interval_filtering_breakdown (test_trends.py)', async () => {
    const breakdown = { breakdown: JSON.stringify([cohorts['eventsWithTime:cohort1']]), breakdown_type: 'cohort', ...signUp };
    const hourly = await run('eventsWithTime', '2020-01-02', { date_from: '2019-12-24', interval: 'hour', ...breakdown });
    expect([hourly[0]!.labels![3], hourly[0]!.data![3], hourly[0]!.data![192]]).toEqual(['24-Dec 03:00', 1, 3]);
    const weekly = await run('eventsWithTime', '2020-01-02', { date_from: '2019-11-24', interval: 'week', ...breakdown });
    expect(weekly[0]!.labels!.slice(0, 5)).toEqual(['24–30 Nov', '1–7 Dec', '8–14 Dec', '15–21 Dec', '22–28 Dec']);
    expect(weekly[0]!.data!.slice(0, 5)).toEqual([0, 0, 0, 0, 1]);
    const monthly = await run('eventsWithTime', '2020-01-02', { date_from: '2019-9-24', interval: 'month', ...breakdown });
    expect([monthly[0]!.labels![3], monthly[0]!.data![3], monthly[0]!.labels![4], monthly[0]!.data![4]]).toEqual(['Dec 2019', 1, 'Jan 2020', 4]);
    const today = await run('eventsWithTimeLateSignUp', '2020-01-02T23:31:00Z', {
      date_from: 'dStart',
      interval: 'hour',
      breakdown: JSON.stringify([cohorts['eventsWithTimeLateSignUp:cohort1']]),
      breakdown_type: 'cohort',
      ...signUp,
    });
    expect([today[0]!.labels![23], today[0]!.data![23]]).toEqual(['2-Jan 23:00', 1]);
  });
  it('test_trends_breakdown_single_aggregate (test_trends.py)', async () => {
    const r = await run('breakdownAggregate', '2020-01-04T13:00:01Z', { display: 'ActionsTable', breakdown: '$browser', ...signUp });
    expect(r.map((s) => [s.breakdown_value, s.aggregated_value])).toEqual([
      ['Safari', 5],
      ['Chrome', 2],
    ]);
  });

  it('test_trends_multiple_breakdowns_single_aggregate (test_trends.py)', async () => {
    const r = await run('multipleBreakdownsAggregate', '2020-01-04T13:00:01Z', {
      display: 'ActionsTable',
      breakdowns: [{ property: '$browser' }, { property: '$variant' }],
      ...signUp,
    });
    expect(r.map((s) => [s.breakdown_value, s.aggregated_value])).toEqual([
      [['Safari', '2'], 3],
      [['Safari', '1'], 2],
      [['Chrome', '1'], 1],
      [['Chrome', '2'], 1],
    ]);
  });

  it('test_trends_single_aggregate_math (test_trends.py)', async () => {
    const math = { events: [{ id: 'sign up', math: 'median', math_property: '$math_prop' }] };
    const week = await run('mathProp', '2020-01-04T13:00:01Z', { display: 'ActionsTable', interval: 'week', ...math });
    const day = await run('mathProp', '2020-01-04T13:00:01Z', { display: 'ActionsTable', interval: 'day', ...math });
    expect([week[0]!.aggregated_value, day[0]!.aggregated_value]).toEqual([2, 2]);
  });

  it('test_trends_breakdown_single_aggregate_math (test_trends.py)', async () => {
    const math = { events: [{ id: 'sign up', math: 'median', math_property: '$math_prop' }] };
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const day = await run('mathProp', '2020-01-04T13:00:01Z', { ...breakdown, display: 'ActionsTable', interval: 'day', ...math });
      const week = await run('mathProp', '2020-01-04T13:00:01Z', { ...breakdown, display: 'ActionsTable', interval: 'week', ...math });
      expect([day[0]!.aggregated_value, week[0]!.aggregated_value]).toEqual([2, 2]);
    }
  });

  it('test_trends_breakdown_with_math_func (test_trends.py)', async () => {
    const math = { display: 'ActionsTable', interval: 'day', events: [{ id: 'sign up', math: 'p90', math_property: '$math_prop' }] };
    const single = await run('mathFunc', '2020-01-04T13:00:01Z', { ...math, breakdown: '$some_property' });
    expect(single.map((s) => s.breakdown_value)).toContain('value_21');
    const multiple = await run('mathFunc', '2020-01-04T13:00:01Z', { ...math, breakdowns: [{ property: '$some_property' }] });
    expect(multiple.map((s) => s.breakdown_value)).toContainEqual(['value_21']);
  });

  // PostHog's _test_math_property_aggregation: the action of the event answers as the event.
  it.each([
    ['test_sum_filtering', 'sum', 'mathsSmall', 18],
    ['test_avg_filtering', 'avg', 'mathsSmall', 4.5],
    ['test_min_filtering', 'min', 'mathsSmall', 2],
    ['test_max_filtering', 'max', 'mathsSmall', 7.5],
    ['test_median_filtering', 'median', 'mathsRange', 150],
    ['test_p75_filtering', 'p75', 'mathsRange', 175],
    ['test_p90_filtering', 'p90', 'mathsRange', 190],
    ['test_p95_filtering', 'p95', 'mathsRange', 195],
    ['test_p99_filtering', 'p99', 'mathsRange', 199],
  ] as const)('%s (test_trends.py)', async (_test, math, dataset, expected) => {
    const byEvent = await run(dataset, '2020-01-04T13:00:00Z', { events: [{ id: 'sign up', math, math_property: 'some_number' }] });
    const byAction = await run(dataset, '2020-01-04T13:00:00Z', { actions: [{ id: actions[`${dataset}:sign up`], math, math_property: 'some_number' }] });
    // PostHog allows 0.5 either way (its quantiles interpolate).
    expect(Math.abs(byAction[0]!.data!.at(-1)! - expected)).toBeLessThanOrEqual(0.5);
    expect(points(byAction)).toEqual(points(byEvent));
  });

  it('test_avg_filtering_non_number_resiliency (test_trends.py)', async () => {
    const r = await run('mathsNonNumber', '2020-01-04T13:00:00Z', { events: [{ id: 'sign up', math: 'avg', math_property: 'some_number' }] });
    expect(r[0]!.data!.at(-1)).toBe(5);
  });

  it('test_dau_filtering (test_trends.py)', async () => {
    const r = await run('dauFiltering', '2020-01-04', { events: [{ id: 'sign up', math: 'dau' }] });
    expect([r[0]!.data![4], r[0]!.data![5]]).toEqual([1, 2]);
  });

  /** test_trends.py's count-per-actor cases: "viewed video" from 2020-01-01 to 2020-01-07. */
  const perActor = (math: string, body: Record<string, unknown>) =>
    run('countPerActor', '2020-02-01T00:00:00Z', { events: [{ id: 'viewed video', math }], date_from: '2020-01-01', date_to: '2020-01-07', ...body });

  it('test_trends_count_per_user_average_daily (test_trends.py)', async () => {
    const r = await perActor('avg_count_per_actor', { display: 'ActionsLineGraph' });
    expect(r).toHaveLength(1);
    expect(r[0]!.days).toEqual(['2020-01-01', '2020-01-02', '2020-01-03', '2020-01-04', '2020-01-05', '2020-01-06', '2020-01-07']);
    expect(r[0]!.data).toEqual([1.5, 0, 0, 1, 2, 0, 0]);
  });

  it('test_trends_count_per_user_average_weekly (test_trends.py)', async () => {
    const r = await perActor('avg_count_per_actor', { display: 'ActionsLineGraph', interval: 'week' });
    expect([r[0]!.days, r[0]!.data]).toEqual([
      ['2019-12-29', '2020-01-05'],
      [1.3333333333333333, 2],
    ]);
  });

  it('test_trends_count_per_user_average_aggregated (test_trends.py)', async () => {
    const r = await perActor('avg_count_per_actor', { display: 'ActionsTable' });
    expect(r[0]!.aggregated_value).toBe(2.6666666666666665);
  });

  it('test_trends_count_per_user_maximum (test_trends.py)', async () => {
    const r = await perActor('max_count_per_actor', { display: 'ActionsLineGraph' });
    expect(r[0]!.data).toEqual([2, 0, 0, 1, 3, 0, 0]);
  });

  it('test_trends_count_per_user_average_with_event_property_breakdown (test_trends.py)', async () => {
    const r = await perActor('avg_count_per_actor', { display: 'ActionsLineGraph', breakdown: 'color' });
    expect(r.map((s) => [s.breakdown_value, s.data])).toEqual([
      ['red', [1, 0, 0, 1, 2, 0, 0]],
      ['blue', [1, 0, 0, 0, 1, 0, 0]],
      [NULL, [1, 0, 0, 0, 0, 0, 0]],
    ]);
  });

  it('test_trends_count_per_user_average_with_person_property_breakdown (test_trends.py)', async () => {
    const r = await perActor('avg_count_per_actor', { display: 'ActionsLineGraph', breakdown: 'fruit', breakdown_type: 'person' });
    expect(r.map((s) => [s.breakdown_value, s.data])).toEqual([
      ['mango', [2, 0, 0, 1, 2, 0, 0]],
      ['tomato', [1, 0, 0, 0, 0, 0, 0]],
    ]);
  });

  it('test_trends_count_per_user_average_aggregated_with_event_property_breakdown (test_trends.py)', async () => {
    const r = await perActor('avg_count_per_actor', { display: 'ActionsTable', breakdown: 'color' });
    expect(r.map((s) => [s.breakdown_value, s.aggregated_value])).toEqual([
      ['red', 2],
      ['blue', 1],
      [NULL, 1],
    ]);
  });

  it('test_breakdown_weekly_active_users_daily (test_trends.py)', async () => {
    const r = await run('weeklyActiveBreakdown', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      breakdown: 'key',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2]);
  });

  it('test_weekly_active_users_filtering (test_trends.py)', async () => {
    const r = await run('weeklyActiveFiltering', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
      properties: [{ key: 'name', operator: 'exact', value: ['person-1', 'person-2'], type: 'person' }],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2]);
  });

  it('test_breakdown_filtering_persons (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: 'email', breakdown_type: 'person' }, { breakdowns: [{ type: 'person', property: 'email' }] }]) {
      const r = await run('breakdownPersons', '2020-01-04T13:00:00Z', {
        ...breakdown,
        date_from: '-14d',
        events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      });
      expect(r.map((s) => [s.label, s.count])).toEqual([
        ['test@gmail.com', 1],
        ['test@posthog.com', 1],
        [NULL, 1],
      ]);
    }
  });

  it('test_breakdown_filtering_limit (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const r = await run('breakdownLimit', '2020-01-04T13:01:01Z', {
        ...breakdown,
        date_from: '-14d',
        events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      });
      expect(r).toHaveLength(25);
    }
  });

  it('test_breakdown_with_person_property_filter (test_trends.py)', async () => {
    const events = [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0, properties: [{ key: 'name', value: 'person2', type: 'person' }] }];
    const single = await run('multiplePeople', '2020-01-04T13:01:01Z', { date_from: '-14d', events, breakdown: 'order' });
    expect(single.map((s) => [s.count, s.breakdown_value])).toEqual([
      [2, '2'],
      [1, '1'],
    ]);
    const multiple = await run('multiplePeople', '2020-01-04T13:01:01Z', { date_from: '-14d', events, breakdowns: [{ property: 'order' }] });
    expect(multiple.map((s) => [s.count, s.breakdown_value])).toEqual([
      [2, ['2']],
      [1, ['1']],
    ]);
  });

  it('test_breakdown_by_person_property (test_trends.py)', async () => {
    const events = [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0 }];
    const single = await run('multiplePeople', '2020-01-04T13:01:01Z', { breakdown: 'name', breakdown_type: 'person', date_from: '-14d', events });
    expect(Object.fromEntries(single.map((s) => [s.breakdown_value as string, [s.count, s.label]]))).toEqual({
      person1: [1, 'person1'],
      person2: [3, 'person2'],
      person3: [3, 'person3'],
    });
    const multiple = await run('multiplePeople', '2020-01-04T13:01:01Z', { breakdowns: [{ type: 'person', property: 'name' }], date_from: '-14d', events });
    expect(multiple.map((s) => s.breakdown_value).sort()).toEqual([['person1'], ['person2'], ['person3']]);
  });

  it('test_breakdown_by_person_property_pie (test_trends.py)', async () => {
    const events = [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0, math: 'dau' }];
    for (const [breakdown, values] of [
      [{ breakdown: 'name', breakdown_type: 'person' }, ['person1', 'person2', 'person3']],
      [{ breakdowns: [{ type: 'person', property: 'name' }] }, [['person1'], ['person2'], ['person3']]],
    ] as const) {
      const r = await run('multiplePeople', '2020-01-04T13:01:01Z', { date_from: '-14d', display: 'ActionsPie', events, ...breakdown });
      const sorted = [...r].sort((a, b) => JSON.stringify(a.breakdown_value).localeCompare(JSON.stringify(b.breakdown_value)));
      expect(sorted.map((s) => [s.breakdown_value, s.aggregated_value])).toEqual(values.map((v) => [v, 1]));
    }
  });

  it('test_breakdown_by_person_property_pie_with_event_dau_filter (test_trends.py)', async () => {
    const events = [
      {
        id: 'watched movie',
        name: 'watched movie',
        type: 'events',
        order: 0,
        math: 'dau',
        properties: [{ key: 'name', operator: 'not_icontains', value: 'person3', type: 'person' }],
      },
    ];
    const r = await run('multiplePeople', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      display: 'ActionsPie',
      events,
      breakdown: 'name',
      breakdown_type: 'person',
    });
    expect(r.map((s) => [s.breakdown_value, s.aggregated_value]).sort()).toEqual([
      ['person1', 1],
      ['person2', 1],
    ]);
  });

  it('test_person_property_filtering (test_trends.py)', async () => {
    const r = await run('multiplePeople', '2020-01-04', { properties: [{ key: 'name', value: 'person1', type: 'person' }], events: [{ id: 'watched movie' }] });
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.labels![5], r[0]!.data![5]]).toEqual(['1-Jan-2020', 1, '2-Jan-2020', 0]);
  });

  it('test_entity_person_property_filtering (test_trends.py)', async () => {
    const r = await run('multiplePeople', '2020-01-04', { events: [{ id: 'watched movie', properties: [{ key: 'name', value: 'person1', type: 'person' }] }] });
    expect([r[0]!.labels![4], r[0]!.data![4], r[0]!.labels![5], r[0]!.data![5]]).toEqual(['1-Jan-2020', 1, '2-Jan-2020', 0]);
  });

  it('test_breakdown_by_event_metadata (test_trends.py)', async () => {
    const r = await run('eventMetadata', '2020-01-04T13:01:01Z', {
      date_from: '-7d',
      interval: 'hour',
      events: [{ id: '$pageview' }],
      breakdown: 'distinct_id',
      breakdown_type: 'event_metadata',
    });
    expect(r.map((s) => [s.label, s.count])).toEqual([
      ['p1', 2],
      ['p2', 1],
    ]);
  });

  it('test_filter_test_accounts_cohorts (test_trends.py)', async () => {
    const testAccountFilters = [{ key: 'id', value: cohorts['cohortFilter:cohort1'], type: 'cohort' }];
    const r = await run(
      'cohortFilter',
      '2020-01-04T13:00:00Z',
      { events: [{ id: 'event_name' }], filter_test_accounts: true },
      { test_account_filters: testAccountFilters },
    );
    expect([r[0]!.count, r[0]!.data!.at(-1)]).toEqual([2, 2]);
  });

  it('test_breakdown_filter_by_precalculated_cohort (test_trends.py)', async () => {
    const base = { events: [{ id: 'event_name' }], properties: [{ type: 'cohort', key: 'id', value: cohorts['cohortFilter:cohort1'] }] };
    const single = await run('cohortFilter', '2020-01-04T13:00:00Z', { ...base, breakdown: 'name', breakdown_type: 'person' });
    expect([single[0]!.breakdown_value, single[0]!.count, single[0]!.data!.at(-1)]).toEqual(['Jane', 2, 2]);
    const multiple = await run('cohortFilter', '2020-01-04T13:00:00Z', { ...base, breakdowns: [{ type: 'person', property: 'name' }] });
    expect([multiple[0]!.breakdown_value, multiple[0]!.count, multiple[0]!.data!.at(-1)]).toEqual([['Jane'], 2, 2]);
  });

  it('test_breakdown_filtering_with_properties (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$current_url' }, { breakdowns: [{ property: '$current_url' }] }]) {
      const r = await run('breakdownProperties', '2020-01-05T13:01:01Z', {
        ...breakdown,
        date_from: '-7d',
        events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0, properties: [{ key: '$os', value: 'Mac' }] }],
        properties: [{ key: '$browser', value: 'Firefox' }],
      });
      const sorted = [...r].sort((a, b) => a.label.localeCompare(b.label));
      const wrap = (v: string) => ('breakdown' in breakdown ? v : [v]);
      expect(sorted.map((s) => [s.label, sum(s), s.breakdown_value])).toEqual([
        ['first url', 1, wrap('first url')],
        ['second url', 1, wrap('second url')],
      ]);
    }
  });

  it('test_breakdown_filtering_with_properties_in_new_format (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$current_url' }, { breakdowns: [{ property: '$current_url' }] }]) {
      const query = (type: 'OR' | 'AND') => ({
        ...breakdown,
        date_from: '-14d',
        events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0, properties: [{ key: '$os', value: 'Mac' }] }],
        properties: {
          type,
          values: [
            { key: '$browser', value: 'Firefox' },
            { key: '$os', value: 'Windows' },
          ],
        },
      });
      const either = await run('breakdownPropertiesNewFormat', '2020-01-05T13:01:01Z', query('OR'));
      expect(either.map((s) => [s.label, sum(s), s.breakdown_value])).toEqual([['second url', 1, 'breakdown' in breakdown ? 'second url' : ['second url']]]);
      expect(await run('breakdownPropertiesNewFormat', '2020-01-05T13:01:01Z', query('AND'))).toEqual([]);
    }
  });

  it('test_mau_with_breakdown_filtering_and_prop_filter (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_prop', breakdown_type: 'person' }, { breakdowns: [{ property: '$some_prop', type: 'person' }] }]) {
      const r = await run('mauBreakdown', '2020-01-04T13:01:01Z', {
        ...breakdown,
        events: [{ id: 'sign up', math: 'monthly_active' }],
        properties: [{ key: 'filter_prop', value: 'filter_val', type: 'person' }],
        display: 'ActionsLineGraph',
      });
      expect(r.map((s) => [s.label, sum(s), s.data![5]])).toEqual([
        ['some_val', 3, 1],
        ['some_val2', 3, 1],
      ]);
    }
  });

  it('test_dau_with_breakdown_filtering_with_prop_filter (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const r = await run('dauBreakdownPropFilter', '2020-01-04T13:01:01Z', {
        ...breakdown,
        events: [{ id: 'sign up', math: 'dau' }],
        properties: [{ key: '$os', value: 'Windows' }],
      });
      expect([r[0]!.label, sum(r[0]!), r[0]!.data![5]]).toEqual(['other_value', 1, 1]);
    }
  });

  it('test_against_clashing_entity_and_property_filter_naming (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_prop', breakdown_type: 'person' }, { breakdowns: [{ property: '$some_prop', type: 'person' }] }]) {
      const r = await run('clashingNames', '2020-01-04T13:01:01Z', {
        ...breakdown,
        events: [{ id: '$pageview', properties: [{ key: '$host', operator: 'icontains', value: '.com' }] }],
        properties: [{ key: '$host', value: ['app.example.com', 'another.com'] }],
      });
      expect(r[0]!.count).toBe(1);
    }
  });

  it('test_trend_breakdown_user_props_with_filter_with_partial_property_pushdowns (test_trends.py)', async () => {
    const base = { date_from: '2020-01-01 00:00:00', date_to: '2020-07-01 00:00:00', breakdown: 'email', breakdown_type: 'person' };
    const r = await run('partialPushdowns', '2020-08-01T00:00:00Z', {
      ...base,
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      properties: {
        type: 'AND',
        values: [
          {
            type: 'OR',
            values: [
              { key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' },
              { key: 'key', value: 'val' },
            ],
          },
          {
            type: 'OR',
            values: [
              { key: '$os', value: 'android', operator: 'exact', type: 'person' },
              { key: '$browser', value: 'safari', operator: 'exact', type: 'person' },
            ],
          },
        ],
      },
    });
    expect(r.map((s) => s.breakdown_value as string).sort()).toEqual([
      'test2@posthog.com',
      'test3@posthog.com',
      'test4@posthog.com',
      'test5@posthog.com',
      'test@gmail.com',
    ]);
    const strict = await run('partialPushdowns', '2020-08-01T00:00:00Z', {
      ...base,
      events: [
        {
          id: 'sign up',
          name: 'sign up',
          type: 'events',
          order: 0,
          properties: {
            type: 'AND',
            values: [
              { key: 'key', value: 'val' },
              { key: 'email', value: '@posthog.com', operator: 'icontains', type: 'person' },
            ],
          },
        },
      ],
      properties: {
        type: 'AND',
        values: [
          {
            type: 'AND',
            values: [
              { key: '$os', value: 'android', operator: 'exact', type: 'person' },
              { key: '$browser', value: 'chrome', operator: 'exact', type: 'person' },
            ],
          },
        ],
      },
    });
    expect(strict.map((s) => s.breakdown_value)).toEqual(['test2@posthog.com']);
  });

  it('test_breakdown_with_filter_groups_person_on_events (test_trends.py)', async () => {
    const r = await run('groups', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      breakdown: 'key',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      properties: [{ key: 'industry', value: 'finance', type: 'group', group_type_index: 0 }],
    });
    expect(r.map((s) => [s.breakdown_value, s.count])).toEqual([
      ['oh', 1],
      ['uh', 1],
    ]);
  });

  it('test_breakdown_by_group_props_person_on_events (test_trends.py)', async () => {
    const r = await run('groupProps', '2020-01-01T00:00:00Z', {
      date_from: '2020-01-01',
      date_to: '2020-01-12',
      breakdown: 'industry',
      breakdown_type: 'group',
      breakdown_group_type_index: 0,
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
    });
    expect(r.map((s) => [s.breakdown_value, s.count])).toEqual([
      ['finance', 2],
      ['technology', 1],
    ]);
  });

  it('test_breakdown_by_group_props_with_person_filter_person_on_events (test_trends.py)', async () => {
    const r = await run('groupsWithPersonFilter', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      breakdown: 'industry',
      breakdown_type: 'group',
      breakdown_group_type_index: 0,
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      properties: [{ key: 'key', value: 'value', type: 'person' }],
    });
    expect(r.map((s) => [s.breakdown_value, s.count])).toEqual([['finance', 1]]);
  });

  it('test_filtering_with_group_props_person_on_events (test_trends.py)', async () => {
    const r = await run('groupsWithPersonFilter', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      events: [{ id: '$pageview', type: 'events', order: 0 }],
      properties: [
        { key: 'industry', value: 'finance', type: 'group', group_type_index: 0 },
        { key: 'key', value: 'value', type: 'person' },
      ],
    });
    expect(r[0]!.count).toBe(1);
  });

  it('test_filtering_with_group_props_event_with_no_group_data (test_trends.py)', async () => {
    // A negative filter keeps the events without a group.
    const r = await run('groupsWithPersonFilter', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      events: [{ id: 'no group', type: 'events', order: 0 }],
      properties: [
        { key: 'industry', operator: 'is_not', value: 'textiles', type: 'group', group_type_index: 0 },
        { key: 'key', value: 'value', type: 'person' },
      ],
    });
    expect(r[0]!.count).toBe(4);
  });

  it('test_filtering_by_multiple_groups_person_on_events (test_trends.py)', async () => {
    const r = await run('multipleGroups', '2020-01-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      properties: [
        { key: 'industry', value: 'finance', type: 'group', group_type_index: 0 },
        { key: 'name', value: 'six', type: 'group', group_type_index: 2 },
      ],
    });
    expect(r.map((s) => [s.count, s.data])).toEqual([[1, [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]]);
  });

  it('test_yesterday_with_hourly_interval (test_trends.py)', async () => {
    const r = await run('hourlyYesterday', '2020-01-03 13:06:02', {
      date_from: '-1dStart',
      date_to: '-1dEnd',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      interval: 'hour',
    });
    expect(r.map((s) => s.data)).toEqual([Array.from({ length: 24 }, (_, h) => h)]);
  });

  it('test_timezones_hourly_relative_from (test_trends.py)', async () => {
    const labels = Array.from({ length: 11 }, (_, h) => `5-Jan ${String(h).padStart(2, '0')}:00`);
    for (const math of [{ math: 'dau' }, {}]) {
      const r = await run('timezonesHourly', '2020-01-05T10:01:01Z', {
        date_from: 'dStart',
        interval: 'hour',
        events: [{ id: 'sign up', name: 'sign up', ...math }],
      });
      expect([r[0]!.labels, r[0]!.data]).toEqual([labels, [0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]]);
    }
  });

  it('test_timezones_hourly_absolute_from (test_trends.py)', async () => {
    const hourly = await run('timezonesDaily', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-03',
      date_to: '2020-01-03 23:59:59',
      interval: 'hour',
      events: [{ id: 'sign up', name: 'sign up' }],
    });
    expect(hourly[0]!.days).toEqual(Array.from({ length: 24 }, (_, h) => `2020-01-03 ${String(h).padStart(2, '0')}:00:00`));
    expect([hourly[0]!.data![17], hourly[0]!.data!.length]).toEqual([1, 24]);
    const daily = await run('timezonesDaily', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-03',
      date_to: '2020-01-03',
      events: [{ id: 'sign up', name: 'sign up' }],
    });
    expect(daily[0]!.data).toEqual([1]);
  });

  it('test_timezones_daily (test_trends.py)', async () => {
    const week = ['29-Dec-2019', '30-Dec-2019', '31-Dec-2019', '1-Jan-2020', '2-Jan-2020', '3-Jan-2020', '4-Jan-2020', '5-Jan-2020'];
    const total = await run('timezonesDaily', '2020-01-05T05:00:00Z', { date_from: '-7d', events: [{ id: 'sign up', name: 'sign up' }] });
    expect([total[0]!.data, total[0]!.labels]).toEqual([[0, 0, 0, 0, 1, 1, 0, 0], week]);
    const dau = await run('timezonesDaily', '2020-01-05T13:01:01Z', { date_from: '-14d', events: [{ id: 'sign up', name: 'sign up', math: 'dau' }] });
    expect(dau[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]);
    expect(dau[0]!.labels![0]).toBe('22-Dec-2019');
    const weekly = await run('timezonesDaily', '2020-01-05T13:01:01Z', {
      date_from: '-7d',
      events: [{ id: 'sign up', name: 'sign up', math: 'weekly_active' }],
    });
    expect([weekly[0]!.data, weekly[0]!.labels]).toEqual([[0, 0, 0, 0, 1, 1, 1, 1], week]);
    const byOs = await run('timezonesDaily', '2020-01-05T13:01:01Z', {
      date_from: '-7d',
      breakdown: '$os',
      events: [{ id: 'sign up', name: 'sign up', math: 'dau' }],
    });
    expect(byOs[0]!.data).toEqual([0, 0, 0, 0, 1, 1, 0, 0]);
  });

  it('test_non_deterministic_timezones (test_trends.py)', async () => {
    const r = await run(
      'pacific',
      '2022-11-30T13:01:01Z',
      { date_from: '-30d', events: [{ id: 'sign up', name: 'sign up' }], interval: 'week' },
      { timezone: 'US/Pacific' },
    );
    expect(r[0]!.data).toEqual([1, 1, 1, 1, 1]);
  });

  it('test_timezones_weekly (test_trends.py)', async () => {
    const query = { date_from: '-14d', interval: 'week', events: [{ id: 'sign up', name: 'sign up' }] };
    const sunday = await run('timezonesWeekly', '2020-01-26T03:00:00Z', query, { week_start_day: 0 });
    expect([sunday[0]!.days, sunday[0]!.data]).toEqual([
      ['2020-01-12', '2020-01-19', '2020-01-26'],
      [1, 1, 0],
    ]);
    // Monday weeks: the week of Jan 6 counts only what is after date_from (Jan 12).
    const monday = await run('timezonesWeekly', '2020-01-26T03:00:00Z', query, { week_start_day: 1 });
    expect([monday[0]!.days, monday[0]!.data]).toEqual([
      ['2020-01-06', '2020-01-13', '2020-01-20'],
      [1, 0, 1],
    ]);
  });

  it('test_same_day (test_trends.py)', async () => {
    const r = await run('sameDay', '2020-02-01T00:00:00Z', { date_from: '2020-01-03', date_to: '2020-01-03', events: [{ id: 'sign up', name: 'sign up' }] });
    expect(r[0]!.data).toEqual([1]);
  });

  it('test_trends_with_hogql_math (test_trends.py)', async () => {
    const r = await run('hogqlMath', '2020-01-04T12:01:01Z', {
      interval: 'week',
      events: [{ id: 'sign up', math: 'hogql', math_hogql: 'avg(properties.x) + 1000' }],
    });
    expect([r[0]!.labels, r[0]!.data]).toEqual([
      ['28-Dec-2019', '29-Dec-2019 – 4-Jan-2020'],
      [0, 1003],
    ]);
  });

  it('test_response_empty_if_no_events (test_trends.py)', async () => {
    expect(await run('events', '2020-02-01T00:00:00Z', { date_from: '2012-12-12' })).toEqual([]);
  });

  it('test_trends_for_non_existing_action: an event that never happened (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04', { events: [{ id: 'DNE' }] });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });
  /** PostHog's assertEntityResponseEqual: the same points, labels and counts. */
  const points = (r: TrendSeries[]) => r.map((s) => ({ data: s.data, labels: s.labels, days: s.days, count: s.count, breakdown_value: s.breakdown_value }));

  it('test_action_filtering (test_trends.py)', async () => {
    const byAction = await run('events', '2020-01-04T13:00:01Z', { actions: [{ id: actions['events:sign up'] }] });
    const byEvent = await run('events', '2020-01-04T13:00:01Z', { events: [{ id: 'sign up' }] });
    expect(byAction).toHaveLength(1);
    expect(points(byAction)).toEqual(points(byEvent));
    expect(byAction[0]!.label).toBe('sign up');
  });

  it('test_dau_filtering: the action answers as the event (test_trends.py)', async () => {
    const byAction = await run('dauFiltering', '2020-01-04', { actions: [{ id: actions['dauFiltering:sign up'], math: 'dau' }] });
    const byEvent = await run('dauFiltering', '2020-01-04', { events: [{ id: 'sign up', math: 'dau' }] });
    expect([byAction[0]!.data![4], byAction[0]!.data![5]]).toEqual([1, 2]);
    expect(points(byAction)).toEqual(points(byEvent));
  });

  it('test_dau_with_breakdown_filtering: the action answers as the event (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const byAction = await run('eventsOtherValue', '2020-01-04T13:01:01Z', {
        ...breakdown,
        actions: [{ id: actions['eventsOtherValue:sign up'], math: 'dau' }],
      });
      const byEvent = await run('eventsOtherValue', '2020-01-04T13:01:01Z', { ...breakdown, events: [{ id: 'sign up', math: 'dau' }] });
      expect(points(byAction)).toEqual(points(byEvent));
    }
  });

  it('test_breakdown_by_cohort: the action answers as the event (test_trends.py)', async () => {
    const breakdown = JSON.stringify([...['cohort1', 'cohort2', 'cohort3'].map((name) => cohorts[`multiplePeople:${name}`]!), 'all']);
    const byAction = await run('multiplePeople', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      breakdown,
      breakdown_type: 'cohort',
      actions: [{ id: actions['multiplePeople:watched movie'], type: 'actions', order: 0 }],
    });
    const byEvent = await run('multiplePeople', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      breakdown,
      breakdown_type: 'cohort',
      events: [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0 }],
    });
    expect(points(byAction)).toEqual(points(byEvent));
    expect(byAction.map((s) => s.label)).toEqual([
      'watched movie - cohort1',
      'watched movie - cohort2',
      'watched movie - cohort3',
      'watched movie - all users',
    ]);
  });

  it('test_breakdown_with_person_property_filter: the action answers as the event (test_trends.py)', async () => {
    const byAction = await run('multiplePeople', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      actions: [{ id: actions['multiplePeople:watched movie'], type: 'actions', order: 0 }],
      properties: [{ key: 'name', value: 'person2', type: 'person' }],
      breakdown: 'order',
    });
    expect(byAction.map((s) => [s.count, s.breakdown_value])).toEqual([
      [2, '2'],
      [1, '1'],
    ]);
  });

  it('test_trends_regression_filtering_by_action_with_person_properties (test_trends.py)', async () => {
    const action = { actions: [{ id: actions['actionPersonProperties:$pageview from non-internal'] }] };
    const r = await run('actionPersonProperties', '2020-01-04T13:01:01Z', action);
    expect([r.length, r[0]!.count]).toEqual([1, 3]);
    const withEmail = await run('actionPersonProperties', '2020-01-04T13:01:01Z', {
      ...action,
      properties: [{ key: 'email', type: 'person', value: 'is_set', operator: 'is_set' }],
    });
    expect([withEmail.length, withEmail[0]!.count]).toEqual([1, 2]);
  });

  it('test_action_filtering_with_cohort (test_trends.py)', async () => {
    const r = await run('actionWithCohort', '2020-02-01T00:00:00Z', {
      actions: [{ id: actions['actionWithCohort:sign up'] }],
      date_from: '2020-01-01',
      date_to: '2020-01-07',
      properties: [{ key: '$bool_prop', value: 'x', type: 'person' }],
    });
    expect(r.map((s) => s.data)).toEqual([[0, 1, 1, 0, 0, 0, 0]]);
  });

  it('test_filtering_with_action_props (test_trends.py)', async () => {
    const r = await run('actionProps', '2020-01-04T13:00:00Z', {
      date_from: '-14d',
      actions: [{ id: actions['actionProps:sign up'], type: 'actions', order: 0 }],
    });
    expect(r[0]!.count).toBe(2);
  });
  it('test_trends_breakdown_normalize_url (test_trends.py)', async () => {
    const r = await run('normalizeUrl', '2020-01-04T13:00:01Z', {
      date_from: '-7d',
      display: 'ActionsLineGraphCumulative',
      events: [{ id: 'sign up', math: 'dau' }],
      breakdown: '$current_url',
      breakdown_normalize_url: true,
    });
    expect(r.map((s) => s.label).sort()).toEqual(['http://hogflix/first', 'http://hogflix/second']);
    expect(r.map((s) => s.breakdown_value).sort()).toEqual(['http://hogflix/first', 'http://hogflix/second']);
  });

  it('test_breakdown_with_filter (test_trends.py)', async () => {
    const r = await run('breakdownWithFilter', '2020-01-04T13:00:00Z', {
      date_from: '-14d',
      breakdown: 'key',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      properties: [{ key: 'key', value: 'oh', operator: 'not_icontains' }],
    });
    expect(r.map((s) => s.breakdown_value)).toEqual(['val']);
  });

  it('test_weekly_active_users_hourly_full_week (test_trends.py)', async () => {
    const r = await run('activeUsersFullWeek', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-03T00:00:00Z',
      date_to: '2020-01-11T17:00:00Z',
      interval: 'hour',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    const data = r[0]!.data!;
    expect(data.reduce((a, b) => a + b, 0)).toBe(24 * 7 * 3);
    expect([r[0]!.days[10], data[10], r[0]!.days[11]]).toEqual(['2020-01-03 10:00:00', 1, '2020-01-03 11:00:00']);
    expect(data.slice(11, 178).every((x) => x === 3)).toBe(true);
    expect([data[178], r[0]!.days[178]]).toEqual([2, '2020-01-10 10:00:00']);
  });

  it('test_weekly_active_users_daily_based_on_action (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-08',
      date_to: '2020-01-19',
      actions: [{ id: actions['activeUsers:$pageview'], type: 'actions', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.data).toEqual([1, 3, 2, 2, 3, 3, 3, 3, 3, 3, 1, 0]);
  });

  it('test_trends_breakdown_timezone (test_trends.py)', async () => {
    const r = await run(
      'countPerActorOrange',
      '2020-04-01T00:00:00Z',
      {
        display: 'ActionsLineGraph',
        events: [{ id: 'viewed video', math: 'dau' }],
        breakdown: 'color',
        date_from: '2020-01-01',
        date_to: '2020-03-07',
        interval: 'month',
      },
      { timezone: 'US/Pacific' },
    );
    for (const series of r.slice(0, 3)) expect(series.days).toEqual(['2020-01-01', '2020-02-01', '2020-03-01']);
  });

  it('test_breakdown_filtering_persons_with_action_props (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: 'email', breakdown_type: 'person' }, { breakdowns: [{ property: 'email', type: 'person' }] }]) {
      const r = await run('breakdownPersons', '2020-01-04T13:00:00Z', {
        ...breakdown,
        date_from: '-14d',
        actions: [{ id: actions['breakdownPersons:sign up'], type: 'actions', order: 0 }],
      });
      expect(r.map((s) => [s.label, s.count])).toEqual([
        ['test@gmail.com', 1],
        ['test@posthog.com', 1],
        [NULL, 1],
      ]);
    }
  });

  it('test_combine_all_cohort_and_icontains (test_trends.py)', async () => {
    // No event matches: a cohort breakdown answers no series at all.
    const r = await run('events', '2020-01-04T13:00:01Z', {
      actions: [{ id: actions['events:sign up'], math: 'dau' }],
      properties: [{ key: '$current_url', value: 'ii', operator: 'icontains' }],
      breakdown: [cohorts['events:a'], 'all'],
      breakdown_type: 'cohort',
    });
    expect(r).toHaveLength(0);
  });

  it('test_filter_by_precalculated_cohort (test_trends.py)', async () => {
    const r = await run('cohortFilter', '2020-01-04T13:00:00Z', {
      events: [{ id: 'event_name' }],
      properties: [{ type: 'cohort', key: 'id', value: cohorts['cohortFilter:cohort1'] }],
    });
    expect([r[0]!.count, r[0]!.data!.at(-1)]).toEqual([2, 2]);
  });
  it('test_action_filtering_for_action_in_different_env_of_project: an action of another project is refused (docs/behaviours.md)', async () => {
    // A Sightline project is its one environment: the "events" project's action is not eventsOtherValue's.
    await expect(run('eventsOtherValue', '2020-01-04T13:00:01Z', { actions: [{ id: actions['events:sign up'] }] })).rejects.toMatchObject({
      code: 'action_does_not_exist',
    });
  });

  it('test_action_with_prop (test_trends.py)', async () => {
    // The action's $current_url and the global one are separate conditions: both must hold.
    const r = await run('actionWithProp', '2020-01-04T13:01:01Z', {
      actions: [{ id: actions['actionWithProp:sign up'], math: 'dau' }],
      properties: [{ key: '$current_url', value: 'fake' }],
    });
    expect(r[0]!.count).toBe(0);
  });

  it('test_breakdown_weekly_active_users_daily_based_on_action (test_trends.py)', async () => {
    const r = await run('breakdownWeeklyActiveAction', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      breakdown: 'key',
      actions: [{ id: actions['breakdownWeeklyActiveAction:$pageview'], type: 'actions', order: 0, math: 'weekly_active' }],
    });
    expect(r[0]!.data).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2]);
  });

  it('test_breakdown_user_props_with_filter (test_trends.py)', async () => {
    const r = await run('userPropsWithFilter', '2020-01-04T13:00:00Z', {
      date_from: '-14d',
      breakdown: 'email',
      breakdown_type: 'person',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }],
      properties: [
        { key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' },
        { key: 'key', value: 'val' },
      ],
    });
    // PostHog asserts the one series; its count follows from the data (person2's and person3's).
    expect(r.map((s) => [s.breakdown_value, s.count])).toEqual([['test@gmail.com', 2]]);
  });

  it('test_breakdown_with_filter_groups_person_on_events_v2 (test_trends.py)', async () => {
    const r = await run('groupsPersonOverride', '2020-02-01T00:00:00Z', {
      date_from: '2020-01-01T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      breakdown: 'key',
      events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0, math: 'dau' }],
      properties: [{ key: 'industry', value: 'finance', type: 'group', group_type_index: 0 }],
    });
    expect(r.map((s) => [s.breakdown_value, s.count])).toEqual([
      ['oh', 1],
      ['uh', 1],
    ]);
  });

  it('test_same_day_with_person_on_events_v2 (test_trends.py)', async () => {
    const range = { date_from: '2020-01-03', date_to: '2020-01-03' };
    const total = await run('sameDayOverride', '2020-02-01T00:00:00Z', { ...range, events: [{ id: 'sign up', name: 'sign up' }] });
    expect(total[0]!.data).toEqual([2]);
    // distinctid1 now belongs to distinctid2's person: one user.
    const dau = await run('sameDayOverride', '2020-02-01T00:00:00Z', { ...range, events: [{ id: 'sign up', name: 'sign up', math: 'dau' }] });
    expect(dau[0]!.data).toEqual([1]);
  });

  it('test_same_day_with_person_on_events_v2_latest_override (test_trends.py)', async () => {
    const dau = async () =>
      (
        await run('sameDayLatestOverride', '2020-02-01T00:00:00Z', {
          date_from: '2020-01-03',
          date_to: '2020-01-03',
          events: [{ id: 'sign up', name: 'sign up', math: 'dau' }],
        })
      )[0]!.data;
    // The highest version of a distinct id's override decides its person.
    await repointDistinctId('sameDayLatestOverride', 'distinctid1', 'p2', 0);
    expect(await dau()).toEqual([2]);
    await repointDistinctId('sameDayLatestOverride', 'distinctid1', 'p3', 1);
    expect(await dau()).toEqual([1]);
    await repointDistinctId('sameDayLatestOverride', 'distinctid1', 'p2', 2);
    expect(await dau()).toEqual([2]);
  });

  it('test_person_property_filtering_clashing_with_event_property (test_trends.py)', async () => {
    const byPerson = await run('multiplePeople', '2020-01-04', {
      properties: [{ key: 'name', value: 'person1', type: 'person' }],
      events: [{ id: 'watched movie' }],
    });
    expect([byPerson[0]!.labels![4], byPerson[0]!.data![4], byPerson[0]!.labels![5], byPerson[0]!.data![5]]).toEqual(['1-Jan-2020', 1, '2-Jan-2020', 0]);
    const byEvent = await run('multiplePeople', '2020-01-04', {
      properties: [{ key: 'name', value: '1', type: 'event' }],
      events: [{ id: 'watched movie' }],
    });
    expect([byEvent[0]!.labels![4], byEvent[0]!.data![4], byEvent[0]!.labels![5], byEvent[0]!.data![5]]).toEqual(['1-Jan-2020', 1, '2-Jan-2020', 0]);
  });

  it('test_breakdown_by_person_property_for_person_on_events (test_trends.py)', async () => {
    const movie = { date_from: '-14d', events: [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0 }] };
    const single = await run('multiplePeople', '2020-01-04T13:01:01Z', { ...movie, breakdown: 'name', breakdown_type: 'person' });
    expect(single.map((s) => [s.breakdown_value, s.count, s.label]).sort()).toEqual([
      ['person1', 1, 'person1'],
      ['person2', 3, 'person2'],
      ['person3', 3, 'person3'],
    ]);
    const multiple = await run('multiplePeople', '2020-01-04T13:01:01Z', { ...movie, breakdowns: [{ property: 'name', type: 'person' }] });
    expect(multiple.map((s) => s.breakdown_value).sort()).toEqual([['person1'], ['person2'], ['person3']]);
    expect(multiple.find((s) => JSON.stringify(s.breakdown_value) === '["person1"]')).toMatchObject({ count: 1, label: 'person1' });
  });

  it('test_person_filtering_in_cohort_in_action (test_trends.py)', async () => {
    const r = await run('events', '2020-01-04T13:01:01Z', {
      actions: [{ id: actions['events:sign up by a cohort member'] }],
      breakdown: '$some_property',
    });
    expect([r[0]!.breakdown_value, r[0]!.count]).toEqual(['other_value', 1]);
  });

  it('test_filter_events_by_precalculated_cohort (test_trends.py)', async () => {
    // Sightline has no precalculated cohort tables to switch to: membership is evaluated afresh.
    const r = await run('cohortFilter', '2020-01-04T13:00:00Z', {
      properties: [{ key: 'id', value: cohorts['cohortFilter:cohort1'], type: 'cohort' }],
      events: [{ id: 'event_name' }],
    });
    expect([r[0]!.count, r[0]!.data!.at(-1)]).toEqual([2, 2]);
  });

  it('test_ilike_regression_with_current_clickhouse_version (test_trends.py)', async () => {
    // PostHog's case only checks the query runs: the same three not_icontains on "email" and
    // "name" (event and person), over a project with no "watched movie".
    const notPosthog = (key: string, type: string) => ({ key, type, value: 'posthog.com', operator: 'not_icontains' });
    const r = await run('sameDay', '2020-01-04T13:01:01Z', {
      date_from: '-14d',
      events: [{ id: 'watched movie', name: 'watched movie', type: 'events', order: 0 }],
      properties: [notPosthog('email', 'event'), notPosthog('name', 'event'), notPosthog('name', 'person')],
    });
    expect(r.map((s) => s.count)).toEqual([0]);
  });

  it.each([
    ['test_no_props_string', 'noPropsString'],
    ['test_no_props_numeric', 'noPropsNumeric'],
    ['test_no_props_boolean', 'noPropsBoolean'],
  ] as const)('%s (test_trends.py)', async (_test, dataset) => {
    // PostHog's case only checks a breakdown on a typed property with no events answers.
    const events = [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }, { id: 'no events' }];
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const r = await run(dataset, '2020-01-04T13:01:01Z', { date_from: '-14d', ...breakdown, events });
      expect(r.every((s) => s.count === 0)).toBe(true);
    }
  });

  it('test_dau_with_breakdown_filtering_with_sampling (test_trends.py)', async () => {
    for (const breakdown of [{ breakdown: '$some_property' }, { breakdowns: [{ property: '$some_property' }] }]) {
      const byAction = await run('eventsOtherValue', '2020-01-04T13:01:01Z', {
        ...breakdown,
        sampling_factor: 1,
        actions: [{ id: actions['eventsOtherValue:sign up'], math: 'dau' }],
      });
      const r = await run('eventsOtherValue', '2020-01-04T13:01:01Z', { ...breakdown, sampling_factor: 1, events: [{ id: 'sign up', math: 'dau' }] });
      expect(r.map((s) => s.label)).toEqual(['other_value', 'value', NULL]);
      expect([sum(r[0]!), r[0]!.data![5], sum(r[1]!), r[1]!.data![4]]).toEqual([1, 1, 1, 1]);
      expect(points(byAction)).toEqual(points(r));
    }
  });

  it('test_trends_count_per_user_average_aggregated_with_event_property_breakdown_with_sampling (test_trends.py)', async () => {
    const r = await run('countPerActor', '2020-02-01T00:00:00Z', {
      sampling_factor: 1,
      display: 'ActionsTable',
      breakdown: 'color',
      events: [{ id: 'viewed video', math: 'avg_count_per_actor' }],
      date_from: '2020-01-01',
      date_to: '2020-01-07',
    });
    expect(r.map((s) => [s.breakdown_value, s.aggregated_value])).toEqual([
      ['red', 2],
      ['blue', 1],
      [NULL, 1],
    ]);
  });

  it('test_weekly_active_users_aggregated_range_wider_than_week_with_sampling (test_trends.py)', async () => {
    const r = await run('activeUsers', '2020-02-01T00:00:00Z', {
      sampling_factor: 1,
      date_from: '2020-01-01',
      date_to: '2020-01-18',
      display: 'ActionsTable',
      events: [{ id: '$pageview', type: 'events', order: 0, math: 'weekly_active' }],
    });
    // Only p0 was active on 2020-01-18 or in the 6 days before.
    expect(r[0]!.aggregated_value).toBe(1);
  });

  it('test_should_throw_exception (test_trends.py)', async () => {
    // PostHog makes its query executor raise; here the analytics store is unreachable.
    const unreachable = createClient({ url: `http://127.0.0.1:${await freePort()}`, log: { level: ClickHouseLogLevel.OFF } });
    const broken = createTrendsService({ db: stores.db, ch: unreachable, cacheTtlMs: 0 });
    try {
      await expect(
        broken.run(
          { id: teams.events, timezone: 'UTC' },
          parseTrendFilter({ events: [{ id: 'sign up', name: 'sign up', type: 'events', order: 0 }] }),
          at('2020-01-04'),
        ),
      ).rejects.toThrow();
    } finally {
      await unreachable.close();
    }
  });
});
