import { createTestStores, insertGroup, insertJourneys, journeyPersonUuid, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelActorsPage, parseFunnelActorsRequest, type FunnelActorsResult } from './funnel-actors';
import { parseFunnelFilter } from './funnel-filter';
import type { FunnelStep } from './funnels.query';
import { QueryFilterError } from '../common/query-filter-error';

/**
 * The actors behind funnel steps (PostHog's FunnelsActorsQuery in an ActorsQuery), ported from
 * posthog/hogql_queries/insights/funnels/test/test_funnel_persons.py, test_funnel_strict_persons.py,
 * test_funnel_unordered_persons.py, test_funnel_trends_persons.py (and its twin
 * test_funnel_trends_actors.py), the actor assertions of breakdown_cases.py (with
 * test_funnel_unordered.py's overrides), test_funnel_trends.py, test_funnel.py's repeat-step tests
 * and ee/clickhouse/views/test/funnel/test_clickhouse_funnel.py (groups), with their data and
 * numbers. test_funnel.py's other actor assertions sit next to their counts, on the data already
 * there (funnel-steps.int.test.ts, funnel-exclusions.int.test.ts). Recordings (include_recordings,
 * matched_recordings) are not ported: docs/behaviours.md.
 */
const NOW = Date.parse('2021-06-01T00:00:00Z');
const STEPS3 = [
  { id: 'step one', order: 0 },
  { id: 'step two', order: 1 },
  { id: 'step three', order: 2 },
];
const MAY = { interval: 'day', date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00', funnel_window_days: 7, events: STEPS3 };
const JAN = {
  date_from: '2020-01-01',
  date_to: '2020-01-08',
  interval: 'day',
  funnel_window_days: 7,
  events: [
    { id: 'sign up', order: 0 },
    { id: 'play movie', order: 1 },
    { id: 'buy', order: 2 },
  ],
};

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const users = (from: number, to: number, events: [string, string][]): JourneyPeople =>
  Object.fromEntries(range(from, to).map((i) => [`user_${i}`, events.map(([event, timestamp]) => ({ event, timestamp }))]));

/** Each data set in its own project (team), so one set of stores serves every case. */
const DATA: Record<
  string,
  { people: JourneyPeople; personProperties?: Record<string, Record<string, unknown>>; distinctIds?: Record<string, string[]>; countsOnly?: boolean }
> = {
  // test_funnel_persons.py _create_sample_data_multiple_dropoffs
  dropoffs: {
    countsOnly: true,
    people: {
      ...users(0, 5, [
        ['step one', '2021-05-01 00:00:00'],
        ['step two', '2021-05-03 00:00:00'],
        ['step three', '2021-05-05 00:00:00'],
      ]),
      ...users(5, 15, [
        ['step one', '2021-05-01 00:00:00'],
        ['step two', '2021-05-03 00:00:00'],
      ]),
      ...users(15, 35, [['step one', '2021-05-01 00:00:00']]),
    },
  },
  // test_funnel_persons.py _create_sample_data
  hundredTen: {
    countsOnly: true,
    people: users(0, 110, [
      ['step one', '2021-05-01 00:00:00'],
      ['step two', '2021-05-03 00:00:00'],
      ['step three', '2021-05-05 00:00:00'],
    ]),
  },
  // test_funnel_persons.py _create_browser_breakdown_events
  browsers: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome', $browser_version: '95' } },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00', properties: { $browser: 'Chrome', $browser_version: '95' } },
        { event: 'buy', timestamp: '2020-01-01 15:00:00', properties: { $browser: 'Chrome', $browser_version: '95' } },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari', $browser_version: '14' } },
        { event: 'play movie', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'Safari', $browser_version: '14' } },
      ],
    },
    personProperties: { person1: { $country: 'PL' }, person2: { $country: 'EE' } },
  },
  // test_parses_step_breakdown_correctly
  quotes: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: "test''123" } },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00', properties: { $browser: "test''123" } },
      ],
    },
    personProperties: { person1: { $country: 'PL' } },
  },
  // test_first_time_math_basic
  firstTime: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00' },
        { event: 'sign up', timestamp: '2020-01-02 12:00:00' },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00' },
        { event: 'play movie', timestamp: '2020-01-02 13:00:00' },
      ],
    },
  },
  // test_first_time_math_multiple_ids: two persons, each with an anonymous id
  firstTimeIds: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', distinctId: 'anon1' },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00' },
      ],
      person2: [
        { event: 'sign up', timestamp: '2019-01-01 12:00:00', distinctId: 'anon2' },
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', distinctId: 'anon2' },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00' },
      ],
    },
    distinctIds: { person1: ['anon1'], person2: ['anon2'] },
  },
  // test_funnel_strict_persons.py _create_sample_data_multiple_dropoffs
  strict: {
    countsOnly: true,
    people: {
      ...users(0, 5, [
        ['step one', '2021-05-01 00:00:00'],
        ['step fake', '2021-05-02 00:00:00'],
        ['step two', '2021-05-03 00:00:00'],
        ['step three', '2021-05-05 00:00:00'],
      ]),
      ...users(5, 15, [
        ['step one', '2021-05-01 00:00:00'],
        ['step two', '2021-05-03 00:00:00'],
      ]),
      ...users(15, 35, [['step one', '2021-05-01 00:00:00']]),
    },
  },
  // test_funnel_unordered_persons.py _create_sample_data_multiple_dropoffs
  unordered: {
    countsOnly: true,
    people: {
      ...users(0, 5, [
        ['step one', '2021-05-01 00:00:00'],
        ['step three', '2021-05-03 00:00:00'],
        ['step two', '2021-05-05 00:00:00'],
      ]),
      ...users(5, 15, [
        ['step two', '2021-05-01 00:00:00'],
        ['step one', '2021-05-03 00:00:00'],
      ]),
      ...users(15, 35, [['step one', '2021-05-01 00:00:00']]),
    },
  },
  // test_funnel_trends_persons.py: user_one completes the funnel; user_two (drop-off case) only enters it
  trends: {
    people: {
      user_one: [
        { event: 'step one', timestamp: '2021-05-01 00:00:00' },
        { event: 'step two', timestamp: '2021-05-02 00:00:00' },
        { event: 'step three', timestamp: '2021-05-03 00:00:00' },
      ],
    },
  },
  trendsDropOff: { people: { user_one: [{ event: 'step one', timestamp: '2021-05-01 00:00:00' }] } },
  // test_funnel.py test_basic_funnel_with_repeat_steps
  repeat: {
    people: {
      stopped_after_signup1: [
        { event: 'user signed up', timestamp: '2021-05-02 00:00:00' },
        { event: 'user signed up', timestamp: '2021-05-02 01:00:00' },
      ],
      stopped_after_signup2: [{ event: 'user signed up', timestamp: '2021-05-02 00:00:00' }],
    },
  },
  // test_funnel.py test_basic_funnel_with_derivative_steps
  derivative: {
    people: {
      stopped_after_signup1: [
        { event: 'user signed up', timestamp: '2021-05-02 00:00:00', properties: { key: 'val' } },
        { event: 'user signed up', timestamp: '2021-05-02 01:00:00' },
      ],
      stopped_after_signup2: [{ event: 'user signed up', timestamp: '2021-05-02 00:00:00', properties: { key: 'val' } }],
    },
  },
  // test_funnel_strict.py test_strict_breakdown_events_with_multiple_properties
  strictBreakdown: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'blah', timestamp: '2020-01-01 13:00:00', properties: { $browser: 'Chrome' } },
        { event: 'play movie', timestamp: '2020-01-01 14:00:00', properties: { $browser: 'Chrome' } },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } },
      ],
    },
  },
  // test_funnel_strict.py test_basic_strict_funnel: each person's events one second apart, in the order created
  basicStrict: {
    people: Object.fromEntries(
      Object.entries({
        stopped_after_signup1: ['user signed up'],
        stopped_after_pageview1: ['$pageview', 'user signed up'],
        stopped_after_insightview: ['user signed up', '$pageview', 'blaah blaa', 'insight viewed'],
        stopped_after_insightview2: ['insight viewed', 'blaah blaa', '$pageview', 'user signed up'],
        stopped_after_insightview3: ['$pageview', 'user signed up', 'blaah blaa', '$pageview', 'insight viewed'],
        person6: ['blaah blaa', 'user signed up', 'blaah blaa', '$pageview'],
        person7: ['blaah blaa', 'user signed up', '$pageview', 'insight viewed', 'blaah blaa'],
        stopped_after_insightview6: ['insight viewed', '$pageview'],
      }).map(([person, events]) => [person, events.map((event, i) => ({ event, timestamp: `2021-05-02 00:00:0${i}` }))]),
    ),
  },
  // breakdown_cases.py test_funnel_breakdown_group: the group's industry frozen on each event
  groupBreakdown: {
    people: {
      person1: ['sign up', 'play movie', 'buy'].map((event, i) => ({
        event,
        timestamp: ['2020-01-01 12:00:00', '2020-01-01 13:00:00', '2020-01-01 15:00:00'][i]!,
        properties: { $group_0: 'org:5', $browser: 'Chrome' },
        groupProperties: { 0: { industry: 'finance' } },
      })),
      person2: ['sign up', 'play movie'].map((event, i) => ({
        event,
        timestamp: ['2020-01-02 14:00:00', '2020-01-02 16:00:00'][i]!,
        properties: { $group_0: 'org:6', $browser: 'Safari' },
        groupProperties: { 0: { industry: 'technology' } },
      })),
      person3: [
        {
          event: 'sign up',
          timestamp: '2020-01-02 14:00:00',
          properties: { $group_0: 'org:6', $browser: 'Safari' },
          groupProperties: { 0: { industry: 'technology' } },
        },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_multi_property_breakdown_event (and the string-only breakdown case)
  breakdownCases: {
    people: {
      person1: ['2020-01-01 12:00:00', '2020-01-01 13:00:00', '2020-01-01 15:00:00'].map((timestamp, i) => ({
        event: JAN.events[i]!.id,
        timestamp,
        properties: { key: 'val', $browser: 'Chrome', $browser_version: 95 },
      })),
      person2: ['2020-01-02 14:00:00', '2020-01-02 16:00:00'].map((timestamp, i) => ({
        event: JAN.events[i]!.id,
        timestamp,
        properties: { key: 'val', $browser: 'Safari', $browser_version: 15 },
      })),
      person3: [{ event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { key: 'val', $browser: 'Safari', $browser_version: 14 } }],
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_person: the breakdown is a person property
  personBrowser: {
    people: {
      person1: ['2020-01-01 12:00:00', '2020-01-01 13:00:00', '2020-01-01 15:00:00'].map((timestamp, i) => ({ event: JAN.events[i]!.id, timestamp })),
      person2: ['2020-01-02 14:00:00', '2020-01-02 16:00:00'].map((timestamp, i) => ({ event: JAN.events[i]!.id, timestamp })),
    },
    personProperties: { person1: { $browser: 'Chrome' }, person2: { $browser: 'Safari' } },
  },
  // breakdown_cases.py test_funnel_step_custom_breakdown_limit_with_nulls_included: i persons with value i (1-4), one with none
  limitNulls: {
    people: {
      ...Object.fromEntries(
        range(1, 5).flatMap((num) =>
          range(0, num).map((i) => [
            `person_${num}_${i}`,
            ['2020-01-01 12:00:00', '2020-01-01 13:00:00', '2020-01-01 15:00:00'].map((timestamp, step) => ({
              event: JAN.events[step]!.id,
              timestamp,
              properties: { some_breakdown_val: String(num) },
            })),
          ]),
        ),
      ),
      person_null: ['2020-01-01 12:00:00', '2020-01-01 13:00:00', '2020-01-01 15:00:00'].map((timestamp, step) => ({ event: JAN.events[step]!.id, timestamp })),
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_event_single_person_multiple_breakdowns
  singleMultiple: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'sign up', timestamp: '2020-01-01 13:00:00', properties: { $browser: 'Safari' } },
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
        { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0 } },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_event_single_person_events_with_multiple_properties
  singleProperties: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'play movie', timestamp: '2020-01-02 12:30:00', properties: { $browser: 'Safari' } },
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } },
      ],
    },
  },
  // test_funnel_unordered.py's override of test_funnel_step_breakdown_event_single_person_events_with_multiple_properties
  singlePropertiesUnordered: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { key: 'val', $browser: 'Chrome' } },
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { key: 'val', $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { key: 'val', $browser: 'Safari' } },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_with_first_touch_attribution / _last_touch_ (person4's
  // last value is "Alakazam" in the last-touch test; first touch never reads it)
  touch: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'buy', timestamp: '2020-01-01 13:00:00' },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-01 13:00:00' },
        { event: 'buy', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari' } },
      ],
      person3: [
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
        { event: 'buy', timestamp: '2020-01-02 15:00:00' },
      ],
      person4: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0 } },
        { event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'Alakazam' } },
      ],
      person5: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00' },
        { event: 'buy', timestamp: '2020-01-02 16:00:00' },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_with_step_attribution / _step_one_attribution
  stepTouch: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'buy', timestamp: '2020-01-01 13:00:00' },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-01 13:00:00' },
        { event: 'buy', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari' } },
      ],
      person3: [
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
        { event: 'buy', timestamp: '2020-01-02 15:00:00' },
      ],
      person4: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0 } },
        { event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'alakazam' } },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_multiple_breakdown_with_first_touch_attribution
  multiTouch: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome', $version: 'xyz' } },
        { event: 'buy', timestamp: '2020-01-01 13:00:00' },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-01 13:00:00' },
        { event: 'buy', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari', $version: 'xyz' } },
      ],
      person3: [
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
        { event: 'buy', timestamp: '2020-01-02 15:00:00', properties: { $version: 'no-mac' } },
      ],
      person4: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0, $version: 0 } },
        { event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'alakazam' } },
      ],
      person5: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00' },
        { event: 'buy', timestamp: '2020-01-02 16:00:00' },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_multiple_breakdown_with_first_touch_attribution_incomplete_funnel
  multiTouchIncomplete: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome', $version: 'xyz' } },
        { event: 'buy', timestamp: '2020-01-01 13:00:00' },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-01 13:00:00' },
        { event: 'buy', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari', $version: 'xyz' } },
      ],
      person3: [{ event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } }],
      person4: [{ event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0, $version: 0 } }],
      person5: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00' },
        { event: 'buy', timestamp: '2020-01-02 16:00:00' },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_with_step_one_attribution_incomplete_funnel (and its non-array twin)
  stepOneIncomplete: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'buy', timestamp: '2020-01-01 13:00:00' },
      ],
      person2: [{ event: 'sign up', timestamp: '2020-01-01 13:00:00' }],
      person3: [{ event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } }],
      person4: [
        { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0 } },
        { event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'alakazam' } },
      ],
    },
  },
  // breakdown_cases.py test_funnel_step_breakdown_with_first_time_for_user_math
  firstTimeBreakdown: {
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 12:30:00', properties: { $browser: 'Safari' } },
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Chrome' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } },
      ],
    },
  },
  // test_funnel_trends.py test_only_one_user_reached_one_step
  trendsOneStep: { people: { 'user a': [{ event: 'step one', timestamp: '2021-06-07 19:00:00' }] } },
  // test_funnel_trends.py test_day_interval, test_week_interval, test_all_date_range
  trendsOneDay: {
    people: {
      user_one: [
        { event: 'step one', timestamp: '2021-05-01 00:00:00' },
        { event: 'step two', timestamp: '2021-05-01 01:00:00' },
        { event: 'step three', timestamp: '2021-05-01 02:00:00' },
      ],
    },
  },
  // test_funnel_trends.py test_month_interval
  trendsMonth: {
    people: {
      user_one: [
        { event: 'step one', timestamp: '2020-05-01 00:00:00' },
        { event: 'step two', timestamp: '2020-05-01 01:00:00' },
        { event: 'step three', timestamp: '2020-05-01 02:00:00' },
      ],
    },
  },
  // test_funnel_trends.py test_one_person_in_multiple_periods_and_windows
  trendsPeriods: {
    people: {
      user_one: [
        { event: 'step one', timestamp: '2021-05-01 01:00:00' },
        { event: 'step two', timestamp: '2021-05-01 02:00:00' },
        { event: 'step three', timestamp: '2021-05-01 03:00:00' },
        { event: 'step one', timestamp: '2021-05-03 01:00:00' },
        { event: 'step two', timestamp: '2021-05-03 02:00:00' },
        { event: 'step one', timestamp: '2021-05-04 11:00:00' },
        { event: 'step two', timestamp: '2021-05-04 12:00:00' },
        { event: 'step three', timestamp: '2021-05-04 13:00:00' },
      ],
      user_two: [{ event: 'step one', timestamp: '2021-05-04 18:00:00' }],
    },
  },
  // test_funnel_trends.py test_one_person_in_multiple_periods_and_windows_in_unordered_funnel
  trendsPeriodsUnordered: {
    people: {
      user_one: [
        { event: 'step one', timestamp: '2021-05-01 01:00:00' },
        { event: 'step three', timestamp: '2021-05-01 02:00:00' },
        { event: 'step two', timestamp: '2021-05-01 03:00:00' },
        { event: 'step two', timestamp: '2021-05-03 01:00:00' },
        { event: 'step one', timestamp: '2021-05-03 02:00:00' },
        { event: 'step three', timestamp: '2021-05-04 11:00:00' },
        { event: 'step one', timestamp: '2021-05-04 12:00:00' },
        { event: 'step two', timestamp: '2021-05-04 13:00:00' },
      ],
      user_two: [{ event: 'step one', timestamp: '2021-05-04 18:00:00' }],
    },
  },
  // optional steps: A skips the optional second step, B takes every step
  optionalSteps: {
    people: {
      a: [
        { event: 'step one', timestamp: '2021-05-02 00:00:00' },
        { event: 'step three', timestamp: '2021-05-02 00:02:00' },
      ],
      b: [
        { event: 'step one', timestamp: '2021-05-02 00:00:00' },
        { event: 'step two', timestamp: '2021-05-02 00:01:00' },
        { event: 'step three', timestamp: '2021-05-02 00:02:00' },
      ],
    },
  },
  // funnel_aggregate_by_hogql: sessions are the actors
  sessions: {
    people: {
      user_a: [
        { event: 'step one', timestamp: '2021-05-02 00:00:00', properties: { $session_id: 's1' } },
        { event: 'step two', timestamp: '2021-05-02 00:01:00', properties: { $session_id: 's1' } },
      ],
      user_b: [{ event: 'step one', timestamp: '2021-05-02 00:00:00', properties: { $session_id: 's2' } }],
    },
  },
  // test_clickhouse_funnel.py test_funnel_aggregation_with_groups
  groups: {
    people: {
      user_1: [
        { event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $group_0: 'org:5' } },
        { event: 'user signed up', timestamp: '2020-01-10 14:00:00', properties: { $group_0: 'org:6' } },
      ],
      user_2: [{ event: 'paid', timestamp: '2020-01-03 14:00:00', properties: { $group_0: 'org:5' } }],
    },
  },
  // test_clickhouse_funnel.py test_funnel_group_aggregation_with_groups_entity_filtering
  groupsFiltered: {
    people: {
      user_1: [{ event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $group_0: 'org:5' } }],
      user_2: [{ event: 'paid', timestamp: '2020-01-03 14:00:00', properties: { $group_0: 'org:5' } }],
      user_3: [{ event: 'user signed up', timestamp: '2020-01-10 14:00:00', properties: { $group_0: 'org:6' } }],
    },
  },
  // test_funnel_cohort_breakdown_persons
  cohort: { people: { person1: [{ event: 'sign up', timestamp: '2020-01-02 12:00:00' }] }, personProperties: { person1: { key: 'value' } } },
};

