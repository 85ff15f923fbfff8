import request from 'supertest';
import { createInProcessBus, topicNames } from '@sightline/bus';
import { createCronScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createTestStores, waitFor, type TestStores } from '@sightline/testkit';
import { createAllInOne } from './all-in-one';

/**
 * Merged and deleted persons as every query sees them, end to end: events captured, persons
 * built and merged by the worker, persons deleted through the API, and a trend counting daily
 * active users (dau) over the same events before and after.
 */
const TOKEN = 'phc_persons_in_queries';
const KEY = 'phx_persons_in_queries';

describe('merged and deleted persons in queries', () => {
  let stores: TestStores;
  let app: ReturnType<typeof createAllInOne>;
  const auth = { Authorization: `Bearer ${KEY}` };

  beforeAll(async () => {
    stores = await createTestStores('persons_in_queries', { projectApiKey: TOKEN, personalApiKey: KEY });
    const logger = silentLogger();
    app = createAllInOne({
      db: stores.db,
      ch: stores.ch,
      bus: createInProcessBus(logger),
      topics: topicNames('piq.'),
      scheduler: createCronScheduler(logger),
      logger,
      metrics: createMetrics(),
      sendTimeoutMs: 5000,
      readiness: [],
      isShuttingDown: () => false,
      insightCacheTtlMs: 0,
    });
    await app.worker.start();
  });
  afterAll(async () => {
    await app.worker.stop();
    await stores.close();
  });

  const capture = async (events: { event: string; distinct_id: string; properties?: Record<string, unknown> }[]) => {
    const timestamp = new Date().toISOString();
    const res = await request(app.app)
      .post('/batch/')
      .send({ api_key: TOKEN, batch: events.map((e) => ({ ...e, timestamp })) });
    expect(res.status).toBe(200);
  };
  const eventCount = async () =>
    Number((await (await stores.ch.query({ query: 'SELECT count() AS n FROM events FINAL', format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n);
  const trend = async (math: string) => {
    const res = await request(app.app)
      .post('/api/projects/1/insights/trend/')
      .set(auth)
      .send({ events: [{ id: '$pageview', math }], date_from: '-1d', display: 'BoldNumber' });
    expect(res.status).toBe(200);
    return res.body.result[0].aggregated_value as number;
  };
  const personOf = async (distinctId: string) => (await request(app.app).get(`/api/projects/1/persons/?distinct_id=${distinctId}`).set(auth)).body.results[0];

  it('a merged person counts once; a deleted person counts for nobody; a new event of its id makes a new person', async () => {
    await capture([
      { event: '$pageview', distinct_id: 'anon-a' },
      { event: '$pageview', distinct_id: 'anon-a' },
      { event: '$pageview', distinct_id: 'user-a' },
      { event: '$pageview', distinct_id: 'bob' },
      { event: '$pageview', distinct_id: 'carol' },
      { event: '$pageview', distinct_id: 'carol' },
    ]);
    await waitFor(async () => (await eventCount()) === 6, { timeoutMs: 30_000 });
    // Before the merge, anon-a and user-a are two persons.
    expect(await trend('dau')).toBe(4);

    // The browser's identify: anon-a's person merges into user-a's.
    await capture([{ event: '$identify', distinct_id: 'user-a', properties: { $anon_distinct_id: 'anon-a', $set: { email: 'a@example.com' } } }]);
    await waitFor(async () => (await personOf('anon-a'))?.distinct_ids?.length === 2, { timeoutMs: 30_000 });
    const merged = await personOf('anon-a');
    expect(merged).toMatchObject({ distinct_ids: ['anon-a', 'user-a'], properties: { email: 'a@example.com' }, name: 'a@example.com' });
    // The anon-a events keep the person id they were written with, yet count for the merged person.
    const frozen = await (
      await stores.ch.query({ query: "SELECT DISTINCT toString(person_id) AS p FROM events WHERE distinct_id = 'anon-a'", format: 'JSONEachRow' })
    ).json<{ p: string }>();
    expect(frozen.map((r) => r.p)).not.toContain(merged.uuid);
    expect(await trend('dau')).toBe(3);
    expect(await trend('total')).toBe(6);

    // Deleted: carol's events stay (no delete_events) but count for no person.
    const carol = await personOf('carol');
    expect((await request(app.app).delete(`/api/projects/1/persons/${carol.id}/`).set(auth)).status).toBe(204);
    expect(await trend('dau')).toBe(2);
    expect(await trend('weekly_active')).toBe(2);
    expect(await trend('total')).toBe(6);

    // carol comes back: a new person (same uuid, new id), its copies above the deletion.
    await capture([{ event: '$pageview', distinct_id: 'carol', properties: { $set: { returning: true } } }]);
    await waitFor(async () => (await personOf('carol')) !== undefined, { timeoutMs: 30_000 });
    const again = await personOf('carol');
    expect(again).toMatchObject({ uuid: carol.uuid, properties: { returning: true } });
    expect(again.id).not.toBe(carol.id);
    expect(await trend('dau')).toBe(3);
  });
});
