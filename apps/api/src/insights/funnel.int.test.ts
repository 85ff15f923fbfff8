import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-20T12:00:00Z');
const HOUR = 3_600_000;

/**
 * 120 persons: everyone visits; those who watched the demo mostly pay, those who saw an error
 * mostly do not. The expected correlation is computed here from the same plan.
 */
interface Person {
  id: string;
  demo: boolean;
  error: boolean;
  pays: boolean;
  plan: string;
}
const PEOPLE: Person[] = Array.from({ length: 120 }, (_, i) => {
  const demo = i % 3 === 0;
  const error = i % 5 === 0;
  const pays = demo ? i % 4 !== 1 : error ? i % 7 === 0 : i % 3 === 1;
  return { id: `u${i}`, demo, error, pays, plan: i % 2 ? 'pro' : 'free' };
});

describe('funnel and correlation endpoints', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  const funnel = {
    events: [
      { id: 'visit', order: 0 },
      { id: 'pay', order: 1 },
    ],
    date_from: '-7d',
  };

  beforeAll(async () => {
    f = await createFlagFixture('funnel-api', () => NOW);
    for (const p of PEOPLE) await createTestPerson(f, { distinctIds: [p.id], properties: { plan: p.plan } });
    await insertEvents(
      f.ch,
      PEOPLE.flatMap((p, i) => {
        const start = NOW - 2 * 24 * HOUR - i * 60_000;
        return [
          testEventRow({ event: 'visit', atMs: start, distinctId: p.id }),
          ...(p.demo ? [testEventRow({ event: 'watched_demo', atMs: start + HOUR, distinctId: p.id, properties: { length: p.pays ? 'long' : 'short' } })] : []),
          ...(p.error ? [testEventRow({ event: 'saw_error', atMs: start + HOUR, distinctId: p.id })] : []),
          ...(p.pays ? [testEventRow({ event: 'pay', atMs: start + 2 * HOUR, distinctId: p.id })] : []),
        ];
      }),
    );
  });
  afterAll(() => f.close());

  const expectedCorrelation = (has: (p: Person) => boolean) => {
    const S = PEOPLE.filter((p) => p.pays).length;
    const F = PEOPLE.length - S;
    const s = PEOPLE.filter((p) => p.pays && has(p)).length;
    const fc = PEOPLE.filter((p) => !p.pays && has(p)).length;
    return { success_count: s, failure_count: fc, odds_ratio: ((s + 1) * (F - fc + 1)) / ((S - s + 1) * (fc + 1)) };
  };

  it('answers the legacy funnel with step counts', async () => {
    const res = await request(f.app).post('/api/environments/1/insights/funnel/').set(admin).send(funnel);
    expect(res.status).toBe(200);
    expect(res.body.result.map((s: { name: string; count: number }) => [s.name, s.count])).toEqual([
      ['visit', PEOPLE.length],
      ['pay', PEOPLE.filter((p) => p.pays).length],
    ]);
    expect(res.body.result[1].average_conversion_time).toBeCloseTo(7200, 3);
  });

  it('correlates events with converting, in every body shape PostHog sends', async () => {
    const shapes = [
      { ...funnel, funnel_correlation_type: 'events' },
      { name: 'x', filters: { ...funnel, insight: 'FUNNELS' }, funnel_correlation_type: 'events' },
      {
        query: {
          kind: 'InsightVizNode',
          source: {
            kind: 'FunnelsQuery',
            series: [
              { kind: 'EventsNode', event: 'visit' },
              { kind: 'EventsNode', event: 'pay' },
            ],
            dateRange: { date_from: '-7d' },
          },
        },
      },
    ];
    for (const body of shapes) {
      const res = await request(f.app).post('/api/environments/1/insights/funnel/correlation/').set(admin).send(body);
      expect(res.status).toBe(200);
      const byName = Object.fromEntries(res.body.result.events.map((e: { event: { event: string } }) => [e.event.event, e]));
      expect(byName['watched_demo']).toMatchObject({ ...expectedCorrelation((p) => p.demo), correlation_type: 'success' });
      expect(byName['saw_error']).toMatchObject({ ...expectedCorrelation((p) => p.error), correlation_type: 'failure' });
      // The funnel's own steps are not correlated with themselves.
      expect(byName['visit']).toBeUndefined();
      expect(res.body.result.skewed).toBe(false);
    }
  });

  it('correlates person properties and event properties', async () => {
    const props = await request(f.app)
      .post('/api/environments/1/insights/funnel/correlation/')
      .set(admin)
      .send({ ...funnel, funnel_correlation_type: 'properties', funnel_correlation_names: ['plan'] });
    const names = props.body.result.events.map((e: { event: { event: string } }) => e.event.event).sort();
    expect(names).toEqual(['plan::free', 'plan::pro']);
    const pro = props.body.result.events.find((e: { event: { event: string } }) => e.event.event === 'plan::pro');
    expect(pro).toMatchObject(expectedCorrelation((p) => p.plan === 'pro'));
    const withProps = await request(f.app)
      .post('/api/environments/1/insights/funnel/correlation/')
      .set(admin)
      .send({ ...funnel, funnel_correlation_type: 'event_with_properties', funnel_correlation_event_names: ['watched_demo'] });
    const long = withProps.body.result.events.find((e: { event: { event: string } }) => e.event.event === 'watched_demo::length::long');
    expect(long).toMatchObject(expectedCorrelation((p) => p.demo && p.pays));
  });

  it('answers a bare GET with no events, and bad input with a 400', async () => {
    const bare = await request(f.app).get('/api/environments/1/insights/funnel/correlation/').set(admin);
    expect(bare.status).toBe(200);
    expect(bare.body.result).toEqual({ events: [], skewed: false });
    const get = await request(f.app)
      .get('/api/environments/1/insights/funnel/correlation/')
      .query({ events: JSON.stringify(funnel.events), date_from: '-7d' })
      .set(admin);
    expect(get.body.result.events.length).toBeGreaterThan(0);
    const bad = await request(f.app)
      .post('/api/environments/1/insights/funnel/correlation/')
      .set(admin)
      .send({ ...funnel, funnel_correlation_type: 'vibes' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ attr: 'funnel_correlation_type', code: 'invalid_choice' });
    const notFunnel = await request(f.app)
      .post('/api/environments/1/insights/funnel/correlation/')
      .set(admin)
      .send({ query: { kind: 'TrendsQuery', series: [] } });
    expect(notFunnel.status).toBe(400);
  });
});