describe('funnel actors (PostHog test_funnel_*persons.py)', () => {
  let stores: TestStores;
  let service: TrendsService;
  const teams: Record<string, number> = {};
  let cohortId = 0;

  beforeAll(async () => {
    stores = await createTestStores('funnelactors');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    await Promise.all(
      Object.entries(DATA).map(async ([name, data]) => {
        const [row] = await stores.db.query<{ id: number }>(
          "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_factors_' || $2) RETURNING id",
          [org!.organization_id, name],
        );
        teams[name] = row!.id;
        // Sets only counted need no person rows: each event carries its person's id.
        await insertJourneys(stores, data.people, {
          teamId: row!.id,
          personProperties: data.personProperties,
          distinctIds: data.distinctIds,
          createPeople: data.countsOnly !== true,
        });
      }),
    );
    for (const team of [teams['groups']!, teams['groupsFiltered']!]) {
      await insertGroup(stores.db, team, 0, 'org:5', { industry: 'finance' });
      await insertGroup(stores.db, team, 0, 'org:6', { industry: 'technology' });
    }
    cohortId = (
      await stores.db.query<{ id: number }>("INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, 'test_cohort', false, $2) RETURNING id", [
        teams['cohort'],
        JSON.stringify({ properties: { type: 'AND', values: [{ key: 'key', value: 'value', type: 'person', operator: 'exact' }] } }),
      ])
    )[0]!.id;
  });
  afterAll(() => stores.close());

  /** PostHog's get_actors: an ActorsQuery selecting ["id", "person"] over a FunnelsActorsQuery. */
  const actors = (
    team: string,
    filter: Record<string, unknown>,
    actor: Record<string, unknown>,
    page: Record<string, unknown> = {},
  ): Promise<FunnelActorsResult> =>
    service.runFunnelActors(
      { id: teams[team]!, timezone: 'UTC' },
      parseFunnelFilter(filter),
      parseFunnelActorsRequest({ kind: 'FunnelsActorsQuery', ...actor }),
      parseFunnelActorsPage({ select: ['id', 'person'], ...page }),
      NOW,
    );
  const ids = async (team: string, filter: Record<string, unknown>, actor: Record<string, unknown>) =>
    (await actors(team, filter, actor)).results.map((row) => row[0] as string);
  const uuid = (team: string, person: string) => journeyPersonUuid(person, teams[team]);
  const sorted = (list: string[]) => [...list].sort();

  describe('test_funnel_persons.py', () => {
    it('test_first_step (test_funnel_persons.py)', async () => {
      expect((await ids('dropoffs', MAY, { funnelStep: 1 })).length).toBe(35);
    });

    it('test_last_step (test_funnel_persons.py)', async () => {
      expect((await ids('dropoffs', MAY, { funnelStep: 3 })).length).toBe(5);
    });

    it('test_second_step_dropoff (test_funnel_persons.py)', async () => {
      expect((await ids('dropoffs', MAY, { funnelStep: -2 })).length).toBe(20);
    });

    it('test_last_step_dropoff (test_funnel_persons.py)', async () => {
      const found = await ids('dropoffs', MAY, { funnelStep: -3 });
      expect(sorted(found)).toEqual(sorted(range(5, 15).map((i) => uuid('dropoffs', `user_${i}`))));
    });

    it('test_basic_offset (test_funnel_persons.py)', async () => {
      const first = await actors('hundredTen', MAY, { funnelStep: 1 });
      expect(first.results.length).toBe(100);
      expect(first).toMatchObject({ hasMore: true, limit: 100, offset: 0 });
      const next = await actors('hundredTen', MAY, { funnelStep: 1 }, { offset: 100 });
      expect(next.results.length).toBe(10);
      expect(next).toMatchObject({ hasMore: false, offset: 100 });
      // Pages neither repeat nor skip an actor.
      expect(new Set([...first.results, ...next.results].map((r) => r[0])).size).toBe(110);
    });

    it('test_steps_with_custom_steps_parameter_are_equivalent_to_funnel_step (test_funnel_persons.py)', async () => {
      const table: [number, number[], number][] = [
        [1, [1, 2, 3], 35],
        [2, [2, 3], 15],
        [3, [3], 5],
        [-2, [1], 20],
        [-3, [2], 10],
      ];
      for (const [funnelStep, funnelCustomSteps, count] of table) {
        const byStep = await actors('dropoffs', MAY, { funnelStep });
        const byCustom = await actors('dropoffs', MAY, { funnelStep, funnelCustomSteps });
        expect(byCustom.results).toEqual(byStep.results);
        expect(byStep.results.length).toBe(count);
      }
    });

    it('test_steps_with_custom_steps_parameter_where_funnel_step_equivalence_isnt_possible (test_funnel_persons.py)', async () => {
      const table: [number[], number][] = [
        [[1, 2], 30],
        [[1, 3], 25],
        [[3, 1], 25],
        [[1, 3, 3, 1], 25],
      ];
      for (const [funnelCustomSteps, count] of table) expect((await ids('dropoffs', MAY, { funnelCustomSteps })).length).toBe(count);
    });

    it('test_steps_with_custom_steps_parameter_overrides_funnel_step (test_funnel_persons.py)', async () => {
      expect((await ids('dropoffs', MAY, { funnelStep: 1, funnelCustomSteps: [3] })).length).toBe(5);
    });

    it('test_first_step_breakdowns (test_funnel_persons.py)', async () => {
      const filter = { ...JAN, breakdown_type: 'event', breakdown: '$browser' };
      expect(sorted(await ids('browsers', filter, { funnelStep: 1 }))).toEqual(sorted([uuid('browsers', 'person1'), uuid('browsers', 'person2')]));
      expect(await ids('browsers', filter, { funnelStep: 1, funnelStepBreakdown: ['Chrome'] })).toEqual([uuid('browsers', 'person1')]);
      expect(await ids('browsers', filter, { funnelStep: 1, funnelStepBreakdown: ['Safari'] })).toEqual([uuid('browsers', 'person2')]);
    });

    it('test_first_step_breakdowns_with_multi_property_breakdown (test_funnel_persons.py)', async () => {
      const filter = { ...JAN, breakdown_type: 'event', breakdown: ['$browser', '$browser_version'] };
      expect((await ids('browsers', filter, { funnelStep: 1 })).length).toBe(2);
      expect(await ids('browsers', filter, { funnelStep: 1, funnelStepBreakdown: ['Chrome', '95'] })).toEqual([uuid('browsers', 'person1')]);
      expect(await ids('browsers', filter, { funnelStep: 1, funnelStepBreakdown: ['Safari', '14'] })).toEqual([uuid('browsers', 'person2')]);
    });

    it('test_first_step_breakdown_person (test_funnel_persons.py)', async () => {
      const filter = { ...JAN, breakdown_type: 'person', breakdown: '$country' };
      expect((await ids('browsers', filter, { funnelStep: 1 })).length).toBe(2);
      const ee = await actors('browsers', filter, { funnelStep: 1, funnelStepBreakdown: ['EE'] });
      expect(ee.results.map((r) => r[0])).toEqual([uuid('browsers', 'person2')]);
      // Custom steps give the same answer for a breakdown value.
      expect((await actors('browsers', filter, { funnelStep: 1, funnelCustomSteps: [1, 2, 3], funnelStepBreakdown: ['EE'] })).results).toEqual(ee.results);
      expect(await ids('browsers', filter, { funnelStep: 1, funnelStepBreakdown: ['PL'] })).toEqual([uuid('browsers', 'person1')]);
    });

    it('test_funnel_cohort_breakdown_persons (test_funnel_persons.py)', async () => {
      const filter = { ...JAN, breakdown_type: 'cohort', breakdown: [cohortId] };
      expect(await ids('cohort', filter, { funnelStep: 1 })).toEqual([uuid('cohort', 'person1')]);
      expect(await ids('cohort', filter, { funnelStep: 1, funnelStepBreakdown: cohortId })).toEqual([uuid('cohort', 'person1')]);
    });

    it('test_parses_step_breakdown_correctly (test_funnel_persons.py)', async () => {
      const filter = { ...JAN, events: JAN.events.slice(0, 2), breakdown_type: 'event', breakdown: '$browser' };
      expect(await ids('quotes', filter, { funnelStep: 1, funnelStepBreakdown: ["test''123"] })).toEqual([uuid('quotes', 'person1')]);
    });

    it('test_first_time_math_basic (test_funnel_persons.py)', async () => {
      const events = [
        { id: 'sign up', order: 0, math: 'first_time_for_user' },
        { id: 'play movie', order: 1 },
      ];
      const withBreakdown = { ...JAN, events, breakdown_type: 'event', breakdown: '$browser' };
      expect(await ids('firstTime', withBreakdown, { funnelStep: 1 })).toEqual([uuid('firstTime', 'person1')]);
      expect(await ids('firstTime', { ...JAN, events, date_from: '2020-01-02' }, { funnelStep: 1 })).toEqual([]);
    });

    it('test_first_time_math_multiple_ids (test_funnel_persons.py)', async () => {
      const events = [
        { id: 'sign up', order: 0, math: 'first_time_for_user' },
        { id: 'play movie', order: 1 },
      ];
      const distinctIds = (r: FunnelActorsResult) => r.results.map((row) => sorted((row[1] as { distinct_ids: string[] }).distinct_ids));
      const first = await actors('firstTimeIds', { ...JAN, events }, { funnelStep: 1 });
      expect(distinctIds(first)).toEqual([['anon1', 'person1']]);
      const both = await actors('firstTimeIds', { ...JAN, events, date_from: '2019-01-01', breakdown_type: 'event', breakdown: '$browser' }, { funnelStep: 1 });
      expect(sorted(distinctIds(both).map((d) => d.join()))).toEqual(['anon1,person1', 'anon2,person2']);
    });

    it("answers the person as PostHog's PersonStrategy does, and the default select", async () => {
      const [row] = (await actors('browsers', JAN, { funnelStep: 3 })).results;
      expect(row).toEqual([
        uuid('browsers', 'person1'),
        { id: uuid('browsers', 'person1'), properties: { $country: 'PL' }, is_identified: false, created_at: expect.any(String), distinct_ids: ['person1'] },
      ]);
      const whole = await service.runFunnelActors(
        { id: teams['browsers']!, timezone: 'UTC' },
        parseFunnelFilter(JAN),
        parseFunnelActorsRequest({ funnelStep: 3 }),
        parseFunnelActorsPage({}),
        NOW,
      );
      expect(whole).toMatchObject({ columns: ['person', 'id', 'person.$delete'], hasMore: false, limit: 100, offset: 0, missing_actors_count: 0 });
      expect(whole.results).toEqual([[row![1], row![0], 1]]);
    });

    it("another project's funnel is never read", async () => {
      // The dropoffs data asked from the browsers project: no step-one events there in May 2021.
      expect(await ids('browsers', MAY, { funnelStep: 1 })).toEqual([]);
    });
  });

  describe('test_funnel_strict_persons.py', () => {
    const strict = { ...MAY, funnel_order_type: 'strict' };
    it('test_first_step (test_funnel_strict_persons.py)', async () => {
      expect((await ids('strict', strict, { funnelStep: 1 })).length).toBe(35);
    });
    it('test_second_step (test_funnel_strict_persons.py)', async () => {
      expect((await ids('strict', strict, { funnelStep: 2 })).length).toBe(10);
    });
    it('test_second_step_dropoff (test_funnel_strict_persons.py)', async () => {
      expect((await ids('strict', strict, { funnelStep: -2 })).length).toBe(25);
    });
    it('test_third_step (test_funnel_strict_persons.py)', async () => {
      expect((await ids('strict', strict, { funnelStep: 3 })).length).toBe(0);
    });
  });

  describe('test_funnel_unordered_persons.py', () => {
    const unordered = { ...MAY, funnel_order_type: 'unordered' };
    it('test_invalid_steps (test_funnel_unordered_persons.py)', () => {
      expect(() => parseFunnelActorsRequest({ funnelStep: 'blah' })).toThrow(QueryFilterError);
      expect(() => parseFunnelActorsRequest({ funnelStep: 0 })).toThrow("Funnel steps are 1-indexed, so step 0 doesn't exist");
      expect(() => parseFunnelActorsRequest({ funnelStep: -1 })).toThrow('The first valid drop-off argument for funnelStep is -2');
    });
    it('test_first_step (test_funnel_unordered_persons.py)', async () => {
      expect((await ids('unordered', unordered, { funnelStep: 1 })).length).toBe(35);
    });
    it('test_last_step (test_funnel_unordered_persons.py)', async () => {
      expect((await ids('unordered', unordered, { funnelStep: 3 })).length).toBe(5);
    });
    it('test_second_step_dropoff (test_funnel_unordered_persons.py)', async () => {
      expect((await ids('unordered', unordered, { funnelStep: -2 })).length).toBe(20);
    });
    it('test_last_step_dropoff (test_funnel_unordered_persons.py)', async () => {
      expect((await ids('unordered', unordered, { funnelStep: -3 })).length).toBe(10);
    });
  });

  describe('test_funnel_trends_persons.py', () => {
    const trends = {
      funnel_viz_type: 'trends',
      interval: 'day',
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-07 23:59:59',
      funnel_window_days: 14,
      funnel_from_step: 0,
      events: STEPS3,
    };
    it('test_funnel_trend_persons_returns_recordings: the converted persons of a period (test_funnel_trends_persons.py, test_funnel_trends_actors.py)', async () => {
      const found = await ids(
        'trends',
        { funnel_to_step: 1, ...trends },
        { funnelTrendsDropOff: false, funnelTrendsEntrancePeriodStart: '2021-05-01 00:00:00' },
      );
      expect(found).toEqual([uuid('trends', 'user_one')]);
    });
    it('test_funnel_trend_persons_with_no_to_step (test_funnel_trends_persons.py, test_funnel_trends_actors.py)', async () => {
      const found = await ids('trends', trends, { funnelTrendsDropOff: false, funnelTrendsEntrancePeriodStart: '2021-05-01 00:00:00' });
      expect(found).toEqual([uuid('trends', 'user_one')]);
      // Another period, or its drop-offs: nobody.
      expect(await ids('trends', trends, { funnelTrendsDropOff: true, funnelTrendsEntrancePeriodStart: '2021-05-01 00:00:00' })).toEqual([]);
      expect(await ids('trends', trends, { funnelTrendsDropOff: false, funnelTrendsEntrancePeriodStart: '2021-05-02T00:00:00Z' })).toEqual([]);
    });
    it('test_funnel_trend_persons_with_drop_off (test_funnel_trends_persons.py, test_funnel_trends_actors.py)', async () => {
      const found = await ids('trendsDropOff', trends, { funnelTrendsDropOff: true, funnelTrendsEntrancePeriodStart: '2021-05-01 00:00:00' });
      expect(found).toEqual([uuid('trendsDropOff', 'user_one')]);
      expect(await ids('trendsDropOff', trends, { funnelTrendsDropOff: false, funnelTrendsEntrancePeriodStart: '2021-05-01 00:00:00' })).toEqual([]);
    });
  });

  describe('test_funnel_trends.py _get_actors_at_step', () => {
    /** PostHog's _get_actors_at_step: the persons of one entrance period, as their distinct ids. */
    const periodActors = async (team: string, filter: Record<string, unknown>, start: string, dropOff: boolean, timezone = 'UTC') =>
      (
        await service.runFunnelActors(
          { id: teams[team]!, timezone },
          parseFunnelFilter(filter),
          parseFunnelActorsRequest({ kind: 'FunnelsActorsQuery', funnelTrendsDropOff: dropOff, funnelTrendsEntrancePeriodStart: start }),
          parseFunnelActorsPage({}),
          NOW,
        )
      ).results.map((row) => sorted((row[0] as { distinct_ids: string[] }).distinct_ids));
    const trend = (extra: Record<string, unknown>) => ({
      funnel_viz_type: 'trends',
      display: 'ActionsLineGraph',
      interval: 'day',
      funnel_window_days: 7,
      events: STEPS3,
      ...extra,
    });

    for (const timezone of ['US/Pacific', 'UTC']) {
      it(`test_only_one_user_reached_one_step, ${timezone} (test_funnel_trends.py)`, async () => {
        const filter = trend({ date_from: '2021-06-07 00:00:00', date_to: '2021-06-13 23:59:59' });
        expect(await periodActors('trendsOneStep', filter, '2021-06-07 00:00:00', true, timezone)).toEqual([['user a']]);
        expect(await periodActors('trendsOneStep', filter, '2021-06-07 00:00:00', false, timezone)).toEqual([]);
        expect(await periodActors('trendsOneStep', filter, '2021-06-08 00:00:00', true, timezone)).toEqual([]);
      });

      it(`test_month_interval, ${timezone} (test_funnel_trends.py)`, async () => {
        const filter = trend({ interval: 'month', date_from: '2020-01-01 00:00:00', date_to: '2020-07-01 00:00:00' });
        // 2020-05-01 00:00 UTC is still April in US/Pacific.
        const start = timezone === 'UTC' ? '2020-05-01 00:00:00' : '2020-04-01 00:00:00';
        expect(await periodActors('trendsMonth', filter, start, false, timezone)).toEqual([['user_one']]);
      });
    }

    it('test_day_interval (test_funnel_trends.py)', async () => {
      const filter = trend({ date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' });
      expect(await periodActors('trendsOneDay', filter, '2021-05-01 00:00:00', false)).toEqual([['user_one']]);
    });

    it('test_week_interval (test_funnel_trends.py)', async () => {
      const filter = trend({ interval: 'week', date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' });
      expect(await periodActors('trendsOneDay', filter, '2021-04-25 00:00:00', false)).toEqual([['user_one']]);
    });

    it('test_all_date_range (test_funnel_trends.py)', async () => {
      const filter = trend({ date_from: 'all' });
      expect(await periodActors('trendsOneDay', filter, '2021-05-01 00:00:00', false)).toEqual([['user_one']]);
    });

    for (const [name, team, order] of [
      ['test_one_person_in_multiple_periods_and_windows', 'trendsPeriods', 'ordered'],
      ['test_one_person_in_multiple_periods_and_windows_in_unordered_funnel', 'trendsPeriodsUnordered', 'unordered'],
    ] as const) {
      it(`${name} (test_funnel_trends.py)`, async () => {
        const { funnel_window_days: _days, ...base } = trend({ date_from: '2021-05-01 00:00:00', date_to: '2021-05-04 23:59:59' });
        const filter = { ...base, funnel_window_interval: 1, funnel_order_type: order };
        expect(await periodActors(team, filter, '2021-05-04 00:00:00', true)).toEqual([['user_two']]);
        expect(await periodActors(team, filter, '2021-05-04 00:00:00', false)).toEqual([['user_one']]);
      });
    }
  });

  describe('test_funnel.py and groups', () => {
    it('test_basic_funnel_with_repeat_steps: _get_actor_ids_at_step (test_funnel.py)', async () => {
      const filter = {
        events: [
          { id: 'user signed up', type: 'events', order: 0 },
          { id: 'user signed up', type: 'events', order: 1 },
        ],
        funnel_window_days: 14,
        date_from: '2021-05-01',
        date_to: '2021-05-07',
      };
      const steps = (await service.runFunnel({ id: teams['repeat']!, timezone: 'UTC' }, parseFunnelFilter(filter), NOW)).result as FunnelStep[];
      expect(steps.map((s) => s.count)).toEqual([2, 1]);
      expect(sorted(await ids('repeat', filter, { funnelStep: 1 }))).toEqual(
        sorted([uuid('repeat', 'stopped_after_signup1'), uuid('repeat', 'stopped_after_signup2')]),
      );
      expect(await ids('repeat', filter, { funnelStep: 2 })).toEqual([uuid('repeat', 'stopped_after_signup1')]);
    });

    it('test_basic_funnel_with_repeat_step_updated_param (test_funnel.py)', async () => {
      const filter = {
        events: [
          { id: 'user signed up', type: 'events', order: 0 },
          { id: 'user signed up', type: 'events', order: 1 },
        ],
        funnel_window_interval: 14,
        funnel_window_interval_unit: 'day',
        date_from: '2021-05-01',
        date_to: '2021-05-07',
      };
      expect(sorted(await ids('repeat', filter, { funnelStep: 1 }))).toEqual(
        sorted([uuid('repeat', 'stopped_after_signup1'), uuid('repeat', 'stopped_after_signup2')]),
      );
      expect(await ids('repeat', filter, { funnelStep: 2 })).toEqual([uuid('repeat', 'stopped_after_signup1')]);
    });

    it('test_basic_funnel_with_derivative_steps (test_funnel.py)', async () => {
      const filter = {
        events: [
          { id: 'user signed up', type: 'events', order: 0, properties: { key: 'val' } },
          { id: 'user signed up', type: 'events', order: 1 },
        ],
        funnel_window_days: 14,
        date_from: '2021-05-01',
        date_to: '2021-05-07',
      };
      expect(sorted(await ids('derivative', filter, { funnelStep: 1 }))).toEqual(
        sorted([uuid('derivative', 'stopped_after_signup1'), uuid('derivative', 'stopped_after_signup2')]),
      );
      expect(await ids('derivative', filter, { funnelStep: 2 })).toEqual([uuid('derivative', 'stopped_after_signup1')]);
    });

    it('test_strict_breakdown_events_with_multiple_properties (test_funnel_strict.py)', async () => {
      const filter = {
        funnel_order_type: 'strict',
        events: JAN.events.slice(0, 2),
        date_from: '2020-01-01',
        date_to: '2020-01-08',
        funnel_window_days: 7,
        breakdown_type: 'event',
        breakdown: '$browser',
      };
      const at = (step: number, value: string) => ids('strictBreakdown', filter, { funnelStep: step, funnelStepBreakdown: [value] });
      expect(await at(1, 'Safari')).toEqual([uuid('strictBreakdown', 'person2')]);
      expect(await at(2, 'Safari')).toEqual([uuid('strictBreakdown', 'person2')]);
      expect(await at(1, 'Chrome')).toEqual([uuid('strictBreakdown', 'person1')]);
      expect(await at(2, 'Chrome')).toEqual([]);
    });

    it('test_basic_strict_funnel (test_funnel_strict.py)', async () => {
      const filter = {
        funnel_order_type: 'strict',
        events: [
          { id: 'user signed up', order: 0 },
          { id: '$pageview', order: 1 },
          { id: 'insight viewed', order: 2 },
        ],
        date_from: '2021-05-01',
        date_to: '2021-05-07',
      };
      const who = (...people: string[]) => sorted(people.map((p) => uuid('basicStrict', p)));
      expect(sorted(await ids('basicStrict', filter, { funnelStep: 1 }))).toEqual(
        who(
          'stopped_after_signup1',
          'stopped_after_pageview1',
          'stopped_after_insightview',
          'stopped_after_insightview2',
          'stopped_after_insightview3',
          'person6',
          'person7',
        ),
      );
      expect(sorted(await ids('basicStrict', filter, { funnelStep: 2 }))).toEqual(who('stopped_after_insightview', 'person7'));
      expect(await ids('basicStrict', filter, { funnelStep: 3 })).toEqual(who('person7'));
    });

    it('test_funnel_breakdown_group: persons under a group breakdown (breakdown_cases.py)', async () => {
      const filter = { ...JAN, breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 };
      const at = (step: number, value: string) => ids('groupBreakdown', filter, { funnelStep: step, funnelStepBreakdown: value });
      const who = (...people: string[]) => sorted(people.map((p) => uuid('groupBreakdown', p)));
      expect(await at(1, 'finance')).toEqual(who('person1'));
      expect(await at(2, 'finance')).toEqual(who('person1'));
      expect(sorted(await at(1, 'technology'))).toEqual(who('person2', 'person3'));
      expect(await at(2, 'technology')).toEqual(who('person2'));
    });

    for (const order of ['ordered', 'strict', 'unordered']) {
      it(`test_funnel_step_multi_property_breakdown_event, ${order} (breakdown_cases.py)`, async () => {
        const filter = { ...JAN, funnel_order_type: order, breakdown_type: 'event', breakdown: ['$browser', '$browser_version'] };
        const at = (step: number, value: string[]) => ids('breakdownCases', filter, { funnelStep: step, funnelStepBreakdown: value });
        const who = (...people: string[]) => people.map((p) => uuid('breakdownCases', p));
        expect(await at(1, ['Safari', '14'])).toEqual(who('person3'));
        expect(await at(2, ['Safari', '14'])).toEqual([]);
        expect(await at(1, ['Safari', '15'])).toEqual(who('person2'));
        expect(await at(2, ['Safari', '15'])).toEqual(who('person2'));
        expect(await at(1, ['Chrome', '95'])).toEqual(who('person1'));
        expect(await at(2, ['Chrome', '95'])).toEqual(who('person1'));
      });

      it(`test_funnel_step_breakdown_event_with_string_only_breakdown, ${order} (breakdown_cases.py)`, async () => {
        const filter = { ...JAN, funnel_order_type: order, breakdown_type: 'event', breakdown: '$browser' };
        const at = (step: number, value: string) => ids('breakdownCases', filter, { funnelStep: step, funnelStepBreakdown: value });
        const who = (...people: string[]) => sorted(people.map((p) => uuid('breakdownCases', p)));
        expect(await at(1, 'Chrome')).toEqual(who('person1'));
        expect(await at(2, 'Chrome')).toEqual(who('person1'));
        expect(sorted(await at(1, 'Safari'))).toEqual(who('person2', 'person3'));
        expect(await at(2, 'Safari')).toEqual(who('person2'));
      });
    }

    for (const order of ['ordered', 'strict', 'unordered']) {
      const JAN_TWO = (events: string[]) => events.map((id, i) => ({ id, order: i }));
      const who = (team: string, ...people: string[]) => sorted(people.map((p) => uuid(team, p)));
      const at = async (team: string, filter: Record<string, unknown>, step: number, value: unknown) =>
        sorted(await ids(team, { ...filter, funnel_order_type: order }, { funnelStep: step, funnelStepBreakdown: value }));

      it(`test_funnel_step_breakdown_event actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = { ...JAN, breakdown_type: 'event', breakdown: ['$browser'] };
        expect(await at('breakdownCases', filter, 1, 'Chrome')).toEqual(who('breakdownCases', 'person1'));
        expect(await at('breakdownCases', filter, 2, 'Chrome')).toEqual(who('breakdownCases', 'person1'));
        expect(await at('breakdownCases', filter, 1, 'Safari')).toEqual(who('breakdownCases', 'person2', 'person3'));
        expect(await at('breakdownCases', filter, 2, 'Safari')).toEqual(who('breakdownCases', 'person2'));
      });

      it(`test_funnel_step_breakdown_event_no_type actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = { ...JAN, breakdown: ['$browser'] };
        expect(await at('breakdownCases', filter, 1, 'Chrome')).toEqual(who('breakdownCases', 'person1'));
        expect(await at('breakdownCases', filter, 2, 'Chrome')).toEqual(who('breakdownCases', 'person1'));
        expect(await at('breakdownCases', filter, 1, 'Safari')).toEqual(who('breakdownCases', 'person2', 'person3'));
        expect(await at('breakdownCases', filter, 2, 'Safari')).toEqual(who('breakdownCases', 'person2'));
      });

      it(`test_funnel_step_breakdown_person actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = { ...JAN, breakdown_type: 'person', breakdown: ['$browser'] };
        expect(await at('personBrowser', filter, 1, 'Chrome')).toEqual(who('personBrowser', 'person1'));
        expect(await at('personBrowser', filter, 2, 'Chrome')).toEqual(who('personBrowser', 'person1'));
        expect(await at('personBrowser', filter, 1, 'Safari')).toEqual(who('personBrowser', 'person2'));
        expect(await at('personBrowser', filter, 3, 'Safari')).toEqual([]);
      });

      it(`test_funnel_step_custom_breakdown_limit_with_nulls_included actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = { ...JAN, breakdown_type: 'event', breakdown_limit: 6, breakdown: ['some_breakdown_val'] };
        for (const num of range(1, 5)) expect((await at('limitNulls', filter, 3, String(num))).length).toBe(num);
        expect(await at('limitNulls', filter, 1, '')).toEqual(who('limitNulls', 'person_null'));
        expect(await at('limitNulls', filter, 3, '')).toEqual(who('limitNulls', 'person_null'));
      });

      it(`test_funnel_step_breakdown_event_single_person_multiple_breakdowns actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = {
          ...JAN,
          events: [
            { id: 'sign up', order: 0 },
            { id: 'other event', order: 0 },
          ],
          breakdown_type: 'event',
          breakdown: ['$browser'],
          breakdown_attribution_type: 'step',
          breakdown_attribution_value: '0',
        };
        for (const value of ['0', 'Chrome', 'Mac', 'Safari']) expect(await at('singleMultiple', filter, 1, value)).toEqual(who('singleMultiple', 'person1'));
      });

      it(`test_funnel_step_breakdown_event_single_person_events_with_multiple_properties actors, ${order} (breakdown_cases.py)`, async () => {
        // test_funnel_unordered.py overrides the case with its own events (and a non-list breakdown), asserting the same actors.
        const team = order === 'unordered' ? 'singlePropertiesUnordered' : 'singleProperties';
        const breakdown = order === 'unordered' ? '$browser' : ['$browser'];
        const filter = { ...JAN, events: JAN_TWO(['sign up', 'play movie']), breakdown_type: 'event', breakdown, breakdown_attribution_type: 'all_events' };
        const value = (v: string) => (order === 'unordered' ? [v] : v);
        expect(await at(team, filter, 1, value('Chrome'))).toEqual(who(team, 'person1'));
        expect(await at(team, filter, 2, value('Chrome'))).toEqual([]);
        expect(await at(team, filter, 1, value('Safari'))).toEqual(who(team, 'person1'));
        expect(await at(team, filter, 2, value('Safari'))).toEqual(who(team, 'person1'));
      });

      // test_funnel_unordered.py's overrides: PostHog's UDF answers step attribution other than step 0 of an
      // unordered funnel with a ValidationError, so there are no actors to list.
      const refusedUnordered = (filter: Record<string, unknown>) =>
        expect(() => parseFunnelFilter({ ...filter, funnel_order_type: order })).toThrow(
          'Only the first step can be used for breakdown attribution in unordered funnels.',
        );

      const touchFilter = (attribution: Record<string, unknown>) => ({
        ...JAN,
        events: JAN_TWO(['sign up', 'buy']),
        breakdown_type: 'event',
        breakdown: ['$browser'],
        ...attribution,
      });

      it(`test_funnel_step_breakdown_with_first_touch_attribution actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = touchFilter({ breakdown_attribution_type: 'first_touch' });
        const expected: [string, string][] = [
          ['', 'person5'],
          ['0', 'person4'],
          ['Chrome', 'person1'],
          ['Mac', 'person3'],
          ['Safari', 'person2'],
        ];
        for (const [value, person] of expected) expect(await at('touch', filter, 1, value)).toEqual(who('touch', person));
      });

      it(`test_funnel_step_breakdown_with_last_touch_attribution actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = touchFilter({ breakdown_attribution_type: 'last_touch' });
        const expected: [string, string][] = [
          ['', 'person5'],
          ['Alakazam', 'person4'],
          ['Chrome', 'person1'],
          ['Mac', 'person3'],
          ['Safari', 'person2'],
        ];
        for (const [value, person] of expected) expect(await at('touch', filter, 1, value)).toEqual(who('touch', person));
      });

      it(`test_funnel_step_breakdown_with_step_attribution actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = touchFilter({ breakdown_attribution_type: 'step', breakdown_attribution_value: '0' });
        if (order === 'unordered') {
          // test_funnel_unordered.py's override: any step may come first, so every value counts; it asserts Mac's actors.
          expect(await at('stepTouch', filter, 1, 'Mac')).toEqual(who('stepTouch', 'person3'));
          return;
        }
        const expected: [string, string][] = [
          ['', 'person2'],
          ['0', 'person4'],
          ['Chrome', 'person1'],
          ['Mac', 'person3'],
        ];
        for (const [value, person] of expected) expect(await at('stepTouch', filter, 1, value)).toEqual(who('stepTouch', person));
      });

      it(`test_funnel_step_breakdown_with_step_one_attribution actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = touchFilter({ breakdown_attribution_type: 'step', breakdown_attribution_value: '1' });
        if (order === 'unordered') return refusedUnordered(filter);
        expect(await at('stepTouch', filter, 1, '')).toEqual(who('stepTouch', 'person1', 'person3'));
        expect(await at('stepTouch', filter, 1, 'Safari')).toEqual(who('stepTouch', 'person2'));
        expect(await at('stepTouch', filter, 1, 'alakazam')).toEqual(who('stepTouch', 'person4'));
      });

      it(`test_funnel_step_multiple_breakdown_with_first_touch_attribution actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = touchFilter({ breakdown: ['$browser', '$version'], breakdown_attribution_type: 'first_touch' });
        const expected: [string[], string][] = [
          [['', ''], 'person5'],
          [['0', '0'], 'person4'],
          [['Chrome', 'xyz'], 'person1'],
          [['Mac', ''], 'person3'],
          [['Safari', 'xyz'], 'person2'],
        ];
        for (const [value, person] of expected) expect(await at('multiTouch', filter, 1, value)).toEqual(who('multiTouch', person));
      });

      it(`test_funnel_step_multiple_breakdown_with_first_touch_attribution_incomplete_funnel actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = touchFilter({ breakdown: ['$browser', '$version'], breakdown_attribution_type: 'first_touch' });
        const expected: [string[], string][] = [
          [['', ''], 'person5'],
          [['0', '0'], 'person4'],
          [['Chrome', 'xyz'], 'person1'],
          [['Mac', ''], 'person3'],
          [['Safari', 'xyz'], 'person2'],
        ];
        for (const [value, person] of expected) expect(await at('multiTouchIncomplete', filter, 1, value)).toEqual(who('multiTouchIncomplete', person));
        expect(await at('multiTouchIncomplete', filter, 2, ['Mac', ''])).toEqual([]);
      });

      for (const [name, breakdown] of [
        ['test_funnel_step_breakdown_with_step_one_attribution_incomplete_funnel', ['$browser']],
        ['test_funnel_step_non_array_breakdown_with_step_one_attribution_incomplete_funnel', '$browser'],
      ] as const) {
        it(`${name} actors, ${order} (breakdown_cases.py)`, async () => {
          const filter = touchFilter({ breakdown, breakdown_attribution_type: 'step', breakdown_attribution_value: '1' });
          if (order === 'unordered') return refusedUnordered(filter);
          expect(await at('stepOneIncomplete', filter, 1, '')).toEqual(who('stepOneIncomplete', 'person1'));
          expect(await at('stepOneIncomplete', filter, 1, 'alakazam')).toEqual(who('stepOneIncomplete', 'person4'));
        });
      }

      it(`test_funnel_step_breakdown_with_first_time_for_user_math actors, ${order} (breakdown_cases.py)`, async () => {
        const filter = {
          ...JAN,
          events: [
            { id: 'sign up', order: 0, math: 'first_time_for_user' },
            { id: 'play movie', order: 1 },
          ],
          breakdown_type: 'event',
          breakdown: ['$browser'],
          breakdown_attribution_type: 'all_events',
        };
        expect(await at('firstTimeBreakdown', filter, 1, 'Safari')).toEqual(who('firstTimeBreakdown', 'person1'));
        expect(await at('firstTimeBreakdown', filter, 2, 'Safari')).toEqual(who('firstTimeBreakdown', 'person1'));
      });

      it(`test_funnel_cohort_breakdown actors, ${order} (breakdown_cases.py)`, async () => {
        const both = { ...JAN, breakdown_type: 'cohort', breakdown: ['all', cohortId], breakdown_attribution_type: 'step', breakdown_attribution_value: 0 };
        expect(await at('cohort', both, 1, cohortId)).toEqual(who('cohort', 'person1'));
        expect(await at('cohort', both, 2, cohortId)).toEqual([]);
        // ALL_USERS_COHORT_ID is 0 (posthog/queries/breakdown_props.py).
        expect(await at('cohort', both, 1, 0)).toEqual(who('cohort', 'person1'));
        expect(await at('cohort', both, 2, 0)).toEqual([]);
        // Not a list (PostHog's filter here names no order type: ordered).
        const one = { ...JAN, breakdown_type: 'cohort', breakdown: cohortId };
        expect(await ids('cohort', one, { funnelStep: 1, funnelStepBreakdown: cohortId })).toEqual(who('cohort', 'person1'));
        expect(await ids('cohort', one, { funnelStep: 2, funnelStepBreakdown: cohortId })).toEqual([]);
      });
    }

    it('optional steps: a step lists the actors its count holds', async () => {
      const filter = { ...MAY, events: [STEPS3[0], { ...STEPS3[1], optionalInFunnel: true }, STEPS3[2]] };
      const steps = (await service.runFunnel({ id: teams['optionalSteps']!, timezone: 'UTC' }, parseFunnelFilter(filter), NOW)).result as FunnelStep[];
      expect(steps.map((s) => s.count)).toEqual([2, 1, 2]);
      const who = (...people: string[]) => sorted(people.map((p) => uuid('optionalSteps', p)));
      expect(sorted(await ids('optionalSteps', filter, { funnelStep: 3 }))).toEqual(who('a', 'b'));
      expect(await ids('optionalSteps', filter, { funnelStep: 2 })).toEqual(who('b'));
      expect(await ids('optionalSteps', filter, { funnelStep: -2 })).toEqual(who('a'));
      expect(await ids('optionalSteps', filter, { funnelStep: -3 })).toEqual([]);
    });

    it('funnel_aggregate_by_hogql: the actors are the values, each as {id} (docs/behaviours.md)', async () => {
      const filter = { ...MAY, events: STEPS3.slice(0, 2), funnel_aggregate_by_hogql: 'properties.$session_id' };
      const first = await actors('sessions', filter, { funnelStep: 1 });
      expect(first.results).toEqual([
        ['s1', { id: 's1' }],
        ['s2', { id: 's2' }],
      ]);
      expect(first.missing_actors_count).toBe(2);
      expect(await ids('sessions', filter, { funnelStep: -2 })).toEqual(['s2']);
    });

    it('properties and orderBy are refused rather than ignored', () => {
      expect(() => parseFunnelActorsPage({ properties: [{ key: 'a', value: 'b' }] })).toThrow('properties is not served for funnel actors.');
      expect(() => parseFunnelActorsPage({ orderBy: ['person'] })).toThrow(QueryFilterError);
      expect(parseFunnelActorsPage({ search: ' ', properties: [], orderBy: [], limit: 1e6 })).toEqual({ select: null, search: null, limit: 50_000, offset: 0 });
    });

    it("search: a person's distinct id, id, email or name; a group's key; a value (PostHog's actor strategies)", async () => {
      const search = async (team: string, filter: Record<string, unknown>, text: string) =>
        (await actors(team, filter, { funnelStep: 1 }, { search: text })).results.map((row) => row[0] as string);
      expect(await search('browsers', JAN, 'PERSON2')).toEqual([uuid('browsers', 'person2')]);
      expect(await search('browsers', JAN, uuid('browsers', 'person1').slice(0, 13))).toEqual([uuid('browsers', 'person1')]);
      expect(await search('browsers', JAN, 'nobody')).toEqual([]);
      expect(await search('groups', groupFunnel(), 'org:6')).toEqual(['org:6']);
      const sessions = { ...MAY, events: STEPS3.slice(0, 2), funnel_aggregate_by_hogql: 'properties.$session_id' };
      expect(await search('sessions', sessions, 'S2')).toEqual(['s2']);
    });

    const groupFunnel = (first: Record<string, unknown> = {}) => ({
      events: [
        { id: 'user signed up', type: 'events', order: 0, ...first },
        { id: 'paid', type: 'events', order: 1 },
      ],
      date_from: '2020-01-01',
      date_to: '2020-01-14',
      aggregation_group_type_index: 0,
    });

    it('test_funnel_aggregation_with_groups: the actors are groups (test_clickhouse_funnel.py)', async () => {
      const answer = await service.runFunnelActors(
        { id: teams['groups']!, timezone: 'UTC' },
        parseFunnelFilter(groupFunnel()),
        parseFunnelActorsRequest({ funnelStep: 1 }),
        parseFunnelActorsPage({}),
        NOW,
      );
      expect(answer.columns).toEqual(['group']);
      expect(answer.results.map((r) => (r[0] as { id: string }).id)).toEqual(['org:5', 'org:6']);
      expect(answer.results[0]![0]).toMatchObject({ type: 'group', group_key: 'org:5', group_type_index: 0, properties: { industry: 'finance' } });
      expect((await ids('groups', groupFunnel(), { funnelStep: 2 })).length).toBe(1);
    });

    it('test_funnel_group_aggregation_with_groups_entity_filtering (test_clickhouse_funnel.py)', async () => {
      const filter = groupFunnel({ properties: [{ key: '$group_0', value: 'org:5', type: 'event' }] });
      expect(await ids('groupsFiltered', filter, { funnelStep: 1 })).toEqual(['org:5']);
    });
  });
});
