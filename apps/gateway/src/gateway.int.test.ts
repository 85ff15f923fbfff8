/**
 * The gateway on real components: PostgreSQL for project keys (token cache), the Kafka mock
 * cluster (kcat, 3 brokers) as the bus, and the real posthog-node SDK as a client.
 */
import { randomUUID } from 'node:crypto';
import { PostHog } from 'posthog-node';
import { bootstrapInstance, createProjectTokenCache } from '@sightline/accounts';
import { createKafkaBus, topicNames, type ConsumedMessage, type EventBus, type Subscription } from '@sightline/bus';
import { listen, type RunningServer } from '@sightline/http';
import { decodeIngestMessage, type IngestMessage } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, pauseKafka, resumeKafka, testServices, uniqueName, waitFor, type TestPostgresDatabase } from '@sightline/testkit';
import { createGatewayApp, createProjectKeyResolver } from './app';
import { RETRY_AFTER_SECONDS } from './capture.route';

const TOKEN = 'phc_gateway_int_test_key';
const SEND_TIMEOUT_MS = 1500;
/** The 503 bound: the send timeout plus slack for a loaded CI machine. */
const UNAVAILABLE_BOUND_MS = SEND_TIMEOUT_MS + 2500;

describe('gateway on Kafka and PostgreSQL', () => {
  const topics = topicNames(`${uniqueName('gw')}.`);
  let pg: TestPostgresDatabase;
  let db: MetadataStore;
  let producerBus: EventBus;
  let consumerBus: EventBus;
  let server: RunningServer;
  let url: string;
  const subscriptions: Subscription[] = [];
  const received: Record<string, ConsumedMessage[]> = { [topics.events]: [], [topics.eventsHistorical]: [] };
  const messages = (topic: string) => received[topic]!.map((m) => ({ key: m.key, value: decodeIngestMessage(m.value) as IngestMessage }));
  const gzipRequests: string[] = [];

  beforeAll(async () => {
    pg = await createTestPostgresDatabase('gateway');
    db = await createMetadataStore({ url: pg.url });
    await migratePostgres(db);
    await bootstrapInstance(db, { projectApiKey: TOKEN });
    const { kafkaBrokers } = testServices();
    producerBus = createKafkaBus({ brokers: kafkaBrokers, clientId: uniqueName('gw-producer'), sendTimeoutMs: SEND_TIMEOUT_MS }, silentLogger());
    consumerBus = createKafkaBus({ brokers: kafkaBrokers, clientId: uniqueName('gw-consumer') }, silentLogger());
    const app = createGatewayApp({
      bus: producerBus,
      topics,
      projectKeys: createProjectKeyResolver(createProjectTokenCache(db)),
      logger: silentLogger(),
      metrics: createMetrics(),
      sendTimeoutMs: SEND_TIMEOUT_MS,
      readiness: [],
      isShuttingDown: () => false,
    });
    server = await listen(app, { host: '127.0.0.1', port: 0 });
    server.server.on('request', (req) => {
      if (req.headers['content-encoding'] === 'gzip') gzipRequests.push(req.url ?? '');
    });
    url = `http://127.0.0.1:${server.port}`;
    for (const topic of [topics.events, topics.eventsHistorical]) {
      subscriptions.push(
        await consumerBus.subscribe({ groupId: uniqueName('gw-test'), topic, handler: async (batch) => void received[topic]!.push(...batch.messages) }),
      );
    }
  });

  afterAll(async () => {
    await Promise.allSettled(subscriptions.map((s) => s.stop()));
    await server?.close();
    await Promise.allSettled([producerBus?.close(), consumerBus?.close()]);
    await db?.close();
    await pg?.drop();
  });

  const capture = (body: unknown, path = '/batch/') =>
    fetch(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('takes the real posthog-node SDK: capture, identify, alias and group identify through its gzip /batch/ path', async () => {
    const client = new PostHog(TOKEN, { host: url, flushAt: 10, flushInterval: 60_000 });
    const errors: unknown[] = [];
    client.on('error', (e) => errors.push(e));
    const user = `sdk-${randomUUID()}`;
    client.capture({ distinctId: user, event: 'sdk signup', properties: { plan: 'pro' } });
    client.identify({ distinctId: user, properties: { email: 'a@example.com' } });
    client.alias({ distinctId: user, alias: `${user}-alias` });
    client.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { name: 'Acme' } });
    await client.shutdown();
    expect(errors).toEqual([]);
    expect(gzipRequests.some((u) => u.startsWith('/batch'))).toBe(true);

    await waitFor(() => messages(topics.events).filter((m) => m.value.distinct_id === user || m.value.event === '$groupidentify').length >= 4, {
      timeoutMs: 60_000,
    });
    const mine = messages(topics.events).filter((m) => m.value.distinct_id === user || m.value.event === '$groupidentify');
    expect(mine.map((m) => m.value.event).sort()).toEqual(['$create_alias', '$groupidentify', '$identify', 'sdk signup']);
    const identify = mine.find((m) => m.value.event === '$identify')!;
    expect(identify.key).toBe(`${TOKEN}:${user}`);
    expect(identify.value.team_id).toBeGreaterThan(0);
    expect((identify.value.data as Record<string, any>).properties.$set).toEqual({ email: 'a@example.com' });
    const group = mine.find((m) => m.value.event === '$groupidentify')!;
    expect(group.value.distinct_id).toBe('$company_acme');
    expect((group.value.data as Record<string, any>).properties).toMatchObject({ $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } });
  });

  it('answers 503 with Retry-After within the bound while Kafka is down, loses no acknowledged event, and recovers without a restart', async () => {
    const acked: string[] = [];
    const send = async (label: string) => {
      const uuid = randomUUID();
      const started = Date.now();
      const res = await capture({ api_key: TOKEN, batch: [{ event: 'outage', distinct_id: `o-${label}`, uuid }] });
      const ms = Date.now() - started;
      if (res.status === 200) acked.push(uuid);
      return { status: res.status, ms, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as Record<string, unknown> };
    };
    expect((await send('before')).status).toBe(200);

    pauseKafka();
    let during: Awaited<ReturnType<typeof send>>[];
    try {
      during = await Promise.all(Array.from({ length: 8 }, (_, i) => send(`during-${i}`)));
    } finally {
      resumeKafka();
    }
    for (const answer of during) {
      expect(answer.ms).toBeLessThan(UNAVAILABLE_BOUND_MS);
      if (answer.status !== 200) {
        expect(answer.status).toBe(503);
        expect(answer.retryAfter).toBe(String(RETRY_AFTER_SECONDS));
        expect(answer.body).toMatchObject({ type: 'server_error', code: 'service_unavailable' });
      }
    }
    expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);

    // Same process, same producer: back to 200 once the brokers answer again.
    await waitFor(async () => (await send('after')).status === 200, { timeoutMs: 60_000, intervalMs: 500 });
    // Every event answered 200 (before, during, after) is on the topic.
    await waitFor(() => acked.every((uuid) => messages(topics.events).some((m) => m.value.uuid === uuid)), { timeoutMs: 60_000 });
  });

  it('puts historical_migration batches on their own topic, in order per distinct id', async () => {
    const user = `hist-${randomUUID()}`;
    const sent: number[] = [];
    for (let request = 0; request < 4; request++) {
      const batch = Array.from({ length: 50 }, (_, i) => {
        const seq = request * 50 + i;
        sent.push(seq);
        return { event: 'imported', distinct_id: user, timestamp: new Date(Date.UTC(2021, 0, 1) + seq * 1000).toISOString(), properties: { seq } };
      });
      const res = await capture({ api_key: TOKEN, historical_migration: true, batch });
      expect(res.status).toBe(200);
    }
    await waitFor(() => messages(topics.eventsHistorical).filter((m) => m.value.distinct_id === user).length === sent.length, { timeoutMs: 60_000 });
    const mine = messages(topics.eventsHistorical).filter((m) => m.value.distinct_id === user);
    expect(mine.map((m) => (m.value.data as Record<string, any>).properties.seq)).toEqual(sent);
    expect(mine.every((m) => m.key === `${TOKEN}:${user}` && m.value.historical_migration)).toBe(true);
    expect(mine[0]!.value.timestamp).toBe('2021-01-01T00:00:00.000Z');
    expect(messages(topics.events).some((m) => m.value.distinct_id === user)).toBe(false);
  });

  it('rejects an unknown key, and accepts it within the negative-cache time once its project exists', async () => {
    const token = `phc_${randomUUID().replace(/-/g, '')}`;
    const event = { api_key: token, event: 'new project', distinct_id: 'u' };
    const unknown = await capture(event, '/capture/');
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });

    const [org] = await db.query<{ organization_id: string }>('SELECT organization_id FROM projects LIMIT 1');
    await db.query(`INSERT INTO projects (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Second project', $3)`, [
      randomUUID(),
      org!.organization_id,
      token,
    ]);
    const started = Date.now();
    await waitFor(async () => (await capture(event, '/capture/')).status === 200, { timeoutMs: 40_000, intervalMs: 500 });
    expect(Date.now() - started).toBeLessThanOrEqual(30_000);
  });
});
