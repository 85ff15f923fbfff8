import { createInProcessBus, topicNames } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import type { MetadataStore } from '@sightline/postgres';
import { createTestStores, waitFor, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createEventsConsumer } from './events.consumer';

/**
 * The distributed worker records a run's event and property definitions while its events are
 * written (PostgreSQL takes them while ClickHouse inserts), and the run is still done, so its
 * batches committed, only once both are.
 */
const TOKEN = 'phc_definitions_with_write_key';
const TEAM = 1;

describe('events consumer recording definitions beside the write (PostgreSQL, ClickHouse)', () => {
  let stores: TestStores;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  const topics = topicNames('definitions-with-write.');
  const bus = createInProcessBus(silentLogger());

  beforeAll(async () => {
    stores = await createTestStores('definitions_with_write', { projectApiKey: TOKEN });
    ({ db, ch } = stores);
  });
  afterAll(async () => {
    await bus.close();
    await stores.close();
  });

  const definitionRecorded = async (name: string) =>
    (await db.query<{ n: string }>('SELECT count(*)::text AS n FROM event_definitions WHERE team_id = $1 AND name = $2', [TEAM, name]))[0]!.n === '1';

  it('records the definitions while the events insert is still running', async () => {
    const event = 'definitions-beside-write';
    // The events insert answers only once the definitions are in PostgreSQL: recorded after the
    // write, they never would be and the run would not finish.
    let insertWaited = false;
    const insertWaitingForDefinitions = new Proxy(ch, {
      get(target, name, receiver) {
        const member = Reflect.get(target, name, receiver) as unknown;
        if (name !== 'exec' || typeof member !== 'function') return member;
        return async (params: { query: string }) => {
          if (params.query.includes('INSERT INTO events')) {
            await waitFor(() => definitionRecorded(event), { timeoutMs: 10_000 });
            insertWaited = true;
          }
          return (member as (p: unknown) => Promise<unknown>).call(target, params);
        };
      },
    });
    const handler = createEventsConsumer({
      ch: insertWaitingForDefinitions,
      db,
      bus,
      topics,
      resolveTeam: async () => TEAM,
      metrics: createMetrics(),
      logger: silentLogger(),
      gatherWrites: { maxEvents: 10_000 },
    });
    const { key, value } = busMessage({ event, distinct_id: 'dw-1', properties: { plan: 'pro' } }, { token: TOKEN, teamId: TEAM });
    await handler({ topic: topics.events, partition: 0, messages: [{ key, value: Buffer.from(value), headers: {}, offset: '0' }] });
    expect(insertWaited).toBe(true);
    const rows = await (
      await ch.query({ query: 'SELECT count() AS c FROM events WHERE event = {e:String}', query_params: { e: event }, format: 'JSONEachRow' })
    ).json<{ c: string }>();
    expect(Number(rows[0]!.c)).toBe(1);
  });
});
