import { insertEvents } from '@sightline/clickhouse';
import {
  createTestStores,
  insertCohort,
  insertJourneys,
  journeyPersonUuid,
  journeyTimeMs,
  testEventRow,
  type JourneyEvent,
  type JourneyPeople,
  type TestStores,
} from '@sightline/testkit';
import { insertAction } from '../repositories/actions.repository';
import type { ActionStep } from '../actions/action-steps';
import { syncStaticCohortToClickHouse } from '../repositories/static-cohort-members.repository';
import { createTrendsService, type TrendsService } from '../trends/trends.service';
import { parseFunnelActorsPage, parseFunnelActorsRequest } from './funnel-actors';
import { parseCorrelationOptions } from './funnel-correlation';
import { parseFunnelFilter } from './funnel-filter';
import type { FunnelStep } from './funnels.query';
import { QueryFilterError } from '../common/query-filter-error';

/**
 * Ordered, strict and unordered funnel steps, ported from PostHog's
 * posthog/hogql_queries/insights/funnels/test/test_funnel.py, test_funnel_strict.py and
 * test_funnel_unordered.py (each test named in its title): their data, query, asserted counts and,
 * for test_funnel.py, asserted actors (`_get_actor_ids_at_step`).
 * PostHog's tests create events one after another at "now"; here they are one second apart in
 * the order the test creates them, inside the default date range.
 */
const NOW = Date.parse('2024-06-01T12:00:00Z');
const BASE = Date.parse('2024-05-30T10:00:00Z');

type Row = [person: string, event: string, properties?: Record<string, unknown>, distinctId?: string];

/** Events in the order a PostHog test creates them, one second apart. */
function created(rows: Row[], extra: Partial<JourneyEvent> = {}): JourneyPeople {
  const people: JourneyPeople = {};
  rows.forEach(([person, event, properties, distinctId], i) => {
    const timestamp = new Date(BASE + i * 1000).toISOString();
    (people[person] ??= []).push({ event, timestamp, ...(properties ? { properties } : {}), ...(distinctId ? { distinctId } : {}), ...extra });
  });
  return people;
}

const PAY_CHAIN = 'button:nth-child="0"nth-of-type="1"text="Pay $10"';
const MOVIE_CHAIN = 'a:href="/movie"nth-child="0"nth-of-type="1"';
const signup = (distinctId?: string): JourneyEvent => ({ event: 'user signed up', timestamp: '', ...(distinctId ? { distinctId } : {}) });
const pay = (distinctId?: string): JourneyEvent => ({ event: '$autocapture', timestamp: '', elementsChain: PAY_CHAIN, ...(distinctId ? { distinctId } : {}) });
const movie = (distinctId?: string): JourneyEvent => ({
  event: '$autocapture',
  timestamp: '',
  elementsChain: MOVIE_CHAIN,
  ...(distinctId ? { distinctId } : {}),
});

/** Journeys given as [person, event] in creation order, timed one second apart. */
function sequence(rows: [string, JourneyEvent][]): JourneyPeople {
  const people: JourneyPeople = {};
  rows.forEach(([person, e], i) => (people[person] ??= []).push({ ...e, timestamp: new Date(BASE + i * 1000).toISOString() }));
  return people;
}

/** PostHog's _basic_funnel actions: "paid" (a "Pay $10" button) and "watched movie" (a link to /movie). */
const BASIC_ACTIONS: Record<string, ActionStep[]> = {
  paid: [{ event: '$autocapture', tag_name: 'button', text: 'Pay $10' }],
  'watched movie': [{ event: '$autocapture', tag_name: 'a', href: '/movie' }],
};

const UNORDERED_BASIC: Row[] = [
  ['p1', 'user signed up'],
  ['p2', '$pageview'],
  ['p2', 'user signed up'],
  ['p3', 'user signed up'],
  ['p3', '$pageview'],
  ['p3', 'blaah blaa'],
  ['p3', 'insight viewed'],
  ['p4', 'insight viewed'],
  ['p4', '$pageview'],
  ['p4', 'user signed up'],
  ['p5', '$pageview'],
  ['p5', 'user signed up'],
  ['p5', 'blaah blaa'],
  ['p5', 'insight viewed'],
  ['p6', 'blaah blaa'],
  ['p6', 'insight viewed'],
  ['p7', '$pageview'],
  ['p7', 'blaah blaa'],
  ['p8', 'insight viewed'],
  ['p8', '$pageview'],
];

const PATH = ['user signed up', '$pageview', 'insight viewed', 'invite teammate', 'pageview2'];
const timed = (rows: [string, string, string][]): JourneyPeople => {
  const people: JourneyPeople = {};
  for (const [person, event, timestamp] of rows) (people[person] ??= []).push({ event, timestamp });
  return people;
};

interface Case {
  people: JourneyPeople;
  personProperties?: Record<string, Record<string, unknown>>;
  distinctIds?: Record<string, string[]>;
  actions?: Record<string, ActionStep[]>;
  /** Write person rows too (cohorts read persons' own properties); default: events only. */
  createPeople?: boolean;
  /** Cohorts by name: dynamic ones by their filters, static ones by their members' journey keys. */
  cohorts?: Record<string, { filters: unknown } | { members: string[] }>;
  /** Distinct ids re-pointed to another journey's person after the events were written (a merge). */
  merges?: Record<string, string>;
  /** Events written with the all-zero person id (PostHog's person-on-events rows with no person). */
  zeroPersonEvents?: JourneyEvent[];
}

/** test_funnel_events' journeys (and test_funnel_events_with_person_on_events_v2's). */
const FUNNEL_EVENTS: Case = {
  people: sequence([
    ['stopped_after_signup', signup()],
    ['stopped_after_pay', signup()],
    ['stopped_after_pay', pay()],
    ['had_anonymous_id', signup()],
    ['had_anonymous_id', pay('completed_movie')],
    ['had_anonymous_id', movie('completed_movie')],
    ['just_did_movie', movie()],
    ['wrong_order', pay()],
    ['wrong_order', signup()],
    ['wrong_order', movie()],
  ]),
  distinctIds: { had_anonymous_id: ['completed_movie'] },
  actions: BASIC_ACTIONS,
};

/** test_funnel.py's _create_groups: org:5 is in finance, org:6 in technology (frozen on each event). */
const INDUSTRY: Record<string, string> = { 'org:5': 'finance', 'org:6': 'technology' };
const inGroup = (event: string, timestamp: string, org?: string): JourneyEvent => ({
  event,
  timestamp,
  ...(org ? { properties: { $group_0: org }, groupProperties: { 0: INDUSTRY[org] ? { industry: INDUSTRY[org] } : {} } } : {}),
});

/** Two persons who sign up and pay in January 2020 (the cohort step filter tests). */
const SIGNUP_AND_PAID: JourneyPeople = {
  user_1: [
    { event: 'user signed up', timestamp: '2020-01-02T14:00:00Z' },
    { event: 'paid', timestamp: '2020-01-10T14:00:00Z' },
  ],
  user_2: [
    { event: 'user signed up', timestamp: '2020-01-02T14:00:00Z' },
    { event: 'paid', timestamp: '2020-01-10T14:00:00Z' },
  ],
};
/** A cohort of persons whose email contains `value` (PostHog's `groups: [{properties: [...]}]`, as filters). */
const EMAIL_CONTAINS = (value: string) => ({
  properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'email', operator: 'icontains', value, type: 'person' }] }] },
});

