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

  const consumer = (store: ClickHouseClient = ch) =>
    createEventsConsumer({
      ch: store,
      db,
      bus,
      topics,
      resolveTeam: async () => TEAM,
      metrics: createMetrics(),
      logger: silentLogger(),
      gatherWrites: { maxEvents: 10_000 },
    });

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
    const handler = consumer(insertWaitingForDefinitions);
    const { key, value } = busMessage({ event, distinct_id: 'dw-1', properties: { plan: 'pro' } }, { token: TOKEN, teamId: TEAM });
    await handler({ topic: topics.events, partition: 0, messages: [{ key, value: Buffer.from(value), headers: {}, offset: '0' }] });
    expect(insertWaited).toBe(true);
    const rows = await (
      await ch.query({ query: 'SELECT count() AS c FROM events WHERE event = {e:String}', query_params: { e: event }, format: 'JSONEachRow' })
    ).json<{ c: string }>();
    expect(Number(rows[0]!.c)).toBe(1);
  });

  const propertyDefinitions = async (names: string[]) =>
    db.query<{ name: string; property_type: string | null; volume: string }>(
      'SELECT name, property_type, volume::text AS volume FROM property_definitions WHERE team_id = $1 AND type = 1 AND name = ANY($2::text[]) ORDER BY name COLLATE "C"',
      [TEAM, names],
    );
  const batchOf = (events: Parameters<typeof busMessage>[0][]) => ({
    topic: topics.events,
    partition: 0,
    messages: events.map((e, i) => {
      const { key, value } = busMessage(e, { token: TOKEN, teamId: TEAM, ip: '10.0.0.9' });
      return { key, value, headers: {}, offset: String(i) };
    }),
  });

  // Messages the fused format-2 step takes (prepareCommonFormat2), end to end.
  it("records a personless run's definitions; its rows carry the properties as sent, the request's $ip last", async () => {
    const event = 'definitions-personless';
    await consumer()(
      batchOf([
        { event, distinct_id: 'dp-1', properties: { $process_person_profile: false, dp_n: 1, dp_s: 'x' } },
        { event, distinct_id: 'dp-2', properties: { $process_person_profile: false, dp_n: null, dp_b: true } },
        { event, distinct_id: 'dp-3', properties: { dp_n: 'late text', $set: { plan: 'pro' } } },
      ]),
    );
    expect(await propertyDefinitions(['dp_b', 'dp_n', 'dp_s'])).toEqual([
      { name: 'dp_b', property_type: 'Boolean', volume: '1' },
      { name: 'dp_n', property_type: 'Numeric', volume: '3' },
      { name: 'dp_s', property_type: 'String', volume: '1' },
    ]);
    expect(await definitionRecorded(event)).toBe(true);
    const rows = await (
      await ch.query({
        query: 'SELECT distinct_id, properties FROM events WHERE event = {e:String} ORDER BY distinct_id',
        query_params: { e: event },
        format: 'JSONEachRow',
      })
    ).json<{ distinct_id: string; properties: string }>();
    expect(rows.map((r) => [r.distinct_id, JSON.parse(r.properties) as unknown])).toEqual([
      ['dp-1', { $process_person_profile: false, dp_n: 1, dp_s: 'x', $ip: '10.0.0.9' }],
      ['dp-2', { $process_person_profile: false, dp_n: null, dp_b: true, $ip: '10.0.0.9' }],
      ['dp-3', { dp_n: 'late text', $set: { plan: 'pro' }, $ip: '10.0.0.9' }],
    ]);
  });

  it('counts the $group_N properties the persons step adds to a run naming $groups', async () => {
    const event = 'definitions-groups';
    await consumer()(
      batchOf([
        { event, distinct_id: 'dg-1', properties: { $process_person_profile: false, dg_a: 1 } },
        { event, distinct_id: 'dg-2', properties: { $process_person_profile: false, $groups: { definitions_org: 'acme' } } },
      ]),
    );
    const [{ index }] = await db.query<{ index: number }>('SELECT group_type_index AS index FROM group_type_mappings WHERE team_id = $1 AND group_type = $2', [
      TEAM,
      'definitions_org',
    ]);
    expect(await propertyDefinitions(['dg_a', `$group_${index}`])).toEqual([
      { name: `$group_${index}`, property_type: 'String', volume: '1' },
      { name: 'dg_a', property_type: 'Numeric', volume: '1' },
    ]);
  });
});
