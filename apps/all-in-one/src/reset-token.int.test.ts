import request from 'supertest';
import { createInProcessBus, topicNames } from '@sightline/bus';
import { createCronScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createTestStores, type TestStores } from '@sightline/testkit';
import { createAllInOne } from './all-in-one';

/**
 * The embedded service after `reset_token`: capture, flags and flag definitions refuse the old
 * project API key on the very next request, though each of their token caches had it.
 */
const TOKEN = 'phc_reset_token_embedded';
const KEY = 'phx_reset_token_embedded';

describe('reset_token in the embedded service', () => {
  let stores: TestStores;
  let service: ReturnType<typeof createAllInOne>;
  const auth = { Authorization: `Bearer ${KEY}` };

  beforeAll(async () => {
    stores = await createTestStores('reset_token_embedded', { projectApiKey: TOKEN, personalApiKey: KEY });
    const logger = silentLogger();
    service = createAllInOne({
      db: stores.db,
      ch: stores.ch,
      bus: createInProcessBus(logger),
      topics: topicNames('reset.'),
      scheduler: createCronScheduler(logger),
      logger,
      metrics: createMetrics(),
      sendTimeoutMs: 5000,
      readiness: [],
      isShuttingDown: () => false,
    });
    // Capture answers 200 once the bus has its consumer.
    await service.worker.start();
  });
  afterAll(async () => {
    await service.worker.stop();
    await stores.close();
  });

  const answers = async (token: string) => ({
    capture: (await request(service.app).post('/capture/').send({ api_key: token, event: 'e', distinct_id: 'd' })).status,
    flags: (await request(service.app).post('/flags/?v=2').send({ token, distinct_id: 'd' })).status,
    definitions: (await request(service.app).get(`/flags/definitions?token=${token}`).set(auth)).status,
  });

  it('refuses the old key on the next request and takes the new one', async () => {
    expect(await answers(TOKEN)).toEqual({ capture: 200, flags: 200, definitions: 200 });
    const reset = await request(service.app).patch('/api/projects/1/reset_token/').set(auth).send({});
    expect(reset.status).toBe(200);
    expect(await answers(TOKEN)).toEqual({ capture: 401, flags: 401, definitions: 401 });
    expect(await answers(reset.body.api_token as string)).toEqual({ capture: 200, flags: 200, definitions: 200 });
  });
});