const CASES: Record<string, Case> = {
  funnelEvents: FUNNEL_EVENTS,
  // The same journeys; afterwards stopped_after_signup's distinct id points at stopped_after_pay's person.
  personOnEventsV2: { ...FUNNEL_EVENTS, merges: { stopped_after_signup: 'stopped_after_pay' } },
  groups: {
    people: {
      user_1: [inGroup('user signed up', '2020-01-02 14:00:00', 'org:5'), inGroup('user signed up', '2020-01-10 14:00:00', 'org:6')],
      user_2: [inGroup('paid', '2020-01-03 14:00:00', 'org:5')],
    },
  },
  groupsAcrossPersons: {
    people: {
      user_1: [inGroup('user signed up', '2020-01-02 14:00:00', 'org:5'), inGroup('paid', '2020-01-03 14:00:00', 'org:6')],
      user_2: [inGroup('user signed up', '2020-01-02 14:00:00', 'org:6'), inGroup('paid', '2020-01-03 14:00:00', 'org:5')],
    },
  },
  groupsAndUngrouped: {
    people: {
      user_1: [inGroup('user signed up', '2020-01-02 14:00:00', 'org:5'), inGroup('paid', '2020-01-03 14:00:00', 'org:5')],
      user_2: [inGroup('user signed up', '2020-01-02 14:00:00')],
      user_3: [inGroup('paid', '2020-01-03 14:00:00')],
      user_4: [inGroup('user signed up', '2020-01-02 14:00:00'), inGroup('paid', '2020-01-03 14:00:00')],
    },
  },
  groupsWithCohort: {
    people: {
      user_1: [
        inGroup('$pageview', '2020-01-02 14:00:00', 'org:5'),
        inGroup('user signed up', '2020-01-02 14:00:00', 'org:5'),
        inGroup('user signed up', '2020-01-10 14:00:00', 'org:6'),
      ],
      user_2: [inGroup('paid', '2020-01-03 14:00:00', 'org:5')],
      user_3: [inGroup('user signed up', '2020-01-02 14:00:00', 'org:7'), inGroup('paid', '2020-01-03 14:00:00', 'org:7')],
    },
    personProperties: { user_1: { email: 'fake@test.com' }, user_2: { email: 'fake@test.com' }, user_3: { email: 'fake_2@test.com' } },
    createPeople: true,
    cohorts: { fake: { filters: EMAIL_CONTAINS('fake@test.com') } },
  },
  precalculatedCohort: {
    people: SIGNUP_AND_PAID,
    personProperties: { user_1: { email: 'n@test.com' } },
    createPeople: true,
    cohorts: { dotCom: { filters: EMAIL_CONTAINS('.com') } },
  },
  staticCohort: {
    people: SIGNUP_AND_PAID,
    personProperties: { user_1: { email: 'n@test.com' } },
    createPeople: true,
    // PostHog's insert_users_by_list(["user_2", "rando"]): "rando" is no one's distinct id.
    cohorts: { listed: { members: ['user_2'] } },
  },
  personless: {
    people: {
      someone: [
        { event: '$pageview', timestamp: '2024-03-22T13:00:00Z' },
        { event: 'sign up', timestamp: '2024-03-22T14:00:00Z' },
      ],
    },
  },
  messedUpOrder: {
    // stopped_after_pay's movie is sent as completed_movie, a distinct id of had_anonymous_id.
    people: sequence([
      ['stopped_after_signup', signup()],
      ['stopped_after_pay', signup()],
      ['had_anonymous_id', movie('completed_movie')],
      ['had_anonymous_id', signup()],
      ['had_anonymous_id', movie('completed_movie')],
      ['just_did_movie', movie()],
      ['wrong_order', movie()],
      ['wrong_order', signup()],
    ]),
    distinctIds: { had_anonymous_id: ['completed_movie'] },
    actions: BASIC_ACTIONS,
  },
  anyEvent: {
    people: sequence([
      ['stopped_after_signup', signup()],
      ['stopped_after_pay', signup()],
      ['stopped_after_pay', movie()],
      ['completed_movie', signup()],
      ['completed_movie', movie()],
      ['just_did_movie', movie()],
      ['wrong_order', movie()],
      ['wrong_order', signup()],
      ['wrong_order', movie()],
    ]),
  },
  skippedStep: {
    people: sequence([
      ['wrong_order', signup()],
      ['wrong_order', movie()],
    ]),
    actions: BASIC_ACTIONS,
  },
  propFilters: {
    people: sequence([
      ['with_property', { ...signup(), properties: { $browser: 'Safari' } }],
      ['with_property', { ...pay(), properties: { $browser: 'Safari' } }],
      ['without_property', signup()],
      ['without_property', pay()],
      ['half_property', { ...signup(), properties: { $browser: 'Safari' } }],
      ['half_property', pay()],
    ]),
    actions: BASIC_ACTIONS,
  },
  propFiltersPerEntity: {
    people: sequence([
      ['with_property', { ...signup(), properties: { $browser: 'Safari' } }],
      ['with_property', { ...pay(), properties: { $browser: 'Safari' } }],
      ['with_property', movie()],
      ['without_property', signup()],
      ['without_property', { ...pay(), properties: { $browser: 'Safari' } }],
      ['half_property', signup()],
      ['half_property', pay()],
      ['half_property', movie()],
    ]),
    personProperties: { with_property: { $browser: 'Safari' } },
    actions: BASIC_ACTIONS,
  },
  personProp: {
    people: sequence([
      ['with_property', signup()],
      ['with_property', pay()],
      ['with_property', movie()],
    ]),
    personProperties: { with_property: { email: 'hello@posthog.com' } },
    actions: BASIC_ACTIONS,
  },
  multipleActions: {
    people: created([
      ['person1', 'event1'],
      ['person1', 'event2', { test_propX: 'a' }],
    ]),
    actions: {
      'event2 a': [{ event: 'event2', properties: [{ key: 'test_propX', value: 'a' } as never] }],
      'event2 c': [{ event: 'event2', properties: [{ key: 'test_propX', value: 'c' } as never] }],
    },
  },
  entityPersonFilters: {
    people: created([
      ['person1', 'event1'],
      ['person2', 'event1'],
      ['person3', 'event1'],
    ]),
    personProperties: { person1: { email: 'test@posthog.com' }, person2: { email: 'another@example.com' } },
    actions: { event1: [{ event: 'event1', properties: [{ key: 'email', value: 'is_set', operator: 'is_set', type: 'person' } as never] }] },
  },
  defaultDays: {
    people: {
      user_1: [
        { event: 'user signed up', timestamp: '2020-01-02T14:00:00Z' },
        { event: 'paid', timestamp: '2020-01-10T14:00:00Z' },
      ],
    },
  },
  hogqlAggregation: {
    people: created([
      ['user', 'user signed up', { $session_id: '1' }],
      ['user', 'added to cart', { $session_id: '1' }],
      ['user', 'checked out', { $session_id: '1' }],
      ['user', 'user signed up', { $session_id: '2' }],
      ['user', 'added to cart', { $session_id: '2' }],
      ['second', 'user signed up', { $session_id: '3' }],
    ]),
    personProperties: {
      user: { email: 'lembitu@posthog.com', common_prop: 'yes' },
      second: { email: 'toomas@posthog.com', common_prop: 'yes' },
    },
  },
  repeatSteps: {
    people: created([
      ['stopped_after_signup1', 'user signed up'],
      ['stopped_after_signup1', 'user signed up'],
      ['stopped_after_signup2', 'user signed up'],
    ]),
  },
  derivativeSteps: {
    people: created([
      ['stopped_after_signup1', 'user signed up', { key: 'val' }],
      ['stopped_after_signup1', 'user signed up'],
      ['stopped_after_signup2', 'user signed up', { key: 'val' }],
    ]),
  },
  advancedRepeat: {
    people: created([
      ['s1', 'user signed up'],
      ['p1', 'user signed up'],
      ['p1', '$pageview'],
      ['p2', 'user signed up'],
      ['p2', '$pageview'],
      ['p2', 'blaah blaa'],
      ['p2', '$pageview'],
      ['p3', 'user signed up'],
      ['p3', '$pageview'],
      ['p3', 'blaah blaa'],
      ['p3', '$pageview'],
      ['p3', '$pageview'],
      ['p3', 'blaah blaa'],
      ['p4', 'user signed up'],
      ['p4', '$pageview'],
      ['p4', '$pageview'],
      ['p4', '$pageview'],
      ['p4', '$pageview'],
    ]),
  },
  advancedRepeatOutOfOrder: {
    people: sequence([
      ['p1', { event: '$pageview', timestamp: '', distinctId: 'random' }],
      ['p1', { event: 'user signed up', timestamp: '' }],
      ['p2', { event: 'user signed up', timestamp: '' }],
      ['p2', { event: '$pageview', timestamp: '' }],
      ['p3', { event: '$pageview', timestamp: '' }],
      ['p3', { event: 'user signed up', timestamp: '' }],
      ['p3', { event: 'blaah blaa', timestamp: '' }],
      ['p3', { event: '$pageview', timestamp: '' }],
      ['p4', { event: 'blaah blaa', timestamp: '' }],
      ['p4', { event: '$pageview', timestamp: '' }],
      ['p4', { event: 'blaah blaa', timestamp: '' }],
      ['p4', { event: '$pageview', timestamp: '' }],
      ['p4', { event: 'user signed up', timestamp: '' }],
      ['p4', { event: '$pageview', timestamp: '' }],
      ['p5', { event: 'user signed up', timestamp: '' }],
      ['p5', { event: '$pageview', timestamp: '' }],
      ['p5', { event: 'blaah blaa', timestamp: '' }],
      ['p5', { event: '$pageview', timestamp: '' }],
      ['p5', { event: '$pageview', timestamp: '' }],
      ['p5', { event: '$pageview', timestamp: '' }],
      ['p6', { event: '$pageview', timestamp: '' }],
      ['p6', { event: 'blaah blaa', timestamp: '' }],
      ['p6', { event: '$pageview', timestamp: '' }],
      ['p6', { event: '$pageview', timestamp: '' }],
      ['p6', { event: '$pageview', timestamp: '' }],
    ]),
    distinctIds: { p1: ['random'] },
  },
  withActions: {
    people: created([
      ['stopped_after_signup1', 'sign up', { key: 'val' }],
      ['stopped_after_signup1', 'sign up', { key: 'val' }],
      ['stopped_after_signup2', 'sign up', { key: 'val' }],
    ]),
    actions: { 'sign up': [{ event: 'sign up', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' } as never] }] },
  },
  sameTimeActions: {
    people: {
      stopped_after_signup1: [
        { event: 'sign up', timestamp: '2020-01-03 00:00:00', properties: { key: 'val' } },
        { event: '$pageview', timestamp: '2020-01-03 00:00:00', properties: { key: 'val' } },
      ],
      stopped_after_signup2: [{ event: 'sign up', timestamp: '2020-01-03 00:00:00', properties: { key: 'val' } }],
    },
    actions: { 'sign up': [{ event: 'sign up', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' } as never] }] },
  },
  actionsAndProps: {
    people: created([
      ['stopped_after_signup1', 'sign up', { key: 'val' }],
      ['stopped_after_signup1', 'sign up', { key: 'val' }],
      ['stopped_after_signup2', 'sign up', { key: 'val' }],
    ]),
    personProperties: { stopped_after_signup1: { email: 'fake@test.com' }, stopped_after_signup2: { email: 'fake@test.com' } },
    actions: { 'sign up': [{ event: 'sign up', properties: [{ key: 'email', operator: 'icontains', value: '.com', type: 'person' } as never] }] },
  },
  actionsAndPropsZeroPersonIds: {
    people: created([
      ['stopped_after_signup1', 'sign up', { key: 'val' }],
      ['stopped_after_signup1', 'sign up', { key: 'val' }],
      ['stopped_after_signup2', 'sign up', { key: 'val' }],
    ]),
    personProperties: { stopped_after_signup1: { email: 'fake@test.com' }, stopped_after_signup2: { email: 'fake@test.com' } },
    actions: { 'sign up': [{ event: 'sign up', properties: [{ key: 'email', operator: 'icontains', value: '.com', type: 'person' } as never] }] },
    zeroPersonEvents: [
      { event: 'sign up', timestamp: new Date(BASE + 3000).toISOString(), properties: { key: 'val' }, distinctId: 'zero_person_id' },
      { event: 'sign up', timestamp: new Date(BASE + 4000).toISOString(), properties: { key: 'val' }, distinctId: 'zero_person_id' },
    ],
  },
  matchingProperties: {
    people: created([
      ['s1', 'user signed up'],
      ['p1', 'user signed up'],
      ['p1', '$pageview', { $current_url: 'aloha.com' }],
      ['p2', 'user signed up'],
      ['p2', '$pageview', { $current_url: 'aloha.com' }],
      ['p2', 'blaah blaa', { $current_url: 'aloha.com' }],
      ['p2', '$pageview', { $current_url: 'aloha2.com' }],
      ['p3', 'user signed up'],
      ['p3', '$pageview', { $current_url: 'aloha.com' }],
      ['p3', '$pageview', { $current_url: 'aloha2.com' }],
      ['p3', '$pageview', { $current_url: 'aloha2.com' }],
      ['p3', 'blaah blaa'],
      ['p4', 'user signed up'],
      ['p4', '$pageview', { $current_url: 'aloha.com' }],
      ['p4', 'blaah blaa'],
      ['p4', '$pageview', { $current_url: 'aloha2.com' }],
      ['p4', '$pageview', { $current_url: 'aloha.com' }],
      ['p4', '$pageview', { $current_url: 'aloha2.com' }],
    ]),
  },
  denormalised: {
    people: {
      user_1: [
        { event: 'user signed up', timestamp: '2020-01-02T14:00:00Z', properties: { test_prop: 'hi' } },
        { event: 'paid', timestamp: '2020-01-10T14:00:00Z' },
      ],
    },
  },
  sameEventSameTime: {
    people: {
      test: [
        ...Array.from({ length: 20 }, () => ({ event: 'step one', timestamp: '2024-01-10 12:01:00' })),
        { event: 'step two', timestamp: '2024-01-11 12:01:00' },
      ],
    },
  },
  propertyGroups: {
    people: {
      stopped_after_signup1: [{ event: 'user signed up', timestamp: '2020-05-01 00:00:00' }],
      stopped_after_pageview1: [{ event: 'user signed up', timestamp: '2020-05-01 00:00:00' }],
      stopped_after_pageview2: [
        { event: 'user signed up', timestamp: '2020-05-01 00:00:00' },
        { event: '$pageview', properties: { $current_url: 'aloha.com' }, timestamp: '2020-05-02 00:00:00' },
      ],
      stopped_after_pageview3: [
        { event: 'user signed up', timestamp: '2020-05-01 00:00:00' },
        { event: '$pageview', properties: { $current_url: 'aloha.com' }, timestamp: '2020-05-02 00:00:00' },
        { event: '$pageview', properties: { $current_url: 'aloha2.com' }, timestamp: '2020-05-03 00:00:00' },
      ],
      stopped_after_pageview4: [
        { event: '$pageview', properties: { $current_url: 'aloha.com' }, timestamp: '2020-05-02 00:00:00' },
        { event: '$pageview', properties: { $current_url: 'aloha2.com' }, timestamp: '2020-05-03 00:00:00' },
        { event: '$pageview', properties: { $current_url: 'aloha2.com' }, timestamp: '2020-05-04 00:00:00' },
      ],
    },
    personProperties: {
      stopped_after_signup1: { email: 'test@b.com', age: '18' },
      stopped_after_pageview1: { email: 'test@b.org', age: '28' },
      stopped_after_pageview2: { email: 'test2@b.com', age: '28' },
      stopped_after_pageview3: { email: 'test3@b.com', age: '28' },
      stopped_after_pageview4: { email: 'test4@b.org', age: '18' },
    },
  },
  timezones: { people: { user_1: [{ event: 'user signed up', timestamp: '2020-01-01T01:00:00Z' }] } },
  testAccounts: {
    people: created([
      ['person1', 'event1'],
      ['person2', 'event1'],
    ]),
    personProperties: { person1: { email: 'test@posthog.com' } },
  },
  elementsChain: {
    people: sequence([
      ['test', signup()],
      [
        'test',
        {
          event: '$autocapture',
          timestamp: '',
          properties: { $current_url: 'http://example.com/something_else' },
          elementsChain: 'img:nth-child="0"nth-of-type="0";svg:nth-child="0"nth-of-type="0"',
        },
      ],
      ['test2', signup()],
    ]),
  },
  allEventsWithProperties: {
    people: created([
      ['user', 'user signed up'],
      ['user', 'added to cart', { is_saved: true }],
    ]),
  },
  allEventsViaAction: {
    people: created([
      ['user', 'user signed up'],
      ['user', 'added to cart', { is_saved: true }],
    ]),
    actions: { 'checked out or anything': [{ event: 'checked out' }, { event: null }] },
  },
  strictBasic: {
    people: created([
      ['p1', 'user signed up'],
      ['p2', '$pageview'],
      ['p2', 'user signed up'],
      ['p3', 'user signed up'],
      ['p3', '$pageview'],
      ['p3', 'blaah blaa'],
      ['p3', 'insight viewed'],
      ['p4', 'insight viewed'],
      ['p4', 'blaah blaa'],
      ['p4', '$pageview'],
      ['p4', 'user signed up'],
      ['p5', '$pageview'],
      ['p5', 'user signed up'],
      ['p5', 'blaah blaa'],
      ['p5', '$pageview'],
      ['p5', 'insight viewed'],
      ['p6', 'blaah blaa'],
      ['p6', 'user signed up'],
      ['p6', 'blaah blaa'],
      ['p6', '$pageview'],
      ['p7', 'blaah blaa'],
      ['p7', 'user signed up'],
      ['p7', '$pageview'],
      ['p7', 'insight viewed'],
      ['p7', 'blaah blaa'],
      ['p8', 'insight viewed'],
      ['p8', '$pageview'],
    ]),
  },
  strictAdvanced: {
    people: created([
      ['p1', 'user signed up'],
      ['p2', 'user signed up'],
      ['p2', '$pageview'],
      ['p3', 'user signed up'],
      ['p3', 'sign up', { key: 'val' }],
      ['p3', 'sign up', { key: 'val2' }],
      ['p3', '$pageview'],
      ['p3', 'blaah blaa'],
      ['p3', 'insight viewed'],
      ['p4', 'blaah blaa'],
      ['p4', 'user signed up'],
      ['p4', 'sign up', { key: 'val' }],
      ['p4', '$pageview', { key: 'val' }],
      ['p4', 'blaah blaa'],
      ['p5', 'blaah blaa'],
      ['p5', 'user signed up'],
      ['p5', 'sign up', { key: 'val' }],
      ['p5', '$pageview'],
      ['p5', 'blaah blaa'],
      ['p6', 'blaah blaa'],
      ['p6', 'user signed up'],
      ['p6', 'sign up', { key: 'val' }],
      ['p6', '$pageview'],
      ['p6', 'pageview', { key: 'val1' }],
      ['p7', 'blaah blaa'],
      ['p7', 'user signed up'],
      ['p7', 'sign up', { key: 'val' }],
      ['p7', '$pageview'],
      ['p7', 'user signed up'],
      ['p7', 'pageview', { key: 'val' }],
      ['p8', 'blaah blaa'],
      ['p8', 'user signed up'],
      ['p8', 'user signed up'],
      ['p8', 'sign up', { key: 'val' }],
      ['p8', '$pageview'],
      ['p8', 'pageview', { key: 'val' }],
    ]),
    actions: {
      'sign up': [{ event: 'sign up', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' } as never] }],
      pageview: [{ event: 'pageview', properties: [{ key: 'key', type: 'event', value: ['val'], operator: 'exact' } as never] }],
    },
  },
  strictConversionTimes: {
    people: timed([
      ['stopped_after_signup1', 'user signed up', '2021-05-02 00:00:00'],
      ['stopped_after_pageview1', 'user signed up', '2021-05-02 00:00:00'],
      ['stopped_after_pageview1', '$pageview', '2021-05-02 01:00:00'],
      ['stopped_after_insightview', 'user signed up', '2021-05-02 00:00:00'],
      ['stopped_after_insightview', '$pageview', '2021-05-02 02:00:00'],
      ['stopped_after_insightview', 'insight viewed', '2021-05-02 04:00:00'],
    ]),
  },
  unorderedConversionTimes: {
    people: timed([
      ['stopped_after_signup1', 'user signed up', '2021-05-02 00:00:00'],
      ['stopped_after_pageview1', '$pageview', '2021-05-02 00:00:00'],
      ['stopped_after_pageview1', 'user signed up', '2021-05-02 01:00:00'],
      ['stopped_after_insightview', 'insight viewed', '2021-05-02 00:00:00'],
      ['stopped_after_insightview', 'user signed up', '2021-05-02 02:00:00'],
      ['stopped_after_insightview', '$pageview', '2021-05-02 04:00:00'],
      ['stopped_after_insightview', '$pageview', '2021-05-03 00:00:00'],
      ['stopped_after_insightview', 'insight viewed', '2021-05-03 03:00:00'],
      ['stopped_after_insightview', 'user signed up', '2021-05-03 06:00:00'],
    ]),
  },
  unorderedBasic: { people: created(UNORDERED_BASIC) },
  unorderedBig: {
    people: created([
      ['p1', 'user signed up'],
      ['p2', '$pageview'],
      ['p2', 'crying'],
      ['p3', 'user signed up'],
      ['p3', '$pageview'],
      ['p3', 'blaah blaa'],
      ['p3', 'insight viewed'],
      ['p4', 'insight viewed'],
      ['p4', 'crying'],
      ['p4', 'user signed up'],
      ['p5', '$pageview'],
      ['p5', 'user signed up'],
      ['p5', 'crying'],
      ['p5', 'insight viewed'],
      ['p6', 'blaah blaa'],
      ['p6', 'insight viewed'],
      ['p7', '$pageview'],
      ['p7', 'blaah blaa'],
      ['p8', 'insight viewed'],
      ['p8', '$pageview'],
    ]),
  },
  unorderedFullWindow: {
    people: timed([
      ['person1', 'user signed up', '2021-05-01 01:00:00'],
      ['person1', 'paid', '2021-05-01 02:00:00'],
      ['person2', 'user signed up', '2021-05-01 03:00:00'],
      ['person2', 'x', '2021-05-01 03:30:00'],
      ['person2', 'paid', '2021-05-01 04:00:00'],
      ['person3', 'user signed up', '2021-05-01 05:00:00'],
      ['person3', 'paid', '2021-05-01 06:00:00'],
    ]),
  },
  unorderedAfterCompletion: {
    people: timed([
      ['person1', 'user signed up', '2021-05-01 01:00:00'],
      ['person1', 'paid', '2021-05-01 02:00:00'],
      ['person1', 'left', '2021-05-01 03:00:00'],
      ['person1', 'x', '2021-05-01 04:00:00'],
      ['person1', 'left', '2021-05-01 05:00:00'],
    ]),
  },
  unorderedMultipleExclusions: {
    people: timed([
      ...(
        [
          [
            'person1',
            ['user signed up', 'x', '$pageview', 'insight viewed', 'y', 'invite teammate', 'pageview2'],
            ['01:00', '02:00', '03:00', '04:00', '04:30', '05:00', '06:00'],
          ],
          [
            'person2',
            ['user signed up', 'y', '$pageview', 'insight viewed', 'y', 'invite teammate', 'x', 'pageview2'],
            ['01:00', '01:30', '02:00', '04:00', '04:30', '05:00', '05:30', '06:00'],
          ],
          [
            'person3',
            ['user signed up', 'x', '$pageview', 'insight viewed', 'invite teammate', 'x', 'pageview2'],
            ['01:00', '01:30', '02:00', '04:00', '05:00', '05:30', '06:00'],
          ],
          ['person4', ['user signed up', '$pageview', 'insight viewed', 'invite teammate', 'pageview2'], ['01:00', '02:00', '04:00', '05:00', '06:00']],
          [
            'person5',
            ['user signed up', 'x', '$pageview', 'x', 'insight viewed', 'y', 'invite teammate', 'x', 'pageview2'],
            ['01:00', '01:30', '02:00', '02:30', '04:00', '04:30', '05:00', '05:30', '06:00'],
          ],
        ] as [string, string[], string[]][]
      ).flatMap(([person, events, times]) => events.map((event, i): [string, string, string] => [person, event, `2021-05-01 ${times[i]}:00`])),
    ]),
  },
  unorderedAllEventsWithProperties: {
    people: created([
      ['user', 'user signed up'],
      ['user', 'added to card', { is_saved: true }],
    ]),
  },
  unorderedEntityFilters: {
    people: created([
      ['user', 'user signed up', { prop_a: 'some value' }],
      ['user', 'user signed up', { prop_b: 'another value' }],
    ]),
  },
  unorderedDst: {
    people: {
      user_1: [
        { event: '$pageview', timestamp: '2024-03-01 15:10:00' },
        { event: 'user signed up', timestamp: '2024-03-15 14:27:00' },
      ],
    },
  },
  unorderedPartialExclusion: {
    people: timed([
      ['user_1', 'step 1', '2024-03-01 10:00:00'],
      ['user_1', 'step 2', '2024-03-01 11:00:00'],
      ['user_1', 'exclusion event', '2024-03-01 12:00:00'],
      ['user_1', 'step 3', '2024-03-01 13:00:00'],
      ['user_2', 'step 1', '2024-03-01 10:00:00'],
      ['user_2', 'step 2', '2024-03-01 11:00:00'],
      ['user_2', 'step 3', '2024-03-01 12:00:00'],
    ]),
  },
};

describe('funnel steps: ordered, strict and unordered (PostHog test_funnel*.py)', () => {
  let stores: TestStores;
  let service: TrendsService;
  const teams: Record<string, number> = {};
  const actions: Record<string, number> = {};
  const cohorts: Record<string, number> = {};

  /** A case's funnel filter; an action step named `@name` is that case's action. */
  const resolve = (name: string, body: Record<string, unknown>) =>
    Array.isArray(body['actions'])
      ? { ...body, actions: (body['actions'] as Record<string, unknown>[]).map((a) => ({ ...a, id: actions[`${name}/${String(a['id']).slice(1)}`] })) }
      : body;
  const funnel = async (name: string, body: Record<string, unknown>, timezone = 'UTC', project: Record<string, unknown> = {}) =>
    (await service.runFunnel({ id: teams[name]!, timezone, ...project } as never, parseFunnelFilter(resolve(name, body)), NOW)).result as FunnelStep[];
  /** PostHog's _get_actor_ids_at_step: the ids of the actors at a funnel step, in any order. */
  const actorIds = async (name: string, body: Record<string, unknown>, funnelStep: number) =>
    (
      await service.runFunnelActors(
        { id: teams[name]!, timezone: 'UTC' },
        parseFunnelFilter(resolve(name, body)),
        parseFunnelActorsRequest({ funnelStep }),
        parseFunnelActorsPage({ select: ['id'] }),
        NOW,
      )
    ).results
      .map((row) => row[0] as string)
      .sort();
  const who = (name: string, ...people: string[]) => people.map((p) => journeyPersonUuid(p, teams[name])).sort();
  /** Asserts each step's actors, step 1 first. */
  const expectActors = async (name: string, body: Record<string, unknown>, perStep: string[][]) => {
    for (const [i, people] of perStep.entries()) expect(await actorIds(name, body, i + 1)).toEqual(who(name, ...people));
  };
  const counts = (steps: FunnelStep[]) => steps.map((s) => s.count);
  const events = (...ids: (string | null)[]) => ids.map((id, order) => ({ id, type: 'events', order }));
  const action = (name: string, order: number, extra: Record<string, unknown> = {}) => ({ id: `@${name}`, type: 'actions', order, ...extra });
  const basic = (steps: unknown[]) => ({
    ...steps.reduce<Record<string, unknown[]>>((acc, s) => {
      const kind = (s as { type: string }).type;
      (acc[kind] ??= []).push(s);
      return acc;
    }, {}),
    funnel_window_days: 14,
  });

  beforeAll(async () => {
    stores = await createTestStores('funnelsteps');
    service = createTrendsService({ db: stores.db, ch: stores.ch, cacheTtlMs: 0 });
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    for (const [name, c] of Object.entries(CASES)) {
      const [row] = await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, $2, 'phc_funnelsteps_' || $2) RETURNING id",
        [org!.organization_id, name],
      );
      teams[name] = row!.id;
      // Funnels need no person rows: each event carries its person's id and properties.
      const persons = await insertJourneys(stores, c.people, {
        teamId: row!.id,
        personProperties: c.personProperties,
        distinctIds: c.distinctIds,
        createPeople: c.createPeople ?? false,
      });
      for (const [cohortName, cohort] of Object.entries(c.cohorts ?? {})) {
        const members = 'members' in cohort ? cohort.members.map((key) => persons[key]!.id) : undefined;
        const id = await insertCohort(
          stores.db,
          row!.id,
          'members' in cohort ? { isStatic: true, personIds: members } : { isStatic: false, filters: cohort.filters },
        );
        if ('members' in cohort) await syncStaticCohortToClickHouse(stores.db, stores.ch, row!.id, id, NOW);
        cohorts[`${name}/${cohortName}`] = id;
      }
      if (c.merges) {
        const values = Object.entries(c.merges).map(([distinct_id, person]) => ({
          team_id: row!.id,
          distinct_id,
          person_id: journeyPersonUuid(person, row!.id),
          is_deleted: 0,
          version: 1,
        }));
        await stores.ch.insert({ table: 'person_distinct_id2', format: 'JSONEachRow', values });
      }
      if (c.zeroPersonEvents) {
        const rows = c.zeroPersonEvents.map((e) =>
          testEventRow({
            event: e.event,
            atMs: journeyTimeMs(e.timestamp),
            teamId: row!.id,
            distinctId: e.distinctId!,
            personId: '00000000-0000-0000-0000-000000000000',
            properties: e.properties ?? {},
          }),
        );
        await insertEvents(stores.ch, rows);
      }
      for (const [actionName, steps] of Object.entries(c.actions ?? {})) {
        actions[`${name}/${actionName}`] = (await insertAction(stores.db, row!.id, { name: actionName, steps }, null)).id;
      }
    }
  });
  afterAll(() => stores.close());

  describe('test_funnel.py', () => {
    it('test_funnel_events: events and actions, a person with two distinct ids', async () => {
      const steps = await funnel('funnelEvents', basic([events('user signed up')[0], action('paid', 1), action('watched movie', 2)]));
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid', 'watched movie']);
      expect(counts(steps)).toEqual([4, 2, 1]);
    });

    it('test_funnel_with_messed_up_order: steps given out of order', async () => {
      const steps = await funnel('messedUpOrder', basic([events('user signed up')[0], action('watched movie', 2)]));
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'watched movie']);
      expect(counts(steps)).toEqual([4, 1]);
    });

    it('test_funnel_with_any_event: all-events steps are named null', async () => {
      const steps = await funnel('anyEvent', basic(events(null, null, null)));
      expect(steps.map((s) => s.name)).toEqual([null, null, null]);
      expect(counts(steps)).toEqual([5, 3, 1]);
    });

    it('test_funnel_skipped_step', async () => {
      const steps = await funnel('skippedStep', basic([events('user signed up')[0], action('paid', 1), action('watched movie', 2)]));
      expect(counts(steps).slice(1)).toEqual([0, 0]);
    });

    it('test_funnel_prop_filters', async () => {
      const body = { ...basic([events('user signed up')[0], action('paid', 1), action('watched movie', 2)]), properties: { $browser: 'Safari' } };
      expect(counts(await funnel('propFilters', body)).slice(0, 2)).toEqual([2, 1]);
    });

    it('test_funnel_prop_filters_per_entity', async () => {
      const first = {
        ...events('user signed up')[0],
        properties: [
          { key: '$browser', value: 'Safari' },
          { key: '$browser', operator: 'is_not', value: 'Chrome' },
        ],
      };
      const body = basic([
        first,
        action('paid', 1, { properties: [{ key: '$browser', value: 'Safari' }] }),
        action('watched movie', 2, { properties: [{ key: '$browser', value: 'Firefox' }] }),
      ]);
      expect(counts(await funnel('propFiltersPerEntity', body))).toEqual([1, 1, 0]);
    });

    it('test_hogql_aggregation: funnel_aggregate_by_hogql counts sessions, distinct ids, persons or a person property', async () => {
      const body = { ...basic(events('user signed up', 'added to cart', 'checked out')) };
      const by = async (expression?: string) =>
        counts(await funnel('hogqlAggregation', expression === undefined ? body : { ...body, funnel_aggregate_by_hogql: expression }));
      expect(await by()).toEqual([2, 1, 1]);
      expect(await by('properties.$session_id')).toEqual([3, 2, 1]);
      expect(await by('distinct_id')).toEqual([2, 1, 1]);
      expect(await by('person_id')).toEqual([2, 1, 1]);
      expect(await by('person.properties.common_prop')).toEqual([1, 1, 1]);
    });

    it('funnel_aggregate_by_hogql: an expression the compiler refuses is a 400 naming the field', async () => {
      const body = { ...basic(events('user signed up', 'added to cart')), funnel_aggregate_by_hogql: 'count()' };
      await expect(funnel('hogqlAggregation', body)).rejects.toMatchObject({ attr: 'funnel_aggregate_by_hogql' });
    });

    it('funnel_aggregate_by_hogql: events correlate; a property correlation (no persons to read) is a 400', async () => {
      const body = { ...basic(events('user signed up', 'added to cart', 'checked out')), funnel_aggregate_by_hogql: 'properties.$session_id' };
      const project = { id: teams['hogqlAggregation']!, timezone: 'UTC' };
      const correlate = (options: Record<string, unknown>) => service.runCorrelation(project, parseFunnelFilter(body), parseCorrelationOptions(options), NOW);
      await expect(correlate({ funnel_correlation_type: 'events' })).resolves.toMatchObject({ result: { events: expect.any(Array) } });
      await expect(correlate({ funnel_correlation_type: 'properties', funnel_correlation_names: ['email'] })).rejects.toMatchObject({
        attr: 'funnel_aggregate_by_hogql',
      });
    });

    it('test_funnel_person_prop', async () => {
      const first = { ...events('user signed up')[0], properties: [{ key: 'email', value: 'hello@posthog.com', type: 'person' }] };
      expect(counts(await funnel('personProp', basic([first, action('paid', 1), action('watched movie', 2)])))).toEqual([1, 1, 1]);
    });

    it('test_funnel_multiple_actions: each action keeps its own property filters', async () => {
      const body = { events: [{ id: 'event1', order: 0 }], actions: [action('event2 a', 1), action('event2 c', 2)], funnel_window_days: 14 };
      expect(counts(await funnel('multipleActions', body))).toEqual([1, 1, 0]);
    });

    it('test_funnel_with_entity_person_property_filters', async () => {
      const body = {
        events: [
          { id: 'event1', order: 0, properties: [{ key: 'email', value: 'is_set', operator: 'is_set', type: 'person' }] },
          { id: null, order: 1 },
        ],
        funnel_window_days: 14,
      };
      expect((await funnel('entityPersonFilters', body))[0]!.count).toBe(2);
    });

    it('test_funnel_filter_by_action_with_person_properties', async () => {
      const body = { actions: [action('event1', 0), action('event1', 1)], funnel_window_days: 14 };
      expect((await funnel('entityPersonFilters', body))[0]!.count).toBe(2);
    });

    it('test_basic_funnel_default_funnel_days: a 14-day window when none is given', async () => {
      const steps = await funnel('defaultDays', { events: events('user signed up', 'paid'), date_from: '2020-01-01', date_to: '2020-01-14' });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid']);
      expect(counts(steps)).toEqual([1, 1]);
    });

    it('test_basic_funnel_with_repeat_steps', async () => {
      const steps = await funnel('repeatSteps', { events: events('user signed up', 'user signed up'), funnel_window_days: 14 });
      expect(counts(steps)).toEqual([2, 1]);
    });

    it('test_basic_funnel_with_derivative_steps', async () => {
      const body = {
        events: [
          { id: 'user signed up', type: 'events', order: 0, properties: { key: 'val' } },
          { id: 'user signed up', type: 'events', order: 1 },
        ],
        funnel_window_days: 14,
      };
      expect(counts(await funnel('derivativeSteps', body))).toEqual([2, 1]);
    });

    it('test_advanced_funnel_with_repeat_steps', async () => {
      const body = { events: events('user signed up', '$pageview', '$pageview', '$pageview', '$pageview') };
      expect(counts(await funnel('advancedRepeat', body))).toEqual([5, 4, 3, 2, 1]);
      // s1 is stopped_after_signup1, pN stopped_after_pageviewN.
      await expectActors('advancedRepeat', body, [['s1', 'p1', 'p2', 'p3', 'p4'], ['p1', 'p2', 'p3', 'p4'], ['p2', 'p3', 'p4'], ['p3', 'p4'], ['p4']]);
    });

    it('test_advanced_funnel_with_repeat_steps_out_of_order_events', async () => {
      const body = { events: events('user signed up', '$pageview', '$pageview', '$pageview', '$pageview'), funnel_window_days: 14 };
      expect(counts(await funnel('advancedRepeatOutOfOrder', body))).toEqual([5, 4, 1, 1, 1]);
      // pN is PostHog's personN (p1 also has the distinct id "random"); p6 never signs up.
      await expectActors('advancedRepeatOutOfOrder', body, [['p1', 'p2', 'p3', 'p4', 'p5'], ['p2', 'p3', 'p4', 'p5'], ['p5'], ['p5'], ['p5']]);
    });

    it('test_funnel_with_actions: the same action twice', async () => {
      const body = { actions: [action('sign up', 0, { math: 'dau' }), action('sign up', 1, { math: 'weekly_active' })] };
      const steps = await funnel('withActions', body);
      expect(steps[0]!.name).toBe('sign up');
      expect(counts(steps)).toEqual([2, 1]);
      await expectActors('withActions', body, [['stopped_after_signup1', 'stopped_after_signup2'], ['stopped_after_signup1']]);
    });

    it('test_funnel_with_different_actions_at_same_time_count_as_converted', async () => {
      const body = { actions: [action('sign up', 0)], events: [{ id: '$pageview', order: 1 }], date_from: '2020-01-01', date_to: '2020-01-07' };
      expect(counts(await funnel('sameTimeActions', body))).toEqual([2, 1]);
      await expectActors('sameTimeActions', body, [['stopped_after_signup1', 'stopped_after_signup2'], ['stopped_after_signup1']]);
    });

    it('test_funnel_with_actions_and_props: an action with a person property filter', async () => {
      const body = { actions: [action('sign up', 0, { math: 'dau' }), action('sign up', 1, { math: 'weekly_active' })] };
      expect(counts(await funnel('actionsAndProps', body))).toEqual([2, 1]);
      await expectActors('actionsAndProps', body, [['stopped_after_signup1', 'stopped_after_signup2'], ['stopped_after_signup1']]);
    });

    it('test_funnel_with_matching_properties', async () => {
      const body = {
        events: [
          { id: 'user signed up', order: 0 },
          { id: '$pageview', order: 1, properties: { $current_url: 'aloha.com' } },
          { id: '$pageview', order: 2, properties: { $current_url: 'aloha2.com' } },
          { id: '$pageview', order: 3, properties: { $current_url: 'aloha2.com' } },
          { id: '$pageview', order: 4 },
        ],
        funnel_window_days: 14,
      };
      expect(counts(await funnel('matchingProperties', body))).toEqual([5, 4, 3, 2, 0]);
      await expectActors('matchingProperties', body, [['s1', 'p1', 'p2', 'p3', 'p4'], ['p1', 'p2', 'p3', 'p4'], ['p2', 'p3', 'p4'], ['p3', 'p4'], []]);
    });

    it('test_funnel_with_denormalised_properties', async () => {
      const steps = await funnel('denormalised', {
        events: [
          { id: 'user signed up', type: 'events', order: 0, properties: [{ key: 'test_prop', value: 'hi' }] },
          { id: 'paid', type: 'events', order: 1 },
        ],
        date_from: '2020-01-01',
        properties: [{ key: 'test_prop', value: 'hi' }],
        date_to: '2020-01-14',
      });
      expect(steps[0]!.count).toBe(1);
    });

    it('test_same_event_same_timestamp', async () => {
      const steps = await funnel('sameEventSameTime', {
        funnel_viz_type: 'steps',
        date_from: '2024-01-10 00:00:00',
        date_to: '2024-01-12 00:00:00',
        events: [
          { id: 'step one', order: 0 },
          { id: 'step two', order: 1 },
        ],
      });
      expect(steps[steps.length - 1]!.count).toBe(1);
    });

    it('test_funnel_with_property_groups', async () => {
      const person = (key: string, operator: string, value: string) => ({ key, operator, value, type: 'person' });
      const body = {
        date_from: '2020-01-01 00:00:00',
        date_to: '2020-07-01 00:00:00',
        events: [
          { id: 'user signed up', order: 0 },
          { id: '$pageview', order: 1, properties: { $current_url: 'aloha.com' } },
          { id: '$pageview', order: 2, properties: { $current_url: 'aloha2.com' } },
        ],
        funnel_window_days: 14,
        properties: {
          type: 'OR',
          values: [
            { type: 'AND', values: [person('email', 'icontains', '.com'), person('age', 'exact', '20')] },
            { type: 'OR', values: [person('email', 'icontains', '.org'), person('age', 'exact', '28')] },
          ],
        },
      };
      expect(counts(await funnel('propertyGroups', body))).toEqual([3, 2, 1]);
      await expectActors('propertyGroups', body, [
        ['stopped_after_pageview1', 'stopped_after_pageview2', 'stopped_after_pageview3'],
        ['stopped_after_pageview2', 'stopped_after_pageview3'],
        ['stopped_after_pageview3'],
      ]);
    });

    it('test_timezones: a day of the range is a day of the project’s timezone', async () => {
      const steps = await funnel('timezones', { events: events('user signed up', 'paid'), date_from: '2020-01-01', date_to: '2020-01-14' }, 'US/Pacific');
      expect(counts(steps)).toEqual([0, 0]);
    });

    it('test_funnel_filter_test_accounts: the project’s test-account filter', async () => {
      // PostHog's default test-account filter for a team of a posthog.com organisation.
      const project = { test_account_filters: [{ key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' }] };
      const body = {
        events: [
          { id: 'event1', order: 0 },
          { id: 'event1', order: 1 },
        ],
        filter_test_accounts: true,
        funnel_window_days: 14,
      };
      expect((await funnel('testAccounts', body, 'UTC', project))[0]!.count).toBe(1);
    });

    it('test_funnel_with_elements_chain: a step filtered by an element’s tag', async () => {
      for (const tag of ['img', 'svg']) {
        const body = {
          events: [
            { id: 'user signed up', type: 'events', order: 0 },
            {
              id: '$autocapture',
              name: '$autocapture',
              order: 1,
              properties: [{ key: 'tag_name', value: [tag], operator: 'exact', type: 'element' }],
              type: 'events',
            },
          ],
        };
        const steps = await funnel('elementsChain', body);
        expect(steps.map((s) => s.name)).toEqual(['user signed up', '$autocapture']);
        expect(counts(steps)).toEqual([2, 1]);
        await expectActors('elementsChain', body, [['test', 'test2'], ['test']]);
      }
    });

    it('test_funnel_all_events_with_properties', async () => {
      const body = {
        events: [
          { type: 'events', id: 'user signed up', order: 0, name: 'user signed up', math: 'total' },
          {
            type: 'events',
            id: null,
            order: 1,
            name: 'All events',
            math: 'total',
            properties: [{ key: 'is_saved', value: ['true'], operator: 'exact', type: 'event' }],
          },
        ],
        funnel_window_days: 14,
      };
      expect(counts(await funnel('allEventsWithProperties', body))).toEqual([1, 1]);
    });

    it('test_funnel_all_events_via_action: an action step matching any event', async () => {
      const body = { events: [{ id: 'user signed up', type: 'events', order: 0 }], actions: [action('checked out or anything', 1)], funnel_window_days: 14 };
      expect(counts(await funnel('allEventsViaAction', body))).toEqual([1, 1]);
    });

    it('test_funnel_events_with_person_on_events_v2: a distinct id merged after its events counts for its new person', async () => {
      const steps = await funnel('personOnEventsV2', basic([events('user signed up')[0], action('paid', 1), action('watched movie', 2)]));
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid', 'watched movie']);
      expect(counts(steps)).toEqual([3, 2, 1]);
    });

    it('test_funnel_with_new_entities_that_mess_up_order: new_entities (not part of the query) are ignored', async () => {
      const steps = await funnel('messedUpOrder', {
        ...basic([{ id: 'user signed up', type: 'events', order: 1 }, action('watched movie', 2)]),
        new_entities: [
          { id: 'first', type: 'new_entity', order: 0 },
          { id: 'last', type: 'new_entity', order: 3 },
        ],
      });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'watched movie']);
      expect(counts(steps)).toEqual([4, 1]);
    });

    it('test_funnel_with_sampling: sampling_factor 1 reads every event', async () => {
      const steps = await funnel('messedUpOrder', { ...basic([events('user signed up')[0], action('watched movie', 2)]), sampling_factor: 1 });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'watched movie']);
      expect(counts(steps)).toEqual([4, 1]);
    });

    it('test_funnel_with_actions_and_props_with_zero_person_ids: events of the all-zero person id match no person filter', async () => {
      const body = { actions: [action('sign up', 0, { math: 'dau' }), action('sign up', 1, { math: 'weekly_active' })] };
      const steps = await funnel('actionsAndPropsZeroPersonIds', body);
      expect(steps[0]!.name).toBe('sign up');
      expect(counts(steps)).toEqual([2, 1]);
      await expectActors('actionsAndPropsZeroPersonIds', body, [['stopped_after_signup1', 'stopped_after_signup2'], ['stopped_after_signup1']]);
    });

    it('test_funnel_with_precalculated_cohort_step_filter: a "precalculated-cohort" filter is a cohort filter', async () => {
      const cohort = { type: 'precalculated-cohort', key: 'id', value: cohorts['precalculatedCohort/dotCom'] };
      const steps = await funnel('precalculatedCohort', {
        events: [
          { id: 'user signed up', type: 'events', order: 0, properties: [cohort] },
          { id: 'paid', type: 'events', order: 1 },
        ],
        date_from: '2020-01-01',
        date_to: '2020-01-14',
      });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid']);
      expect(counts(steps)).toEqual([1, 1]);
    });

    it('test_funnel_with_static_cohort_step_filter: a "static-cohort" filter is a cohort filter', async () => {
      const cohort = { type: 'static-cohort', key: 'id', value: cohorts['staticCohort/listed'] };
      const steps = await funnel('staticCohort', {
        events: [
          { id: 'user signed up', type: 'events', order: 0, properties: [cohort] },
          { id: 'paid', type: 'events', order: 1 },
        ],
        date_from: '2020-01-01',
        date_to: '2020-01-14',
      });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid']);
      expect(counts(steps)).toEqual([1, 1]);
    });

    it('test_funnel_personless_events_are_supported: events whose person id has no person row', async () => {
      const steps = await funnel('personless', { events: events('$pageview', 'sign up'), date_from: '2024-03-22', date_to: '2024-03-22' });
      expect(counts(steps)).toEqual([1, 1]);
    });

    describe('aggregation by groups', () => {
      const groupFunnel = (extra: Record<string, unknown> = {}) => ({
        events: events('user signed up', 'paid'),
        date_from: '2020-01-01',
        date_to: '2020-01-14',
        aggregation_group_type_index: 0,
        ...extra,
      });

      it('test_funnel_aggregation_with_groups: one person in two groups starts twice', async () => {
        const steps = await funnel('groups', groupFunnel());
        expect(counts(steps)).toEqual([2, 1]);
        expect(steps[1]!.average_conversion_time).toBe(86_400);
      });

      it('test_funnel_aggregation_with_groups_across_persons: a group converts through another person', async () => {
        const finance = { key: 'industry', value: 'finance', type: 'group', group_type_index: 0, operator: 'exact' };
        expect(counts(await funnel('groupsAcrossPersons', groupFunnel({ properties: [finance] })))).toEqual([1, 1]);
      });

      it('test_funnel_aggregation_with_groups_and_ungrouped_events: events without the group are left out', async () => {
        expect(counts(await funnel('groupsAndUngrouped', groupFunnel()))).toEqual([1, 1]);
      });

      it('test_funnel_aggregation_with_groups_with_cohort_filtering: a person cohort on a step of a group funnel', async () => {
        const cohort = { type: 'precalculated-cohort', key: 'id', value: cohorts['groupsWithCohort/fake'] };
        const steps = await funnel(
          'groupsWithCohort',
          groupFunnel({
            events: [
              { id: 'user signed up', type: 'events', order: 0, properties: [cohort] },
              { id: 'paid', type: 'events', order: 1 },
            ],
          }),
        );
        expect(steps.map((s) => s.name)).toEqual(['user signed up', 'paid']);
        expect(counts(steps)).toEqual([2, 1]);
      });
    });
  });

  describe('test_funnel_strict.py', () => {
    it('test_basic_strict_funnel: the next step must be the very next event', async () => {
      const steps = await funnel('strictBasic', { funnel_order_type: 'strict', events: events('user signed up', '$pageview', 'insight viewed') });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', '$pageview', 'insight viewed']);
      expect(counts(steps)).toEqual([7, 2, 1]);
    });

    it('test_advanced_strict_funnel: events and actions interleaved', async () => {
      const steps = await funnel('strictAdvanced', {
        funnel_order_type: 'strict',
        events: [
          { id: 'user signed up', type: 'events', order: 0 },
          { id: '$pageview', type: 'events', order: 2 },
        ],
        actions: [action('sign up', 1, { math: 'dau' }), action('pageview', 3, { math: 'weekly_active' })],
      });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', 'sign up', '$pageview', 'pageview']);
      expect(counts(steps)).toEqual([8, 6, 5, 1]);
    });

    it('test_basic_strict_funnel_conversion_times', async () => {
      const steps = await funnel('strictConversionTimes', {
        funnel_order_type: 'strict',
        events: events('user signed up', '$pageview', 'insight viewed'),
        date_from: '2021-05-01 00:00:00',
        date_to: '2021-05-07 23:59:59',
      });
      expect(steps.map((s) => s.name)).toEqual(['user signed up', '$pageview', 'insight viewed']);
      expect(counts(steps)).toEqual([3, 2, 1]);
      // 1 hour for stopped_after_pageview1, 2 for stopped_after_insightview; then 2 hours.
      expect(steps.map((s) => s.average_conversion_time)).toEqual([null, 5400, 7200]);
    });
  });

  describe('test_funnel_unordered.py', () => {
    const unordered = (ids: string[], extra: Record<string, unknown> = {}) => ({ funnel_order_type: 'unordered', events: events(...ids), ...extra });

    it('test_basic_unordered_funnel: steps named "Completed N steps"', async () => {
      const steps = await funnel('unorderedBasic', unordered(['user signed up', '$pageview', 'insight viewed']));
      expect(steps.map((s) => [s.name, s.action_id, s.custom_name])).toEqual([
        ['Completed 1 step', null, null],
        ['Completed 2 steps', null, null],
        ['Completed 3 steps', null, null],
      ]);
      expect(counts(steps)).toEqual([8, 5, 3]);
    });

    it('test_basic_unordered_funnel_conversion_times: the first completion’s times (UDF answers)', async () => {
      const steps = await funnel(
        'unorderedConversionTimes',
        unordered(['user signed up', '$pageview', 'insight viewed'], {
          date_from: '2021-05-01 00:00:00',
          date_to: '2021-05-07 23:59:59',
          funnel_window_interval: '1',
        }),
      );
      expect(steps.map((s) => s.name)).toEqual(['Completed 1 step', 'Completed 2 steps', 'Completed 3 steps']);
      expect(counts(steps)).toEqual([3, 2, 1]);
      expect(steps.map((s) => s.average_conversion_time)).toEqual([null, 5400, 7200]);
    });

    it('test_big_multi_step_unordered_funnel', async () => {
      const steps = await funnel('unorderedBig', unordered(['user signed up', '$pageview', 'insight viewed', 'crying']));
      expect(counts(steps)).toEqual([8, 5, 3, 1]);
    });

    it('test_funnel_exclusions_invalid_params: partial exclusions are a 400', () => {
      const base = unordered(['user signed up', 'paid', 'blah'], { funnel_window_days: 14 });
      for (const [from, to] of [
        [1, 1],
        [0, 1],
      ]) {
        expect(() => parseFunnelFilter({ ...base, exclusions: [{ id: 'x', type: 'events', funnel_from_step: from, funnel_to_step: to }] })).toThrow(
          QueryFilterError,
        );
      }
    });

    const fullRange = (steps: number, ...ids: string[]) => ids.map((id) => ({ id, type: 'events', funnel_from_step: 0, funnel_to_step: steps - 1 }));

    it('test_funnel_exclusions_full_window: an exclusion forgets what came before it', async () => {
      const steps = await funnel(
        'unorderedFullWindow',
        unordered(['user signed up', 'paid'], {
          funnel_window_days: 14,
          date_from: '2021-05-01 00:00:00',
          date_to: '2021-05-14 00:00:00',
          exclusions: fullRange(2, 'x'),
        }),
      );
      expect(steps.map((s) => s.name)).toEqual(['Completed 1 step', 'Completed 2 steps']);
      expect(counts(steps)).toEqual([3, 2]);
    });

    it('test_unordered_exclusion_after_completion: a completed funnel stays completed', async () => {
      const steps = await funnel(
        'unorderedAfterCompletion',
        unordered(['user signed up', 'paid', 'left'], {
          funnel_window_days: 14,
          date_from: '2021-05-01 00:00:00',
          date_to: '2021-05-14 00:00:00',
          exclusions: fullRange(3, 'x'),
        }),
      );
      expect(counts(steps)).toEqual([1, 1, 1]);
    });

    it('test_advanced_funnel_multiple_exclusions_between_steps (unordered)', async () => {
      const steps = await funnel(
        'unorderedMultipleExclusions',
        unordered(PATH, { date_from: '2021-05-01 00:00:00', date_to: '2021-05-14 00:00:00', exclusions: fullRange(5, 'x', 'y') }),
      );
      expect(steps[0]!.name).toBe('Completed 1 step');
      expect(counts(steps)).toEqual([5, 2, 1, 1, 1]);
    });

    it('test_funnel_unordered_all_events_with_properties', async () => {
      const body = {
        funnel_order_type: 'unordered',
        events: [
          { type: 'events', id: 'user signed up', order: 0, name: 'user signed up', math: 'total' },
          {
            type: 'events',
            id: null,
            order: 1,
            name: 'All events',
            math: 'total',
            properties: [{ key: 'is_saved', value: ['true'], operator: 'exact', type: 'event' }],
          },
        ],
        funnel_window_days: 14,
      };
      expect(counts(await funnel('unorderedAllEventsWithProperties', body))).toEqual([1, 1]);
    });

    it('test_funnel_unordered_entity_filters: two steps of one event told apart by properties', async () => {
      const body = {
        funnel_order_type: 'unordered',
        events: [
          { type: 'events', id: 'user signed up', order: 0, properties: [{ key: 'prop_a', value: ['some value'], operator: 'exact', type: 'event' }] },
          { type: 'events', id: 'user signed up', order: 1, properties: [{ key: 'prop_b', value: 'another', operator: 'icontains', type: 'event' }] },
        ],
      };
      expect(counts(await funnel('unorderedEntityFilters', body))).toEqual([1, 1]);
    });

    it('test_funnel_window_ignores_dst_transition (unordered)', async () => {
      const body = unordered(['$pageview', 'user signed up'], { date_from: '2024-02-17', date_to: '2024-03-18' });
      for (const timezone of ['UTC', 'US/Pacific']) {
        const steps = await funnel('unorderedDst', body, timezone);
        expect(steps[1]!.name).toBe('Completed 2 steps');
        expect(steps[1]!.count).toBe(1);
        expect(steps[1]!.average_conversion_time).toBe(1_207_020);
        expect(steps[1]!.median_conversion_time).toBe(1_207_020);
      }
    });

    it('test_unordered_trend_with_partial_steps_and_exclusion: an exclusion loses the progress before it', async () => {
      const steps = await funnel(
        'unorderedPartialExclusion',
        unordered(['step 1', 'step 2', 'step 3'], {
          exclusions: fullRange(3, 'exclusion event'),
          funnel_window_interval: 6,
          funnel_window_interval_unit: 'hour',
          date_from: '2024-03-01',
          date_to: '2024-03-01',
        }),
      );
      expect(counts(steps)).toEqual([2, 1, 1]);
    });
  });
});
