import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createTestStores, testEventRow, type TestStores } from '@sightline/testkit';
import { createApiApp } from '../app';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const ADMIN = 'phx_insight_metrics_admin';

describe('insight query latency metric', () => {
  let stores: TestStores;

  beforeAll(async () => {
    stores = await createTestStores('insight-metrics', { personalApiKey: ADMIN });
    await insertEvents(stores.ch, [testEventRow({ event: 'visit', atMs: NOW - 3_600_000 }), testEventRow({ event: 'pay', atMs: NOW - 1_800_000 })]);
  });
  afterAll(() => stores.close());

  it('observes each computed trend, funnel and correlation by kind; answers from the cache are not queries', async () => {
    const metrics = createMetrics();
    const app = createApiApp({ db: stores.db, ch: stores.ch, logger: silentLogger(), metrics, now: () => NOW, readiness: [], isShuttingDown: () => false });
    const auth = { Authorization: `Bearer ${ADMIN}` };
    const funnel = {
      events: [
        { id: 'visit', order: 0 },
        { id: 'pay', order: 1 },
      ],
    };
    for (let i = 0; i < 2; i++) {
      expect(
        (
          await request(app)
            .post('/api/environments/1/insights/trend/')
            .set(auth)
            .send({ events: [{ id: 'visit' }] })
        ).status,
      ).toBe(200);
      expect((await request(app).post('/api/environments/1/insights/funnel/').set(auth).send(funnel)).status).toBe(200);
      expect(
        (
          await request(app)
            .post('/api/environments/1/insights/funnel/correlation/')
            .set(auth)
            .send({ ...funnel, funnel_correlation_type: 'events' })
        ).status,
      ).toBe(200);
    }
    const text = await metrics.registry.metrics();
    for (const kind of ['trend', 'funnel', 'correlation']) expect(text).toContain(`insight_query_duration_seconds_count{kind="${kind}",result="ok"} 1`);
  });
});
