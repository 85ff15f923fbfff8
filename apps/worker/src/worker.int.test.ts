import { createKafkaBus, topicNames, type EventBus } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { decodeIngestMessage, encodeIngestMessage, personUuidFor, type IngestMessage } from '@sightline/ingestion';
import { createJobScheduler } from '@sightline/jobs';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { findPersonByDistinctId, readPersonCopy, runPersonEventsDeletion } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { testServices, uniqueName, waitFor, createTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createWorker, type Worker } from './worker';

const TOKEN = 'phc_worker_test_key';

describe('worker (Kafka mock, PostgreSQL, ClickHouse)', () => {
  let stores: TestStores;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  let bus: EventBus;
  let worker: Worker;
  const topics = topicNames(`${uniqueName('w')}.`);

  const message = (event: string, distinctId: string, teamId: number | null = 1, token = TOKEN) =>
    busMessage({ event, distinct_id: distinctId, properties: { n: 1 } }, { token, teamId, ip: '10.0.0.1' });
  const count = async (sql: string) => Number((await (await ch.query({ query: sql, format: 'JSONEachRow' })).json<{ c: string }>())[0]!.c);

  beforeAll(async () => {
    stores = await createTestStores('worker', { projectApiKey: TOKEN });
    ({ db, ch } = stores);
    bus = createKafkaBus({ brokers: testServices().kafkaBrokers, clientId: uniqueName('worker') }, silentLogger());
    const scheduler = createJobScheduler({ redisUrl: testServices().redisUrl, prefix: uniqueName('jobs') }, silentLogger());
    worker = createWorker({ bus, topics, ch, db, scheduler, logger: silentLogger(), metrics: createMetrics() });
    await worker.start();
  });
  afterAll(async () => {
    await worker.stop();
    await bus.close();
    await stores.close();
  });

  it('writes events with their deterministic person id, resolving the team when the gateway could not', async () => {
    await bus.send(topics.events, [message('a', 'alice'), message('a', 'bob'), message('b', 'alice', null)]);
    await waitFor(async () => (await count('SELECT count() AS c FROM events')) === 3, { timeoutMs: 60_000 });
    const rows = await (
      await ch.query({
        query:
          "SELECT distinct_id, toString(person_id) AS p, toString(team_id) AS team_id, JSONExtractString(properties, '$ip') AS ip FROM events WHERE distinct_id = 'alice' ORDER BY event",
        format: 'JSONEachRow',
      })
    ).json<{ p: string; team_id: string; ip: string }>();
    expect(rows).toEqual([
      { distinct_id: 'alice', p: personUuidFor(1, 'alice'), team_id: '1', ip: '10.0.0.1' },
      { distinct_id: 'alice', p: personUuidFor(1, 'alice'), team_id: '1', ip: '10.0.0.1' },
    ]);
  });

  it('ingests messages of every bus format: format 0 and 1 (JSON, already in topics) and 2, NULs stripped from all', async () => {
    const current = message('format-2', 'formats');
    const decoded = decodeIngestMessage(current.value) as IngestMessage;
    (decoded.data as { properties: Record<string, unknown> }).properties['text'] = 'nul\u0000here';
    const formatOf = (event: string, n: number) => {
      const uuid = `0190a6f0-0000-7000-8000-00000000f00${n}`;
      return { ...decoded, uuid, event, data: { ...(decoded.data as object), uuid, event } };
    };
    const formatZero = formatOf('format-0', 0);
    const formatOne = formatOf('format-1', 1);
    await bus.send(topics.events, [
      { key: `${TOKEN}:formats`, value: JSON.stringify({ ...formatZero, data: JSON.stringify(formatZero.data) }) },
      { key: `${TOKEN}:formats`, value: Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(formatOne))]) },
      { key: `${TOKEN}:formats`, value: encodeIngestMessage(decoded) },
    ]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE distinct_id = 'formats'")) === 3, { timeoutMs: 60_000 });
    const rows = await (
      await ch.query({
        query:
          "SELECT event, JSONExtractString(properties, 'text') AS text, JSONExtractString(properties, '$ip') AS ip FROM events WHERE distinct_id = 'formats' ORDER BY event",
        format: 'JSONEachRow',
      })
    ).json<{ event: string; text: string; ip: string }>();
    expect(rows).toEqual([
      { event: 'format-0', text: 'nulhere', ip: '10.0.0.1' },
      { event: 'format-1', text: 'nulhere', ip: '10.0.0.1' },
      { event: 'format-2', text: 'nulhere', ip: '10.0.0.1' },
    ]);
  });

  it('stores the properties of a format-2 message exactly as those of the same event in format 1, every JSON value kind, unicode and a huge value included', async () => {
    const properties = {
      s: 'quote " backslash \\ newline \n tab \t slash /',
      n: -1.5e-300,
      big: 1e21,
      int: 9007199254740991,
      t: true,
      f: false,
      nul: null,
      arr: [1, 'a', null, [], {}, [[[]]]],
      obj: { deep: { er: [{ x: 'ü' }] } },
      unicode: 'événement 中文 😀 \u{1f600}',
      ['ключ 😀']: 'значение',
      '': '',
      10: 'an integer key',
      huge: 'x'.repeat(400_000),
    };
    const sent = [0, 1].map((n) => busMessage({ event: `exact-${n}`, distinct_id: 'exact', properties }, { token: TOKEN, ip: '10.0.0.1' }));
    const asFormatOne = decodeIngestMessage(sent[1]!.value) as IngestMessage;
    await bus.send(topics.events, [
      { key: sent[0]!.key, value: sent[0]!.value },
      { key: sent[1]!.key, value: Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(asFormatOne))]) },
    ]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE distinct_id = 'exact'")) === 2, { timeoutMs: 60_000 });
    const rows = await (
      await ch.query({ query: "SELECT event, properties FROM events WHERE distinct_id = 'exact' ORDER BY event", format: 'JSONEachRow' })
    ).json<{ event: string; properties: string }>();
    const expected = JSON.stringify({ ...properties, $ip: '10.0.0.1' });
    expect(rows.map((r) => r.event)).toEqual(['exact-0', 'exact-1']);
    expect(rows[0]!.properties).toBe(expected);
    expect(rows[1]!.properties).toBe(expected);
  });

  it('dead-letters a poison message and keeps the partition flowing', async () => {
    const key = `${TOKEN}:poison`;
    await bus.send(topics.events, [{ key, value: '{not json' }, { key, value: JSON.stringify({ uuid: 'x' }) }, message('after-poison', 'poison')]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'after-poison'")) === 1, { timeoutMs: 60_000 });
    await waitFor(async () => (await count("SELECT count() AS c FROM dead_letters WHERE headers['x-step'] = 'parse'")) === 2, { timeoutMs: 60_000 });
    const letters = await (
      await ch.query({ query: "SELECT topic, error, headers FROM dead_letters WHERE headers['x-step'] = 'parse' ORDER BY error", format: 'JSONEachRow' })
    ).json<{ topic: string; error: string; headers: Record<string, string> }>();
    expect(letters.map((l) => l.topic)).toEqual([topics.events, topics.events]);
    expect(letters.map((l) => l.error)).toEqual([expect.stringMatching(/field .* missing/), expect.stringMatching(/not JSON/)]);
    expect(letters[0]!.headers['x-step']).toBe('parse');
  });

  it('drops events of an unknown project without blocking others', async () => {
    await bus.send(topics.events, [message('ghost', 'g', null, 'phc_nobody'), message('real', 'r')]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'real'")) === 1, { timeoutMs: 60_000 });
    expect(await count("SELECT count() AS c FROM events WHERE event = 'ghost'")).toBe(0);
  });

  it('consumes the historical topic in its own group, keeping timestamps', async () => {
    await bus.send(topics.eventsHistorical, [
      busMessage({ event: 'old', distinct_id: 'h', timestamp: '2021-05-01T12:00:00Z' }, { token: TOKEN, historicalMigration: true }),
    ]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event = 'old' AND toDate(timestamp) = '2021-05-01'")) === 1, {
      timeoutMs: 60_000,
    });
  });

  it('1,000 sequential $set of one distinct id end with the last value', async () => {
    const updates = Array.from({ length: 1000 }, (_, i) =>
      busMessage({ event: '$set', distinct_id: 'setter', properties: { $set: { n: i } } }, { token: TOKEN }),
    );
    for (let i = 0; i < updates.length; i += 250) await bus.send(topics.events, updates.slice(i, i + 250));
    await waitFor(async () => (await count("SELECT count() AS c FROM events FINAL WHERE distinct_id = 'setter'")) === 1000, { timeoutMs: 60_000 });
    const person = await findPersonByDistinctId(db, 1, 'setter');
    expect(person!.properties).toEqual({ n: 999 });
    expect((await readPersonCopy(ch, 1, person!.uuid))!.properties).toEqual({ n: 999 });
  });

  it('processes historical events in send order, keeps their timestamps, and sets person properties by event time', async () => {
    const timestamps = ['2021-03-05T10:00:00.000Z', '2021-01-01T00:00:00.000Z', '2021-06-30T23:59:59.000Z', '2020-12-31T12:00:00.000Z'];
    const messages = timestamps.map((timestamp, i) =>
      busMessage(
        { event: 'migrated', distinct_id: 'historian', timestamp, properties: { $set: { last_sent: i }, i } },
        { token: TOKEN, historicalMigration: true },
      ),
    );
    await bus.send(topics.eventsHistorical, messages);
    await waitFor(async () => (await count("SELECT count() AS c FROM events FINAL WHERE event = 'migrated'")) === 4, { timeoutMs: 60_000 });
    const rows = await (
      await ch.query({
        query: `SELECT JSONExtractInt(properties, 'i') AS i, timestamp, JSONExtractInt(person_properties, 'last_sent') AS seen
                  FROM events FINAL WHERE event = 'migrated' ORDER BY i`,
        format: 'JSONEachRow',
      })
    ).json<{ i: number; timestamp: string; seen: number }>();
    expect(rows.map((r) => new Date(`${r.timestamp.replace(' ', 'T')}Z`).toISOString())).toEqual(timestamps);
    // Each event saw the person as left by the events sent before it, in which an older event's
    // $set did not replace a newer one's (docs/data-model.md#historical-events-by-event-time).
    expect(rows.map((r) => r.seen)).toEqual([0, 0, 2, 2]);
    expect((await findPersonByDistinctId(db, 1, 'historian'))!.properties).toEqual({ last_sent: 2 });
  });

  it('dead-letters a message that fails a later step (ClickHouse rejects its row), writing its neighbours', async () => {
    const good = (n: number) => message(`neighbour-${n}`, 'writer-poison');
    const poison = decodeIngestMessage(message('unwritable', 'writer-poison').value) as IngestMessage;
    poison.timestamp = '+010000-01-01T00:00:00.000Z'; // a valid JS date ClickHouse cannot store
    await bus.send(topics.events, [good(1), { key: `${TOKEN}:writer-poison`, value: encodeIngestMessage(poison) }, good(2)]);
    await waitFor(async () => (await count("SELECT count() AS c FROM events WHERE event LIKE 'neighbour-%'")) === 2, { timeoutMs: 60_000 });
    await waitFor(async () => (await count("SELECT count() AS c FROM dead_letters WHERE headers['x-step'] = 'write'")) === 1, { timeoutMs: 60_000 });
    expect(await count("SELECT count() AS c FROM events WHERE event = 'unwritable'")).toBe(0);
    // The archive keeps a binary (format 2) message as JSON people can read, the event whole.
    const [archived] = await (
      await ch.query({ query: "SELECT value FROM dead_letters WHERE headers['x-step'] = 'write'", format: 'JSONEachRow' })
    ).json<{ value: string }>();
    expect(JSON.parse(archived!.value)).toEqual(poison);
  });

  it('the weekly job deletes the events of queued person deletions, once', async () => {
    await db.query('INSERT INTO queued_deletions (team_id, person_uuid) VALUES (1, $1)', [personUuidFor(1, 'bob')]);
    const before = await count("SELECT count() AS c FROM events WHERE distinct_id = 'bob'");
    expect(before).toBeGreaterThan(0);
    expect(await runPersonEventsDeletion({ db, ch })).toMatchObject({ tasks: 1, eventsDeleted: before });
    expect(await count("SELECT count() AS c FROM events WHERE distinct_id = 'bob'")).toBe(0);
    expect(await count("SELECT count() AS c FROM events WHERE distinct_id = 'alice'")).toBe(2);
    expect(await runPersonEventsDeletion({ db, ch })).toMatchObject({ tasks: 0, eventsDeleted: 0 });
  });

  it('reports its consumer loops alive', async () => {
    for (const check of worker.liveness) await expect(Promise.resolve(check.check())).resolves.toBeUndefined();
  });
});
