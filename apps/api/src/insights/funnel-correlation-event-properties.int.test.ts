/**
 * `funnel_correlation_type: event_with_properties` as PostHog answers it
 * (posthog/hogql_queries/insights/funnels/funnel_correlation_query_runner.py, get_event_property_query;
 * the scenarios follow test_funnel_correlation.py's test_funnel_correlation_with_event_properties,
 * …_exclusions and …_autocapture): every property of the named events counts, `$` ones included,
 * except funnel_correlation_event_exclude_property_names; an event/property/value seen by two actors
 * or fewer is dropped; `$autocapture` correlates on its `$event_type` and elements chain.
 */
import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2020-01-20T12:00:00Z');
const at = (day: string) => Date.parse(`2020-01-${day}T14:00:00Z`);
const funnel = {
  events: [
    { id: 'user signed up', type: 'events', order: 0 },
    { id: 'paid', type: 'events', order: 1 },
  ],
  insight: 'FUNNELS',
  date_from: '2020-01-01',
  date_to: '2020-01-14',
};

interface Row {
  event: { event: string; properties: Record<string, unknown>; elements: Record<string, unknown>[] };
  success_count: number;
  failure_count: number;
  odds_ratio: number;
  correlation_type: string;
}

describe('funnel correlation of event properties', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const correlate = async (teamId: number, extra: Record<string, unknown>): Promise<Row[]> => {
    const res = await request(f.app)
      .post(`/api/environments/${teamId}/insights/funnel/correlation/`)
      .set(admin)
      .send({ ...funnel, funnel_correlation_type: 'event_with_properties', ...extra });
    expect(res.status).toBe(200);
    return res.body.result.events as Row[];
  };
  const project = async (name: string) => {
    const res = await request(f.app).post('/api/projects/').set(admin).send({ name, timezone: 'UTC' });
    expect(res.status).toBe(201);
    return res.body.id as number;
  };

  beforeAll(async () => {
    f = await createFlagFixture('correlation-event-props', () => NOW);
  });
  afterAll(() => f.close());

  it('keeps $ properties, drops pairs of two actors or fewer, and excludes the funnel steps', async () => {
    const team = await project('event properties');
    const rows = [];
    for (let i = 0; i < 20; i++) {
      const distinctId = `user_${i}`;
      await createTestPerson(f, { teamId: team, distinctIds: [distinctId] });
      const converts = i < 10;
      rows.push(testEventRow({ teamId: team, event: 'user signed up', atMs: at('02'), distinctId, properties: { $browser: 'Chrome' } }));
      if (converts && i % 2 === 0) {
        // signup_source "email" occurs twice here: too rare to correlate.
        rows.push(
          testEventRow({
            teamId: team,
            event: 'positively_related',
            atMs: at('03'),
            distinctId,
            properties: { signup_source: i % 4 === 0 ? 'facebook' : 'email', blah: 'value_bleh', $browser: 'Firefox' },
          }),
        );
      }
      if (!converts && i % 2 === 0) {
        // "shazam" occurs once: dropped.
        rows.push(
          testEventRow({
            teamId: team,
            event: 'negatively_related',
            atMs: at('03'),
            distinctId,
            properties: { signup_source: i % 6 === 0 ? 'shazam' : 'email' },
          }),
        );
      }
      if (converts) rows.push(testEventRow({ teamId: team, event: 'paid', atMs: at('04'), distinctId }));
    }
    await insertEvents(f.ch, rows);

    const result = await correlate(team, { funnel_correlation_event_names: ['positively_related', 'negatively_related', 'user signed up'] });
    expect(result.map((r) => [r.event.event, r.success_count, r.failure_count, r.correlation_type])).toEqual([
      // odds 11: the property set on every one of the five converters' events.
      ['positively_related::$browser::Firefox', 5, 0, 'success'],
      ['positively_related::blah::value_bleh', 5, 0, 'success'],
      ['positively_related::signup_source::facebook', 3, 0, 'success'],
      ['negatively_related::signup_source::email', 0, 3, 'failure'],
    ]);
    expect(result.map((r) => r.odds_ratio)).toEqual([11, 11, 5.5, 2 / 11].map((x) => expect.closeTo(x, 10)));
    expect(result[0]!.event).toEqual({ event: 'positively_related::$browser::Firefox', properties: {}, elements: [] });
  });

  it('leaves out the excluded property names', async () => {
    const team = await project('event property exclusions');
    const rows = [];
    for (let i = 0; i < 3; i++) {
      const distinctId = `user_${i}`;
      await createTestPerson(f, { teamId: team, distinctIds: [distinctId] });
      rows.push(
        testEventRow({ teamId: team, event: 'user signed up', atMs: at('02'), distinctId }),
        testEventRow({
          teamId: team,
          event: 'positively_related',
          atMs: at('03'),
          distinctId,
          properties: { signup_source: 'facebook', blah: 'value_bleh', $lib: 'web' },
        }),
        testEventRow({ teamId: team, event: 'paid', atMs: at('04'), distinctId }),
      );
    }
    await createTestPerson(f, { teamId: team, distinctIds: ['user_fail'] });
    rows.push(testEventRow({ teamId: team, event: 'user signed up', atMs: at('02'), distinctId: 'user_fail' }));
    await insertEvents(f.ch, rows);

    const result = await correlate(team, {
      funnel_correlation_event_names: ['positively_related'],
      funnel_correlation_event_exclude_property_names: ['signup_source', '$lib'],
    });
    expect(result).toEqual([
      {
        event: { event: 'positively_related::blah::value_bleh', properties: {}, elements: [] },
        success_count: 3,
        failure_count: 0,
        odds_ratio: 8,
        correlation_type: 'success',
      },
    ]);
  });

  it('correlates $autocapture on its event type and elements chain', async () => {
    const team = await project('autocapture');
    const link = 'a:href="/movie"nth-child="0"nth-of-type="1"';
    const button = 'button.primary.wide:nth-child="0"nth-of-type="1"text="Pay $10";form:attr__id="pay"attr_id="pay"nth-child="2"nth-of-type="1"';
    const rows = [];
    for (let i = 0; i < 6; i++) {
      const distinctId = `user_${i}`;
      await createTestPerson(f, { teamId: team, distinctIds: [distinctId] });
      rows.push(
        testEventRow({ teamId: team, event: 'user signed up', atMs: at('02'), distinctId }),
        testEventRow({
          teamId: team,
          event: '$autocapture',
          atMs: at('03'),
          distinctId,
          elementsChain: link,
          properties: { signup_source: 'email', $event_type: 'click' },
        }),
        ...(i % 2 === 0
          ? [
              testEventRow({
                teamId: team,
                event: '$autocapture',
                atMs: at('03'),
                distinctId,
                elementsChain: button,
                properties: { signup_source: 'facebook', $event_type: 'submit' },
              }),
            ]
          : []),
        testEventRow({ teamId: team, event: 'paid', atMs: at('04'), distinctId }),
      );
    }
    await createTestPerson(f, { teamId: team, distinctIds: ['user_fail'] });
    rows.push(testEventRow({ teamId: team, event: 'user signed up', atMs: at('02'), distinctId: 'user_fail' }));
    await insertEvents(f.ch, rows);

    const result = await correlate(team, { funnel_correlation_event_names: ['$autocapture'] });
    const element = { event: null, text: null, attr_class: null, href: null, attr_id: null, attributes: {} };
    expect(result).toEqual([
      {
        event: {
          event: `$autocapture::elements_chain::click__~~__${link}`,
          properties: { $event_type: 'click' },
          elements: [{ ...element, tag_name: 'a', href: '/movie', nth_child: 0, nth_of_type: 1, order: 0 }],
        },
        success_count: 6,
        failure_count: 0,
        odds_ratio: 14,
        correlation_type: 'success',
      },
      {
        event: {
          event: `$autocapture::elements_chain::submit__~~__${button}`,
          properties: { $event_type: 'submit' },
          elements: [
            { ...element, tag_name: 'button', attr_class: ['primary', 'wide'], text: 'Pay $10', nth_child: 0, nth_of_type: 1, order: 0 },
            { ...element, tag_name: 'form', attr_id: 'pay', attributes: { attr__id: 'pay' }, nth_child: 2, nth_of_type: 1, order: 1 },
          ],
        },
        success_count: 3,
        failure_count: 0,
        odds_ratio: 2,
        correlation_type: 'success',
      },
    ]);
  });
});
