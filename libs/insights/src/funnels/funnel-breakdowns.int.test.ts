/**
 * Funnel breakdowns as PostHog's query-runner tests assert them: the cases of
 * posthog/hogql_queries/insights/funnels/test/breakdown_cases.py (run by test_funnel.py /
 * test_funnel_udf.py ordered, test_funnel_strict.py strict and test_funnel_unordered.py
 * unordered, with those files' overrides), each with its data, query and expected numbers.
 * Every case has its own project; the stores are made once.
 *
 * Where a PostHog test picks a value's row by its position and that position disagrees with the
 * order PostHog's funnel query asks for (counts at the last step first, all descending), the row
 * is found by its value instead (docs/behaviours.md, "Funnel breakdowns").
 */
import { createTestStores, insertJourneys, type JourneyOptions, type JourneyPeople, type TestStores } from '@sightline/testkit';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelFilter } from './funnel-filter';
import type { FunnelStep } from './funnels.query';
import { QueryFilterError } from '../common/query-filter-error';
import { funnelsQueryToFilter } from './funnels-query-node';

const NOW = Date.parse('2024-06-01T00:00:00Z');
const ORDERS = [
  ['ordered', 'test_funnel.py'],
  ['strict', 'test_funnel_strict.py'],
  ['unordered', 'test_funnel_unordered.py'],
] as const;
type Order = (typeof ORDERS)[number][0];
const THREE_STEPS = [
  { id: 'sign up', order: 0 },
  { id: 'play movie', order: 1 },
  { id: 'buy', order: 2 },
];
const TWO_STEPS = [
  { id: 'sign up', order: 0 },
  { id: 'buy', order: 1 },
];
const WEEK = { date_from: '2020-01-01', date_to: '2020-01-08', funnel_window_days: 7 };

/** PostHog's FunnelStepResult: a step's name, count, breakdown and (average = median) conversion time. */
interface StepResult {
  name: string;
  count: number;
  breakdown: unknown;
  time?: number;
  type?: 'events' | 'actions';
  actionId?: number;
}
const step = (name: string, count: number, breakdown: unknown, time?: number): StepResult => ({ name, count, breakdown, time });

/** PostHog's _assert_funnel_breakdown_result_is_correct: every field but the people urls. */
function assertSteps(actual: FunnelStep[] | undefined, order: Order, expected: StepResult[]): void {
  const unordered = order === 'unordered';
  const strip = ({ converted_people_url: _c, dropped_people_url: _d, ...rest }: FunnelStep) => rest;
  expect(actual?.map(strip)).toEqual(
    expected.map((s, i) => ({
      action_id: unordered ? null : s.type === 'actions' ? s.actionId : s.name,
      name: unordered ? `Completed ${i + 1} step${i === 0 ? '' : 's'}` : s.name,
      custom_name: null,
      order: i,
      people: [],
      count: s.count,
      type: s.type ?? 'events',
      average_conversion_time: s.time ?? null,
      median_conversion_time: s.time ?? null,
      breakdown: s.breakdown,
      breakdown_value: s.breakdown,
    })),
  );
}

const valueOf = (steps: FunnelStep[]) => JSON.stringify(steps[0]!.breakdown_value);
/** The row of one breakdown value, wherever it is. */
const rowOf = (results: FunnelStep[][], value: unknown) => results.find((steps) => valueOf(steps) === JSON.stringify(value));
/** PostHog's `sorted(results, key=lambda res: res[0]["breakdown"])`. */
const sortedByValue = (results: FunnelStep[][]) => [...results].sort((a, b) => (valueOf(a) < valueOf(b) ? -1 : valueOf(a) > valueOf(b) ? 1 : 0));

interface Case {
  test: string;
  people: JourneyPeople;
  options?: Omit<JourneyOptions, 'teamId'>;
  filter: Record<string, unknown>;
  /** Order types the case runs for (default all three), with the PostHog file it is ported from. */
  orders?: Order[];
  /** The PostHog test file, when not the order type's own. */
  file?: string;
  check(results: FunnelStep[][], order: Order, ids: Record<string, number>): void;
}

const browserJourneys = (props: (browser: string) => Record<string, unknown> = (b) => ({ key: 'val', $browser: b })): JourneyPeople => ({
  person1: [
    { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: props('Chrome') },
    { event: 'play movie', timestamp: '2020-01-01 13:00:00', properties: props('Chrome') },
    { event: 'buy', timestamp: '2020-01-01 15:00:00', properties: props('Chrome') },
  ],
  person2: [
    { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: props('Safari') },
    { event: 'play movie', timestamp: '2020-01-02 16:00:00', properties: props('Safari') },
  ],
  person3: [{ event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: props('Safari') }],
});

const chromeSafari = (results: FunnelStep[][], order: Order, wrap: (v: string) => unknown) => {
  assertSteps(results[0], order, [step('sign up', 1, wrap('Chrome')), step('play movie', 1, wrap('Chrome'), 3600), step('buy', 1, wrap('Chrome'), 7200)]);
  assertSteps(results[1], order, [step('sign up', 2, wrap('Safari')), step('play movie', 1, wrap('Safari'), 7200), step('buy', 0, wrap('Safari'))]);
};

/** Persons person_{num}_{i} for i < num, each doing all three steps with some_breakdown_val = num. */
function limitJourneys(upTo: number, withNull: boolean): JourneyPeople {
  const people: JourneyPeople = {};
  for (let num = 0; num < upTo; num++) {
    for (let i = 0; i < num; i++) {
      const properties = { some_breakdown_val: String(num) };
      people[`person_${num}_${i}`] = [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00', properties },
        { event: 'buy', timestamp: '2020-01-01 15:00:00', properties },
      ];
    }
  }
  if (withNull) {
    people['person_null'] = [
      { event: 'sign up', timestamp: '2020-01-01 12:00:00' },
      { event: 'play movie', timestamp: '2020-01-01 13:00:00' },
      { event: 'buy', timestamp: '2020-01-01 15:00:00' },
    ];
  }
  return people;
}

/** The five people of the attribution cases (person5, when asked, has no properties at all). */
function attributionJourneys(options: { person5: boolean; buyAlakazam?: string; safariBuy?: boolean }): JourneyPeople {
  const people: JourneyPeople = {
    person1: [
      { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
      { event: 'buy', timestamp: '2020-01-01 13:00:00' },
    ],
    person2: [
      { event: 'sign up', timestamp: '2020-01-01 13:00:00' },
      ...(options.safariBuy === false ? [] : [{ event: 'buy', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari' } }]),
    ],
    person3: [
      { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
      ...(options.safariBuy === false ? [] : [{ event: 'buy', timestamp: '2020-01-02 15:00:00' }]),
    ],
    person4: [
      { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0 } },
      { event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: options.buyAlakazam ?? 'alakazam' } },
    ],
  };
  if (options.person5) {
    people['person5'] = [
      { event: 'sign up', timestamp: '2020-01-02 15:00:00' },
      { event: 'buy', timestamp: '2020-01-02 16:00:00' },
    ];
  }
  return people;
}

/** The people of the multiple-breakdown first-touch cases ($browser and $version). */
function versionJourneys(complete: boolean): JourneyPeople {
  return {
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
      ...(complete ? [{ event: 'buy', timestamp: '2020-01-02 15:00:00', properties: { $version: 'no-mac' } }] : []),
    ],
    person4: [
      { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0, $version: 0 } },
      ...(complete ? [{ event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'alakazam' } }] : []),
    ],
    person5: [
      { event: 'sign up', timestamp: '2020-01-02 15:00:00' },
      { event: 'buy', timestamp: '2020-01-02 16:00:00' },
    ],
  };
}

/** The people of the "correct breakdown props are chosen" cases: `buy` counts only with $version xyz. */
const chosenPropsJourneys: JourneyPeople = {
  person1: [
    { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome', $version: 'xyz' } },
    { event: 'buy', timestamp: '2020-01-01 13:00:00', properties: { $browser: 'Chrome' } },
  ],
  person2: [
    { event: 'sign up', timestamp: '2020-01-01 13:00:00' },
    { event: 'buy', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari', $version: 'xyz' } },
  ],
  person3: [
    { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
    { event: 'buy', timestamp: '2020-01-02 15:00:00', properties: { $version: 'xyz', $browser: 'Mac' } },
  ],
  person5: [
    { event: 'sign up', timestamp: '2020-01-02 15:00:00' },
    { event: 'buy', timestamp: '2020-01-02 16:00:00' },
  ],
};
const chosenPropsSteps = [
  { id: 'sign up', order: 0 },
  { id: 'buy', order: 1, properties: [{ type: 'event', key: '$version', value: 'xyz' }] },
];

/** The current_url journeys: one docs page that converts, and forty blog sign ups that rank higher by raw count. */
function currentUrlJourneys(): JourneyPeople {
  const events = [
    { event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $current_url: 'https://posthog.com/docs/x' } },
    { event: 'paid', timestamp: '2020-01-10 14:00:00', properties: { $current_url: 'https://posthog.com/docs/x' } },
  ];
  for (const letter of 'abcdefghijklmnopqrst') {
    for (let k = 0; k < 2; k++)
      events.push({ event: 'user signed up', timestamp: '2020-01-02 14:00:00', properties: { $current_url: `https://posthog.com/blog/${letter}` } });
  }
  return { user_1: events };
}
const docsFilter = [{ key: '$current_url', operator: 'icontains', type: 'event', value: 'https://posthog.com/docs' }];

const groupJourneys = (thirdPersonBuys: boolean): JourneyPeople => {
  const org = (key: string, industry: string, browser: string) => ({ properties: { $group_0: key, $browser: browser }, groupProperties: { 0: { industry } } });
  return {
    person1: [
      { event: 'sign up', timestamp: '2020-01-01 12:00:00', ...org('org:5', 'finance', 'Chrome') },
      { event: 'play movie', timestamp: '2020-01-01 13:00:00', ...org('org:5', 'finance', 'Chrome') },
      { event: 'buy', timestamp: '2020-01-01 15:00:00', ...org('org:5', 'finance', 'Chrome') },
    ],
    person2: [
      { event: 'sign up', timestamp: '2020-01-02 14:00:00', ...org('org:6', 'technology', 'Safari') },
      { event: 'play movie', timestamp: '2020-01-02 16:00:00', ...org('org:6', 'technology', 'Safari') },
    ],
    person3: [
      thirdPersonBuys
        ? { event: 'buy', timestamp: '2020-01-02 18:00:00', ...org('org:6', 'technology', 'Safari') }
        : { event: 'sign up', timestamp: '2020-01-02 14:00:00', ...org('org:6', 'technology', 'Safari') },
    ],
  };
};
const groupFilter = { events: THREE_STEPS, ...WEEK, breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 };
const financeSteps = [step('sign up', 1, 'finance'), step('play movie', 1, 'finance', 3600), step('buy', 1, 'finance', 7200)];

/** Pageviews at 13:MM on 2024-03-22 with utm_medium test'123. */
const utmPageviews = (...minutes: number[]) =>
  minutes.map((m) => ({ event: '$pageview', timestamp: `2024-03-22 13:${m}:00`, properties: { utm_medium: "test'123" } }));
const twoPageviews = {
  events: [
    { id: '$pageview', order: 0 },
    { id: '$pageview', order: 1 },
  ],
  date_from: '2024-03-22',
  date_to: '2024-03-22',
};

/** test_funnel_breakdowns_by_current_url.py's people: one url with and without a trailing /, ? or #. */
const currentUrlVariants: JourneyPeople = (() => {
  const watched = (minute: number, url: string, path: string) => ({
    event: 'watched movie',
    timestamp: `2020-01-02 12:0${minute}:00`,
    properties: { $current_url: `https://example.com${url}`, $pathname: path },
  });
  const end = (minute: number) => ({ event: 'terminate funnel', timestamp: `2020-01-02 12:0${minute}:00` });
  return {
    person1: [watched(1, '', ''), watched(2, '?', '?'), end(3)],
    person2: [watched(1, '/', '/'), watched(2, '#', '#'), end(3)],
    person3: [watched(1, '/home', '/home'), end(2)],
    person4: [watched(1, '/home/', '/home/'), watched(2, '/home#', '/home#'), watched(3, '/home/?#', '/home/?#'), end(4)],
  };
})();

const CASES: Case[] = [
  {
    test: 'test_funnel_step_multi_property_breakdown_event',
    people: (() => {
      const versions: Record<string, number> = { person1: 95, person2: 15, person3: 14 };
      const people = browserJourneys();
      for (const [person, events] of Object.entries(people)) for (const e of events) e.properties = { ...e.properties, $browser_version: versions[person] };
      return people;
    })(),
    filter: {
      events: THREE_STEPS,
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser', '$browser_version'],
    },
    check(results, order) {
      expect(results).toHaveLength(3);
      assertSteps(rowOf(results, ['Safari', '14']), order, [
        step('sign up', 1, ['Safari', '14']),
        step('play movie', 0, ['Safari', '14']),
        step('buy', 0, ['Safari', '14']),
      ]);
      assertSteps(rowOf(results, ['Safari', '15']), order, [
        step('sign up', 1, ['Safari', '15']),
        step('play movie', 1, ['Safari', '15'], 7200),
        step('buy', 0, ['Safari', '15']),
      ]);
      assertSteps(results[0], order, [
        step('sign up', 1, ['Chrome', '95']),
        step('play movie', 1, ['Chrome', '95'], 3600),
        step('buy', 1, ['Chrome', '95'], 7200),
      ]);
    },
  },
  {
    test: 'test_funnel_step_breakdown_event_with_string_only_breakdown',
    people: browserJourneys(),
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'event', breakdown: '$browser' },
    check: (results, order) => chromeSafari(results, order, (v) => [v]),
  },
  {
    test: 'test_funnel_step_breakdown_event',
    people: browserJourneys(),
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser'] },
    check: (results, order) => chromeSafari(results, order, (v) => [v]),
  },
  {
    test: 'test_funnel_step_breakdown_event_with_other',
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00', properties: { $browser: 'Chrome' } },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 15:00:00', properties: { $browser: 'Safari' } },
        { event: 'buy', timestamp: '2020-01-02 16:00:00', properties: { $browser: 'Safari' } },
      ],
      person3: [{ event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } }],
      person4: [{ event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'random' } }],
      person5: [{ event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 'another one' } }],
    },
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser'], breakdown_limit: 1 },
    check(results, order) {
      // PostHog's sort_breakdown_funnel_results: by breakdown_value.
      const sorted = sortedByValue(results);
      assertSteps(sorted[1], order, [step('sign up', 2, ['Safari']), step('play movie', 1, ['Safari'], 3600), step('buy', 1, ['Safari'], 3600)]);
      assertSteps(sorted[0], order, [step('sign up', 3, ['Other']), step('play movie', 1, ['Other'], 3600), step('buy', 0, ['Other'])]);
    },
  },
  {
    test: 'test_funnel_step_breakdown_event_no_type',
    people: browserJourneys((b) => ({ $browser: b })),
    filter: { events: THREE_STEPS, ...WEEK, breakdown: ['$browser'] },
    check: (results, order) => chromeSafari(results, order, (v) => [v]),
  },
  {
    test: 'test_funnel_step_breakdown_person',
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00' },
        { event: 'play movie', timestamp: '2020-01-01 13:00:00' },
        { event: 'buy', timestamp: '2020-01-01 15:00:00' },
      ],
      person2: [
        { event: 'sign up', timestamp: '2020-01-02 14:00:00' },
        { event: 'play movie', timestamp: '2020-01-02 16:00:00' },
      ],
    },
    options: { personProperties: { person1: { $browser: 'Chrome' }, person2: { $browser: 'Safari' } } },
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'person', breakdown: ['$browser'] },
    check(results, order) {
      assertSteps(results[0], order, [step('sign up', 1, ['Chrome']), step('play movie', 1, ['Chrome'], 3600), step('buy', 1, ['Chrome'], 7200)]);
      assertSteps(results[1], order, [step('sign up', 1, ['Safari']), step('play movie', 1, ['Safari'], 7200), step('buy', 0, ['Safari'])]);
    },
  },
  {
    test: 'test_funnel_step_breakdown_limit',
    people: limitJourneys(10, false),
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['some_breakdown_val'], breakdown_limit: 5 },
    check(results) {
      // At most 5 values at a time, the most popular ones, and the rest as "Other".
      expect(results.map((r) => r[0]!.breakdown).sort()).toEqual([['5'], ['6'], ['7'], ['8'], ['9'], ['Other']]);
    },
  },
  {
    test: 'test_funnel_step_custom_breakdown_limit_with_nulls',
    people: limitJourneys(5, true),
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'event', breakdown_limit: 3, breakdown: ['some_breakdown_val'] },
    check(results) {
      // 1 and '' are left out (into "Other") because the limit is 3.
      expect(results.map((r) => r[0]!.breakdown).sort()).toEqual([['2'], ['3'], ['4'], ['Other']]);
      expect(rowOf(results, ['Other'])!.map((s) => s.count)).toEqual([2, 2, 2]);
    },
  },
  {
    test: 'test_funnel_step_custom_breakdown_limit_with_nulls_included',
    people: limitJourneys(5, true),
    filter: { events: THREE_STEPS, ...WEEK, breakdown_type: 'event', breakdown_limit: 6, breakdown: ['some_breakdown_val'] },
    check(results) {
      expect(results.map((r) => r[0]!.breakdown).sort()).toEqual([[''], ['1'], ['2'], ['3'], ['4']]);
      for (let i = 1; i < 5; i++) expect(rowOf(results, [String(i)])![2]!.count).toBe(i);
      expect(rowOf(results, [''])!.map((s) => s.count)).toEqual([1, 1, 1]);
    },
  },
  {
    test: 'test_funnel_step_breakdown_event_single_person_multiple_breakdowns',
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'sign up', timestamp: '2020-01-01 13:00:00', properties: { $browser: 'Safari' } },
        { event: 'sign up', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Mac' } },
        // A property of another type.
        { event: 'sign up', timestamp: '2020-01-02 15:00:00', properties: { $browser: 0 } },
      ],
    },
    filter: {
      events: [
        { id: 'sign up', order: 0 },
        { id: 'other event', order: 0 },
      ],
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser'],
      breakdown_attribution_type: 'step',
      breakdown_attribution_value: '0',
    },
    check(results, order) {
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(4);
      ['0', 'Chrome', 'Mac', 'Safari'].forEach((value, i) => assertSteps(sorted[i], order, [step('sign up', 1, [value]), step('other event', 0, [value])]));
    },
  },
  {
    test: 'test_funnel_step_breakdown_event_single_person_events_with_multiple_properties',
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Chrome' } },
        { event: 'play movie', timestamp: '2020-01-02 12:30:00', properties: { $browser: 'Safari' } },
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } },
      ],
    },
    orders: ['ordered', 'strict'],
    filter: {
      events: [
        { id: 'sign up', order: 0 },
        { id: 'play movie', order: 1 },
      ],
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser'],
      breakdown_attribution_type: 'all_events',
    },
    check(results, order) {
      expect(results).toHaveLength(2);
      assertSteps(rowOf(results, ['Chrome']), order, [step('sign up', 1, ['Chrome']), step('play movie', 0, ['Chrome'])]);
      assertSteps(rowOf(results, ['Safari']), order, [step('sign up', 1, ['Safari']), step('play movie', 1, ['Safari'], 3600)]);
    },
  },
  {
    // test_funnel_unordered.py's override: no play movie before the Safari sign up.
    test: 'test_funnel_step_breakdown_event_single_person_events_with_multiple_properties',
    orders: ['unordered'],
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { key: 'val', $browser: 'Chrome' } },
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { key: 'val', $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { key: 'val', $browser: 'Safari' } },
      ],
    },
    filter: {
      events: [
        { id: 'sign up', order: 0 },
        { id: 'play movie', order: 1 },
      ],
      ...WEEK,
      breakdown_type: 'event',
      breakdown: '$browser',
      breakdown_attribution_type: 'all_events',
    },
    check(results, order) {
      assertSteps(results[0], order, [step('sign up', 1, ['Safari']), step('play movie', 1, ['Safari'], 3600)]);
      assertSteps(results[1], order, [step('sign up', 1, ['Chrome']), step('play movie', 0, ['Chrome'])]);
    },
  },
  {
    test: 'test_basic_funnel_default_funnel_days_breakdown_event',
    people: currentUrlJourneys(),
    // test_funnel_strict.py skips it (it fails there in PostHog).
    orders: ['ordered', 'unordered'],
    filter: {
      events: [
        { id: 'user signed up', type: 'events', order: 0, properties: docsFilter },
        { id: 'paid', type: 'events', order: 1 },
      ],
      date_from: '2020-01-01',
      date_to: '2020-01-14',
      breakdown: ['$current_url'],
      breakdown_type: 'event',
    },
    check(results, order) {
      assertSteps(results[0], order, [step('user signed up', 1, ['https://posthog.com/docs/x']), step('paid', 1, ['https://posthog.com/docs/x'], 691200)]);
    },
  },
  {
    test: 'test_funnel_step_breakdown_with_first_touch_attribution',
    people: attributionJourneys({ person5: true, buyAlakazam: 'alakazam' }),
    filter: { events: TWO_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser'], breakdown_attribution_type: 'first_touch' },
    check(results, order) {
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(5);
      [
        ['', 3600],
        ['0', 3600],
        ['Chrome', 3600],
        ['Mac', 3600],
        ['Safari', 86400],
      ].forEach(([value, time], i) => assertSteps(sorted[i], order, [step('sign up', 1, [value]), step('buy', 1, [value], time as number)]));
    },
  },
  {
    test: 'test_funnel_step_breakdown_with_last_touch_attribution',
    people: attributionJourneys({ person5: true, buyAlakazam: 'Alakazam' }),
    filter: { events: TWO_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser'], breakdown_attribution_type: 'last_touch' },
    check(results, order) {
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(5);
      [
        ['', 3600],
        ['Alakazam', 3600],
        ['Chrome', 3600],
        ['Mac', 3600],
        ['Safari', 86400],
      ].forEach(([value, time], i) => assertSteps(sorted[i], order, [step('sign up', 1, [value]), step('buy', 1, [value], time as number)]));
    },
  },
  {
    test: 'test_funnel_step_breakdown_with_step_attribution',
    people: attributionJourneys({ person5: false }),
    orders: ['ordered', 'strict'],
    filter: {
      events: TWO_STEPS,
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser'],
      breakdown_attribution_type: 'step',
      breakdown_attribution_value: '0',
    },
    check(results, order) {
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(4);
      [
        ['', 86400],
        ['0', 3600],
        ['Chrome', 3600],
        ['Mac', 3600],
      ].forEach(([value, time], i) => assertSteps(sorted[i], order, [step('sign up', 1, [value]), step('buy', 1, [value], time as number)]));
    },
  },
  {
    // test_funnel_unordered.py's override: any step may come first, so every value counts.
    test: 'test_funnel_step_breakdown_with_step_attribution',
    people: attributionJourneys({ person5: false }),
    orders: ['unordered'],
    filter: {
      events: TWO_STEPS,
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser'],
      breakdown_attribution_type: 'step',
      breakdown_attribution_value: '0',
    },
    check(results) {
      expect(results).toHaveLength(6);
      expect(rowOf(results, ['Mac'])![0]!.count).toBe(1);
    },
  },
  {
    test: 'test_funnel_step_breakdown_with_step_one_attribution',
    people: attributionJourneys({ person5: false }),
    orders: ['ordered', 'strict'],
    filter: {
      events: TWO_STEPS,
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser'],
      breakdown_attribution_type: 'step',
      breakdown_attribution_value: '1',
    },
    check(results, order) {
      // Chrome and Mac go away, Safari comes back.
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(3);
      assertSteps(sorted[0], order, [step('sign up', 2, ['']), step('buy', 2, [''], 3600)]);
      assertSteps(sorted[1], order, [step('sign up', 1, ['Safari']), step('buy', 1, ['Safari'], 86400)]);
      assertSteps(sorted[2], order, [step('sign up', 1, ['alakazam']), step('buy', 1, ['alakazam'], 3600)]);
    },
  },
  {
    test: 'test_funnel_step_multiple_breakdown_with_first_touch_attribution',
    people: versionJourneys(true),
    filter: { events: TWO_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser', '$version'], breakdown_attribution_type: 'first_touch' },
    check(results, order) {
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(5);
      [
        [['', ''], 3600],
        [['0', '0'], 3600],
        [['Chrome', 'xyz'], 3600],
        [['Mac', ''], 3600],
        [['Safari', 'xyz'], 86400],
      ].forEach(([value, time], i) => assertSteps(sorted[i], order, [step('sign up', 1, value), step('buy', 1, value, time as number)]));
    },
  },
  {
    test: 'test_funnel_step_multiple_breakdown_with_first_touch_attribution_incomplete_funnel',
    people: versionJourneys(false),
    filter: { events: TWO_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser', '$version'], breakdown_attribution_type: 'first_touch' },
    check(results, order) {
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(5);
      assertSteps(sorted[0], order, [step('sign up', 1, ['', '']), step('buy', 1, ['', ''], 3600)]);
      assertSteps(sorted[1], order, [step('sign up', 1, ['0', '0']), step('buy', 0, ['0', '0'])]);
      assertSteps(sorted[2], order, [step('sign up', 1, ['Chrome', 'xyz']), step('buy', 1, ['Chrome', 'xyz'], 3600)]);
      assertSteps(sorted[3], order, [step('sign up', 1, ['Mac', '']), step('buy', 0, ['Mac', ''])]);
      assertSteps(sorted[4], order, [step('sign up', 1, ['Safari', 'xyz']), step('buy', 1, ['Safari', 'xyz'], 86400)]);
    },
  },
  ...([
    'test_funnel_step_breakdown_with_step_one_attribution_incomplete_funnel',
    'test_funnel_step_non_array_breakdown_with_step_one_attribution_incomplete_funnel',
  ].map((test): Case => ({
    test,
    people: attributionJourneys({ person5: false, safariBuy: false }),
    orders: ['ordered', 'strict'],
    filter: {
      events: TWO_STEPS,
      ...WEEK,
      breakdown_type: 'event',
      breakdown: test.includes('non_array') ? '$browser' : ['$browser'],
      breakdown_attribution_type: 'step',
      breakdown_attribution_value: '1',
    },
    check(results, order) {
      // Who never reaches step 1 is left out: Chrome, Mac and Safari go away.
      const sorted = sortedByValue(results);
      expect(sorted).toHaveLength(2);
      assertSteps(sorted[0], order, [step('sign up', 1, ['']), step('buy', 1, [''], 3600)]);
      assertSteps(sorted[1], order, [step('sign up', 1, ['alakazam']), step('buy', 1, ['alakazam'], 3600)]);
    },
  })) as Case[]),
  {
    test: 'test_funnel_step_multiple_breakdown_snapshot',
    people: versionJourneys(true),
    filter: { events: TWO_STEPS, ...WEEK, breakdown_type: 'event', breakdown: ['$browser', '$version'], breakdown_attribution_type: 'first_touch' },
    check: (results) => expect(results).toHaveLength(5),
  },
  {
    test: 'test_funnel_breakdown_correct_breakdown_props_are_chosen',
    people: chosenPropsJourneys,
    filter: { events: chosenPropsSteps, ...WEEK, breakdown_type: 'event', breakdown: '$browser', breakdown_attribution_type: 'first_touch' },
    check(results) {
      expect(results).toHaveLength(4);
      expect(results.map((r) => r[0]!.breakdown)).toEqual(expect.arrayContaining([['Mac'], ['Chrome'], ['Safari'], ['']]));
    },
  },
  {
    test: 'test_funnel_breakdown_correct_breakdown_props_are_chosen_for_step',
    people: chosenPropsJourneys,
    orders: ['ordered', 'strict'],
    filter: {
      events: chosenPropsSteps,
      ...WEEK,
      breakdown_type: 'event',
      breakdown: '$browser',
      breakdown_attribution_type: 'step',
      breakdown_attribution_value: '1',
    },
    check(results) {
      expect(results.map((r) => r[0]!.breakdown).sort()).toEqual([['Mac'], ['Safari']]);
    },
  },
  {
    // Only the person's first sign up ever (Safari) starts the funnel; the later Chrome one is not a first time.
    test: 'test_funnel_step_breakdown_with_first_time_for_user_math',
    people: {
      person1: [
        { event: 'sign up', timestamp: '2020-01-01 12:00:00', properties: { $browser: 'Safari' } },
        { event: 'play movie', timestamp: '2020-01-02 12:30:00', properties: { $browser: 'Safari' } },
        { event: 'sign up', timestamp: '2020-01-02 13:00:00', properties: { $browser: 'Chrome' } },
        { event: 'play movie', timestamp: '2020-01-02 14:00:00', properties: { $browser: 'Safari' } },
      ],
    },
    filter: {
      events: [
        { id: 'sign up', order: 0, math: 'first_time_for_user' },
        { id: 'play movie', order: 1 },
      ],
      ...WEEK,
      breakdown_type: 'event',
      breakdown: ['$browser'],
      breakdown_attribution_type: 'all_events',
    },
    check(results, order) {
      expect(results).toHaveLength(1);
      assertSteps(results[0], order, [step('sign up', 1, ['Safari']), step('play movie', 1, ['Safari'], 88_200)]);
    },
  },
  {
    test: 'test_funnel_breakdown_group',
    people: groupJourneys(false),
    filter: groupFilter,
    check(results, order) {
      assertSteps(results[0], order, financeSteps);
      assertSteps(results[1], order, [step('sign up', 2, 'technology'), step('play movie', 1, 'technology', 7200), step('buy', 0, 'technology')]);
    },
  },
  {
    test: 'test_funnel_aggregate_by_groups_breakdown_group_person_on_events',
    people: groupJourneys(true),
    filter: { ...groupFilter, aggregation_group_type_index: 0 },
    check(results, order) {
      assertSteps(results[0], order, financeSteps);
      assertSteps(results[1], order, [step('sign up', 1, 'technology'), step('play movie', 1, 'technology', 7200), step('buy', 1, 'technology', 7200)]);
    },
  },
  {
    // test_funnel_strict.py's own case: an event between two steps ends a strict attempt.
    test: 'test_strict_breakdown_events_with_multiple_properties',
    orders: ['strict'],
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
    filter: {
      events: [
        { id: 'sign up', order: 0 },
        { id: 'play movie', order: 1 },
      ],
      ...WEEK,
      breakdown_type: 'event',
      breakdown: '$browser',
    },
    check(results, order) {
      assertSteps(results[0], order, [step('sign up', 1, ['Safari']), step('play movie', 1, ['Safari'], 3600)]);
      assertSteps(results[1], order, [step('sign up', 1, ['Chrome']), step('play movie', 0, ['Chrome'])]);
    },
  },
  ...(
    [
      ['test_breakdown_by_pathname', '$pathname', ['/', '/home']],
      ['test_breakdown_by_current_url', '$current_url', ['https://example.com', 'https://example.com/home']],
    ] as const
  ).map(([test, property, values]): Case => ({
    test,
    orders: ['ordered'],
    file: 'test_funnel_breakdowns_by_current_url.py',
    people: currentUrlVariants,
    filter: {
      events: [
        { id: 'watched movie', name: 'watched movie', type: 'events', order: 0 },
        { id: 'terminate funnel', name: 'terminate funnel', type: 'events', order: 1 },
      ],
      funnel_viz_type: 'steps',
      date_from: '2020-01-02T00:00:00Z',
      date_to: '2020-01-12T00:00:00Z',
      breakdown_limit: 100,
      breakdown: property,
      breakdown_type: 'event',
      breakdown_normalize_url: true,
    },
    check(results) {
      const actual = results.flatMap((r) => r.map((s) => [s.name, s.count, s.breakdown]));
      expect(actual).toEqual(
        expect.arrayContaining(
          values.flatMap((v) => [
            ['watched movie', 2, [v]],
            ['terminate funnel', 2, [v]],
          ]),
        ),
      );
      expect(actual).toHaveLength(4);
    },
  })),
  // The breakdown cases of test_funnel.py's own factory (ordered funnels).
  {
    test: 'test_basic_funnel_with_person_id_override_properties_joined_modifier_and_person_breakdown',
    orders: ['ordered'],
    people: {
      user_1: [
        { event: 'user signed up', timestamp: '2020-01-02 14:00:00' },
        { event: 'paid', timestamp: '2020-01-10 14:00:00' },
      ],
    },
    filter: {
      events: [
        { id: 'user signed up', type: 'events', order: 0 },
        { id: 'paid', type: 'events', order: 1 },
      ],
      date_from: '2020-01-01',
      date_to: '2020-01-14',
      breakdown: '$browser',
      breakdown_type: 'person',
    },
    check(results) {
      expect(results[0]!.map((s) => [s.name, s.count])).toEqual([
        ['user signed up', 1],
        ['paid', 1],
      ]);
    },
  },
  {
    test: 'test_parses_breakdowns_correctly',
    orders: ['ordered'],
    // PostHog's test writes "test''123" through a SQL literal, which stores test'123.
    people: { user_1: utmPageviews(46, 47) },
    filter: { ...twoPageviews, breakdown: 'utm_medium' },
    check(results) {
      expect(results[0]![1]!.breakdown_value).toEqual(["test'123"]);
      expect(results[0]![1]!.count).toBe(1);
    },
  },
  {
    test: 'test_funnel_query_with_event_metadata_breakdown',
    orders: ['ordered'],
    people: { user_1: utmPageviews(46, 47), user_2: utmPageviews(48, 49) },
    filter: { ...twoPageviews, breakdown: 'distinct_id', breakdown_type: 'event_metadata' },
    check(results) {
      expect(results.map((r) => [r[1]!.breakdown_value, r[1]!.count])).toEqual([
        [['user_1'], 1],
        [['user_2'], 1],
      ]);
    },
  },
  ...(
    [
      [{}, [[1, 1, 1]]],
      [{ breakdown_attribution_type: 'all_events' }, [[1, 1, 1]]],
      [{ breakdown_attribution_type: 'step', breakdown_attribution_value: 0 }, [[1, 1, 1]]],
      [
        { breakdown_attribution_type: 'step', breakdown_attribution_value: 1 },
        [
          [1, 1, 1],
          [1, 1, 1],
        ],
      ],
      [{ breakdown_attribution_type: 'step', breakdown_attribution_value: 2 }, [[1, 1, 1]]],
    ] as [Record<string, unknown>, number[][]][]
  ).map(([attribution, counts]): Case => ({
    test: `test_breakdown_step_attributions ${JSON.stringify(attribution)}`,
    orders: ['ordered'],
    people: {
      user_one: [
        { event: 'step one', timestamp: '2021-05-01 00:00:00', properties: { $browser: 'Chrome' } },
        { event: 'step two', timestamp: '2021-05-01 00:00:01', properties: { $browser: 'Safari' } },
        { event: 'step two', timestamp: '2021-05-01 00:00:02', properties: { $browser: 'Chrome' } },
        { event: 'step three', timestamp: '2021-05-01 00:00:03', properties: { $browser: 'Chrome' } },
      ],
    },
    filter: {
      date_from: '2021-05-01 00:00:00',
      date_to: '2021-05-02 23:59:59',
      funnel_window_interval: 30,
      funnel_window_interval_unit: 'second',
      events: [
        { id: 'step one', order: 0 },
        { id: 'step two', order: 1 },
        { id: 'step three', order: 2 },
      ],
      breakdown_type: 'event',
      breakdown: '$browser',
      ...attribution,
    },
    check(results) {
      expect(results.map((r) => r.map((s) => s.count))).toEqual(counts);
      if (counts.length === 1) expect(results[0]![0]!.breakdown).toEqual(['Chrome']);
      else expect(results.map((r) => r[0]!.breakdown).sort()).toEqual([['Chrome'], ['Safari']]);
    },
  })),
];

const ACTION_CASE: Case = {
  test: 'test_basic_funnel_default_funnel_days_breakdown_action',
  people: currentUrlJourneys(),
  filter: {},
  check: () => undefined,
};

describe('funnel breakdowns as PostHog asserts them (breakdown_cases.py)', () => {
  let stores: TestStores;
  let service: TrendsService;
  const teams = new Map<Case, number>();
  const actionIds = new Map<Case, number>();
  let cohortTeam = 0;
  let cohortId = 0;

  const run = (teamId: number, body: Record<string, unknown>) => service.runFunnel({ id: teamId, timezone: 'UTC' }, parseFunnelFilter(body), NOW);
  const newTeam = async (organizationId: string, name: string) =>
    (
      await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_fbd_' || md5(random()::text)) RETURNING id",
        [organizationId, name],
      )
    )[0]!.id;

  beforeAll(async () => {
    stores = await createTestStores('funnelbd');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    // Cases with the same data share a project. Person properties are frozen on the events
    // (person-on-events): no person rows are needed.
    const byData = new Map<string, number>();
    for (const c of [...CASES, ACTION_CASE]) {
      const data = JSON.stringify([c.people, c.options ?? {}]);
      if (!byData.has(data)) byData.set(data, await newTeam(org!.organization_id, c.test));
      teams.set(c, byData.get(data)!);
    }
    const firstOfTeam = new Map([...teams].reverse().map(([c, teamId]) => [teamId, c]));
    await Promise.all([...firstOfTeam].map(([teamId, c]) => insertJourneys(stores, c.people, { ...c.options, teamId, createPeople: false })));
    const actionTeam = teams.get(ACTION_CASE)!;
    actionIds.set(
      ACTION_CASE,
      (
        await stores.db.query<{ id: number }>("INSERT INTO actions (team_id, name, steps) VALUES ($1, 'user signed up', $2) RETURNING id", [
          actionTeam,
          JSON.stringify([{ event: 'user signed up' }]),
        ])
      )[0]!.id,
    );
    cohortTeam = await newTeam(org!.organization_id, 'cohort breakdown');
    await insertJourneys(
      stores,
      { person1: [{ event: 'sign up', timestamp: '2020-01-02 12:00:00' }] },
      { teamId: cohortTeam, personProperties: { person1: { key: 'value' } } },
    );
    cohortId = (
      await stores.db.query<{ id: number }>("INSERT INTO cohorts (team_id, name, is_static, filters) VALUES ($1, 'test_cohort', false, $2) RETURNING id", [
        cohortTeam,
        JSON.stringify({ properties: { type: 'AND', values: [{ key: 'key', value: 'value', type: 'person', operator: 'exact' }] } }),
      ])
    )[0]!.id;
  });
  afterAll(() => stores.close());

  /**
   * Every case's answers, asked a few at a time: each funnel query costs ClickHouse far more to
   * plan than to run on these few rows, so asking them together keeps the suite short.
   */
  const answers = new Map<string, Promise<FunnelStep[][]>>();
  const runs = CASES.flatMap((c) => ORDERS.filter(([order]) => !c.orders || c.orders.includes(order)).map(([order, file]) => ({ c, order, file })));
  // The same query on the same data (two PostHog tests asking it) is asked once.
  const key = (c: Case, order: Order) => `${teams.get(c)}:${order}:${JSON.stringify(c.filter)}`;
  beforeAll(async () => {
    const queue = [...runs];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        if (answers.has(key(next.c, next.order))) continue;
        const answer = run(teams.get(next.c)!, { ...next.c.filter, funnel_order_type: next.order }).then((a) => a.result as FunnelStep[][]);
        answers.set(key(next.c, next.order), answer);
        await answer.catch(() => undefined);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  });

  for (const { c, order, file } of runs) {
    it(`${c.test} (${c.file ?? file})`, async () => {
      c.check(await answers.get(key(c, order))!, order, {});
    });
  }

  for (const [order, file] of ORDERS) {
    it(`test_basic_funnel_default_funnel_days_breakdown_action (${file})`, async () => {
      if (order === 'strict') return; // test_funnel_strict.py skips it (it fails there in PostHog).
      const actionId = actionIds.get(ACTION_CASE)!;
      const answer = await run(teams.get(ACTION_CASE)!, {
        funnel_order_type: order,
        actions: [{ id: actionId, order: 0, properties: docsFilter }],
        events: [{ id: 'paid', type: 'events', order: 1 }],
        date_from: '2020-01-01',
        date_to: '2020-01-14',
        breakdown: ['$current_url'],
        breakdown_type: 'event',
      });
      const url = ['https://posthog.com/docs/x'];
      assertSteps((answer.result as FunnelStep[][])[0], order, [
        { name: 'user signed up', count: 1, breakdown: url, type: 'actions', actionId },
        step('paid', 1, url, 691200),
      ]);
    });

    it(`test_funnel_cohort_breakdown (${file})`, async () => {
      const filter = { events: THREE_STEPS, ...WEEK, funnel_order_type: order, breakdown_type: 'cohort' };
      const both = (await run(cohortTeam, { ...filter, breakdown: ['all', cohortId], breakdown_attribution_type: 'step', breakdown_attribution_value: 0 }))
        .result as FunnelStep[][];
      expect(both.map((steps) => steps.length)).toEqual([3, 3]);
      expect(both.map((steps) => steps[0]!.breakdown)).toEqual(['all users', 'test_cohort']);
      expect(both.map((steps) => steps.map((s) => s.count))).toEqual([
        [1, 0, 0],
        [1, 0, 0],
      ]);
      // Not a list.
      const one = (await run(cohortTeam, { ...filter, breakdown: cohortId })).result as FunnelStep[][];
      expect(one).toHaveLength(1);
      expect(one[0]).toHaveLength(3);
      expect(one[0]![0]!.breakdown).toBe('test_cohort');
      expect(one[0]![0]!.breakdown_value).toBe(cohortId);
    });
  }

  it('a FunnelsQuery carries its breakdown attribution (breakdownAttributionType / Value)', () => {
    const filter = parseFunnelFilter(
      funnelsQueryToFilter({
        kind: 'FunnelsQuery',
        series: [
          { kind: 'EventsNode', event: 'sign up' },
          { kind: 'EventsNode', event: 'buy' },
        ],
        breakdownFilter: { breakdown: ['$browser', '$version'], breakdown_type: 'event' },
        funnelsFilter: { breakdownAttributionType: 'step', breakdownAttributionValue: 1 },
      }),
    );
    expect(filter.breakdownAttribution).toEqual({ type: 'step', step: 1 });
    expect(filter.breakdowns.map((b) => b.property)).toEqual(['$browser', '$version']);
    expect(filter.breakdownValueIsList).toBe(true);
  });

  it('step attribution other than the first step is refused for unordered funnels (test_funnel_unordered.py, UDF)', async () => {
    for (const test of ['test_funnel_step_breakdown_with_step_one_attribution', 'test_funnel_breakdown_correct_breakdown_props_are_chosen_for_step']) {
      const c = CASES.find((x) => x.test === test)!;
      expect(() => parseFunnelFilter({ ...c.filter, funnel_order_type: 'unordered' })).toThrow(QueryFilterError);
    }
  });
});
