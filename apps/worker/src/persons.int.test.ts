import { createInProcessBus, topicNames, type BatchHandler, type ConsumedMessage } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { personUuidFor, type RawEvent } from '@sightline/ingestion';
import { silentLogger } from '@sightline/logger';
import { createMetrics, type Metrics } from '@sightline/metrics';
import { findGroup, findPersonByDistinctId, listGroupTypes, readDistinctIdCopy, readPersonCopy, type PersonChange } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { createEmbeddedTestStores, createTestStores, type TestStores } from '@sightline/testkit';
import { busMessage } from './testing/bus-message';
import { createEventsConsumer } from './events.consumer';

/**
 * Person and group processing through the worker's events pipeline (real ClickHouse; the batch
 * handler is called directly, as the bus would). Every case runs on PostgreSQL and on the
 * embedded PGlite (the same statements, one store locking rows, the other one transaction at a
 * time), and each twice: each event in its own batch, and all events of the case in one batch,
 * since a batch works on persons in memory and must end exactly where event-by-event ends.
 */
const TOKEN = 'phc_persons_test_key';
const TEAM = 1;

const CASES = (['PostgreSQL', 'PGlite'] as const).flatMap((store) => (['one event per batch', 'one batch'] as const).map((mode) => [store, mode] as const));

describe.each(CASES)('person processing on %s (%s)', (store, mode) => {
  let stores: Pick<TestStores, 'db' | 'ch' | 'close'>;
  let db: MetadataStore;
  let ch: ClickHouseClient;
  let handler: BatchHandler;
  let metrics: Metrics;
  let offset = 0;
  let prefix = 0;
  const announced: PersonChange[][] = [];

  beforeAll(async () => {
    stores =
      store === 'PostgreSQL'
        ? await createTestStores('persons', { projectApiKey: TOKEN })
        : await createEmbeddedTestStores('persons', { projectApiKey: TOKEN });
    ({ db, ch } = stores);
    metrics = createMetrics();
    handler = createEventsConsumer({
      ch,
      db,
      bus: createInProcessBus(silentLogger()),
      topics: topicNames('persons.'),
      resolveTeam: async () => TEAM,
      metrics,
      logger: silentLogger(),
      personChanges: { personsChanged: async (changes) => void announced.push([...changes]) },
    });
  });
  afterAll(async () => {
    await stores.close();
  });

  /** Distinct ids unique to one test, so the cases do not share persons. */
  let ids: (name: string) => string;
  beforeEach(() => {
    const p = `t${++prefix}-`;
    ids = (name) => `${p}${name}`;
  });

  const message = (raw: RawEvent, nowMs: number, historicalMigration = false): ConsumedMessage => {
    const { key, value } = busMessage(raw, { token: TOKEN, teamId: TEAM, nowMs, historicalMigration });
    return { key, value: Buffer.from(value), headers: {}, offset: String(offset++) };
  };
  let clock = Date.parse('2026-01-01T00:00:00Z');
  async function ingest(...events: RawEvent[]) {
    const messages = events.map((e) => message({ timestamp: new Date((clock += 1000)).toISOString(), ...e }, clock));
    if (mode === 'one batch') await handler({ topic: 'persons.events', partition: 0, messages });
    else for (const m of messages) await handler({ topic: 'persons.events', partition: 0, messages: [m] });
  }
  /** Events of a historical migration, with their own (past) timestamps, in the order given. */
  async function ingestHistorical(...events: RawEvent[]) {
    const messages = events.map((e) => message(e, (clock += 1000), true));
    if (mode === 'one batch') await handler({ topic: 'persons.events_historical', partition: 0, messages });
    else for (const m of messages) await handler({ topic: 'persons.events_historical', partition: 0, messages: [m] });
  }
  const person = async (distinctId: string) => findPersonByDistinctId(db, TEAM, distinctId);
  const warnings = async (type: string) => (await metrics.ingestionWarnings.get()).values.find((v) => v.labels.type === type)?.value ?? 0;
  async function eventRows(distinctId: string) {
    return (
      await ch.query({
        query: `SELECT event, toString(person_id) AS person_id, person_properties, person_mode FROM events FINAL
                 WHERE distinct_id = {d:String} ORDER BY timestamp`,
        query_params: { d: distinctId },
        format: 'JSONEachRow',
      })
    ).json<{ event: string; person_id: string; person_properties: string; person_mode: string }>();
  }

  it('announces what its committed person writes changed (decide drops those answers only), and nothing when no person changed', async () => {
    announced.length = 0;
    await ingest({ event: '$pageview', distinct_id: ids('announced'), properties: { $set: { plan: 'pro' } } });
    const written = await person(ids('announced'));
    expect(written?.properties).toMatchObject({ plan: 'pro' });
    const changes = announced.flat();
    expect(changes.every((c) => c.teamId === TEAM)).toBe(true);
    expect(changes.flatMap((c) => c.persons)).toContain(written!.uuid);
    expect(changes.flatMap((c) => c.distinctIds)).toContain(ids('announced'));
    // A merge names both persons: answers cached under either's distinct ids are dropped.
    await ingest({ event: '$pageview', distinct_id: ids('anon') }, { event: '$pageview', distinct_id: ids('user') });
    const [anon, user] = [await person(ids('anon')), await person(ids('user'))];
    announced.length = 0;
    await ingest({ event: '$identify', distinct_id: ids('user'), properties: { $anon_distinct_id: ids('anon') } });
    expect(announced.flat().flatMap((c) => c.persons)).toEqual(expect.arrayContaining([anon!.uuid, user!.uuid]));
    announced.length = 0;
    await ingest({ event: '$pageview', distinct_id: ids('personless'), properties: { $process_person_profile: false } });
    expect(announced).toEqual([]);
  });

  it('creates a person on first sight with the deterministic UUIDv5, and copies it to ClickHouse', async () => {
    const a = ids('a');
    await ingest({ event: 'pageview', distinct_id: a });
    const p = await person(a);
    expect(p).toMatchObject({ uuid: personUuidFor(TEAM, a), isIdentified: false, version: 0, distinctIds: [a] });
    expect(await readPersonCopy(ch, TEAM, p!.uuid)).toMatchObject({ isDeleted: false, version: 0 });
    expect(await readDistinctIdCopy(ch, TEAM, a)).toEqual({ personId: p!.uuid, version: 0 });
    expect(await eventRows(a)).toEqual([{ event: 'pageview', person_id: p!.uuid, person_properties: '{}', person_mode: 'full' }]);
  });

  it('applies $set_once, then $set, then $unset; lifts $initial_* properties; enriches each event with the properties after it', async () => {
    const a = ids('a');
    await ingest(
      { event: 'e1', distinct_id: a, properties: { $set_once: { plan: 'free', first: 1 }, $set: { plan: 'pro' }, $browser: 'Firefox', utm_source: 'ads' } },
      { event: 'e2', distinct_id: a, properties: { $set_once: { first: 2 }, $unset: ['plan'], $browser: 'Chrome' } },
      { event: '$set', distinct_id: a, $set: { top: 'level' }, properties: { $set: { top: 'nested', other: true } } } as RawEvent,
    );
    const p = await person(a);
    expect(p!.properties).toEqual({
      first: 1,
      $browser: 'Chrome',
      $initial_browser: 'Firefox',
      utm_source: 'ads',
      $initial_utm_source: 'ads',
      top: 'level',
      other: true,
    });
    const rows = await eventRows(a);
    expect(JSON.parse(rows[0]!.person_properties)).toMatchObject({ plan: 'pro', first: 1, $browser: 'Firefox' });
    expect(JSON.parse(rows[1]!.person_properties)).not.toHaveProperty('plan');
    expect((await readPersonCopy(ch, TEAM, p!.uuid))!.properties).toEqual(p!.properties);
  });

  it('applies $set of historical events by event time: files in any order, and events sent twice, end on the latest values', async () => {
    const a = ids('imported');
    const at = (day: number) => `2024-01-${String(day).padStart(2, '0')}T10:00:00Z`;
    const event = (day: number, properties: Record<string, unknown>) => ({ event: 'e', distinct_id: a, timestamp: at(day), properties });
    // The newer export first, then the older one, then the newer one again (a resumed or repeated import).
    const newer = [event(20, { $set: { plan: 'team' }, $set_once: { first_plan: 'pro' } }), event(25, { $set: { seats: 5 }, $unset: ['trial'] })];
    const older = [event(1, { $set: { plan: 'free', trial: true, seats: 1 }, $set_once: { first_plan: 'free' } }), event(10, { $set: { plan: 'pro' } })];
    await ingestHistorical(...newer);
    await ingestHistorical(...older);
    await ingestHistorical(...older);
    const p = await person(a);
    expect(p!.properties).toEqual({ plan: 'team', seats: 5, first_plan: 'free' });
    expect((await readPersonCopy(ch, TEAM, p!.uuid))!.properties).toEqual(p!.properties);
    // A live value is never replaced by history, however recent the imported event.
    await ingest({ event: 'e', distinct_id: a, properties: { $set: { plan: 'enterprise' } } });
    await ingestHistorical(event(28, { $set: { plan: 'team', seats: 6 } }));
    expect((await person(a))!.properties).toEqual({ plan: 'enterprise', seats: 6, first_plan: 'free' });
  });

  it('stores an event whose $set holds a lone surrogate (PostgreSQL refuses it in jsonb) with U+FFFD in its place', async () => {
    const a = ids('surrogate');
    await ingest({ event: 'e', distinct_id: a, properties: { $set: { name: 'broken \ud800 text' } } });
    expect((await person(a))?.properties).toEqual({ name: 'broken \ufffd text' });
    expect(await eventRows(a)).toHaveLength(1);
  });

  // Interface transition table: "$create_alias with distinct_id 123 and properties.alias 456: 123 merged into 456".
  it('$create_alias merges the distinct_id into the alias; the alias person survives (interface transition row)', async () => {
    const [d123, d456] = [ids('123'), ids('456')];
    await ingest(
      { event: 'e', distinct_id: d123, properties: { $set: { from123: true, both: 123 } } },
      { event: 'e', distinct_id: d456, properties: { $set: { from456: true, both: 456 } } },
    );
    const before123 = (await person(d123))!;
    const before456 = (await person(d456))!;
    await ingest({ event: '$create_alias', distinct_id: d123, properties: { alias: d456 } });
    const survivor = (await person(d123))!;
    expect(survivor.uuid).toBe(before456.uuid);
    expect(survivor.distinctIds).toEqual([d123, d456].sort());
    expect(survivor.properties).toEqual({ from123: true, from456: true, both: 456 });
    expect(survivor.isIdentified).toBe(true);
    expect(survivor.version).toBe(Math.max(before123.version, before456.version) + 1);
    expect(await db.query('SELECT 1 FROM persons WHERE id = $1', [before123.id])).toEqual([]);
    expect(await readPersonCopy(ch, TEAM, before123.uuid)).toMatchObject({ isDeleted: true });
    expect(await readDistinctIdCopy(ch, TEAM, d123)).toEqual({ personId: before456.uuid, version: 1 });
    // Later events of 123 are attributed to the alias person.
    await ingest({ event: 'after', distinct_id: d123 });
    expect((await eventRows(d123)).at(-1)!.person_id).toBe(before456.uuid);
  });

  it('$identify with $anon_distinct_id merges the anonymous person into the identified one and sets is_identified', async () => {
    const [anon, user] = [ids('anon'), ids('user')];
    await ingest({ event: 'e', distinct_id: anon, properties: { $set: { seen: 'anon' } } }, { event: 'e', distinct_id: user });
    const userBefore = (await person(user))!;
    await ingest({ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon, $set: { email: 'u@x' } } });
    const p = (await person(anon))!;
    expect(p.uuid).toBe(userBefore.uuid);
    expect(p).toMatchObject({ isIdentified: true, distinctIds: [anon, user].sort(), properties: { seen: 'anon', email: 'u@x' } });
  });

  it('a merged person keeps the earlier created_at of the two, and later updates leave it', async () => {
    const [anon, user] = [ids('anon'), ids('user')];
    await ingest({ event: 'e', distinct_id: anon }, { event: 'e', distinct_id: user });
    const [anonBefore, userBefore] = [(await person(anon))!, (await person(user))!];
    expect(anonBefore.createdAt < userBefore.createdAt).toBe(true);
    await ingest({ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon } });
    expect((await person(user))!).toMatchObject({ uuid: userBefore.uuid, createdAt: anonBefore.createdAt });
    await ingest({ event: 'e', distinct_id: user, properties: { $set: { plan: 'pro' } } });
    expect((await person(user))!).toMatchObject({ createdAt: anonBefore.createdAt, properties: { plan: 'pro' } });
  });

  it('$identify when neither id has a person creates one person with both ids, identified, with the event $set', async () => {
    const [anon, user] = [ids('anon'), ids('user')];
    await ingest({ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon, $set: { email: 'n@x' } } });
    const p = (await person(user))!;
    expect(p).toMatchObject({ uuid: personUuidFor(TEAM, user), isIdentified: true, distinctIds: [anon, user].sort(), properties: { email: 'n@x' } });
    expect(await readDistinctIdCopy(ch, TEAM, anon)).toEqual({ personId: p.uuid, version: 0 });
  });

  it('$identify when only one id has a person adds the other id to it and marks it identified', async () => {
    const [anon, user] = [ids('anon'), ids('user')];
    await ingest({ event: 'e', distinct_id: anon });
    const anonPerson = (await person(anon))!;
    await ingest({ event: '$identify', distinct_id: user, properties: { $anon_distinct_id: anon } });
    expect(await person(user)).toMatchObject({ uuid: anonPerson.uuid, isIdentified: true, distinctIds: [anon, user].sort(), version: 1 });
  });

  it('refuses to merge when the other person is already identified (warning), and still ingests the event', async () => {
    const [a, b, c] = [ids('a'), ids('b'), ids('c')];
    // b becomes identified (merged with c), then a tries to absorb b.
    await ingest({ event: '$identify', distinct_id: b, properties: { $anon_distinct_id: c } }, { event: 'e', distinct_id: a });
    const before = await warnings('cannot_merge_already_identified');
    await ingest({ event: '$identify', distinct_id: a, properties: { $anon_distinct_id: b, $set: { x: 1 } } });
    expect((await person(a))!.distinctIds).toEqual([a]);
    expect((await person(a))!.properties).toEqual({ x: 1 });
    expect((await person(b))!.distinctIds).toEqual([b, c].sort());
    expect(await warnings('cannot_merge_already_identified')).toBe(before + 1);
    expect((await eventRows(a)).map((r) => r.event)).toEqual(['e', '$identify']);
  });

  it('$merge_dangerously merges even an identified person, moving hash-key overrides and cohort membership to the survivor', async () => {
    const [a, b, c] = [ids('a'), ids('b'), ids('c')];
    await ingest({ event: '$identify', distinct_id: b, properties: { $anon_distinct_id: c } }, { event: 'e', distinct_id: a });
    const pa = (await person(a))!;
    const pb = (await person(b))!;
    await db.query("INSERT INTO feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key) VALUES ($1, $2, 'flag', $3)", [
      TEAM,
      pb.id,
      b,
    ]);
    const [cohort] = await db.query<{ id: number }>("INSERT INTO cohorts (team_id, name) VALUES ($1, 'c') RETURNING id", [TEAM]);
    await db.query('INSERT INTO cohort_people (cohort_id, person_id) VALUES ($1, $2)', [cohort!.id, pb.id]);
    // $merge_dangerously, like $create_alias: distinct_id (b) merges into the alias (a).
    await ingest({ event: '$merge_dangerously', distinct_id: b, properties: { alias: a } });
    const survivor = (await person(b))!;
    expect(survivor.uuid).toBe(pa.uuid);
    expect(survivor.distinctIds).toEqual([a, b, c].sort());
    expect(await db.query('SELECT person_id::text, hash_key FROM feature_flag_hash_key_overrides WHERE team_id = $1 AND hash_key = $2', [TEAM, b])).toEqual([
      { person_id: String(pa.id), hash_key: b },
    ]);
    expect(await db.query('SELECT person_id::text FROM cohort_people WHERE cohort_id = $1', [cohort!.id])).toEqual([{ person_id: String(pa.id) }]);
  });

  it('never merges illegal distinct ids (warning), and a merge with the same id on both sides does nothing', async () => {
    const a = ids('a');
    const before = await warnings('cannot_merge_with_illegal_distinct_id');
    await ingest({ event: 'e', distinct_id: 'anonymous' }, { event: '$identify', distinct_id: a, properties: { $anon_distinct_id: 'anonymous' } });
    await ingest({ event: '$create_alias', distinct_id: a, properties: { alias: 'null' } });
    await ingest({ event: '$create_alias', distinct_id: a, properties: { alias: a } });
    expect(await warnings('cannot_merge_with_illegal_distinct_id')).toBe(before + 2);
    expect(await person(a)).toMatchObject({ distinctIds: [a], isIdentified: false });
    expect(await person('null')).toBeNull();
  });

  it('versions strictly increase with every write of a person', async () => {
    const a = ids('a');
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) {
      await ingest({ event: '$set', distinct_id: a, properties: { $set: { i } } });
      seen.push((await person(a))!.version);
    }
    expect(seen).toEqual([0, 1, 2, 3]);
    await ingest({ event: '$set', distinct_id: a, properties: { $set: { i: 3 } } }); // no change, no write
    expect((await person(a))!.version).toBe(3);
    expect((await readPersonCopy(ch, TEAM, (await person(a))!.uuid))!.version).toBe(3);
  });

  it('$delete_person_property removes the listed keys', async () => {
    const a = ids('a');
    await ingest({ event: '$set', distinct_id: a, properties: { $set: { keep: 1, drop: 2 } } });
    await ingest({ event: '$delete_person_property', distinct_id: a, properties: { $unset: ['drop'] } });
    expect((await person(a))!.properties).toEqual({ keep: 1 });
  });

  it('$process_person_profile=false creates no person, ignores $set, keeps the deterministic id; a later person gets a version-1 distinct id row', async () => {
    const a = ids('a');
    await ingest({ event: 'e', distinct_id: a, properties: { $process_person_profile: false, $set: { no: true } } });
    expect(await person(a)).toBeNull();
    expect(await eventRows(a)).toEqual([{ event: 'e', person_id: personUuidFor(TEAM, a), person_properties: '{}', person_mode: 'propertyless' }]);
    await ingest({ event: 'later', distinct_id: a });
    expect(await readDistinctIdCopy(ch, TEAM, a)).toEqual({ personId: personUuidFor(TEAM, a), version: 1 });
    // Once the person exists, a personless event carries it read-only.
    await ingest(
      { event: '$set', distinct_id: a, properties: { $set: { yes: 1 } } },
      { event: 'ro', distinct_id: a, properties: { $process_person_profile: false, $set: { no: 1 } } },
    );
    expect((await person(a))!.properties).toEqual({ yes: 1 });
    expect((await eventRows(a)).at(-1)).toMatchObject({ event: 'ro', person_mode: 'propertyless', person_properties: '{"yes":1}' });
  });

  it('$groupidentify creates and updates a group; $groups attaches it to events without creating one', async () => {
    const [org, u] = [ids('org'), ids('u')];
    await ingest(
      { event: '$groupidentify', distinct_id: u, properties: { $group_type: 'company', $group_key: org, $group_set: { name: 'Acme', size: 1 } } },
      { event: 'e', distinct_id: u, properties: { $groups: { company: org, project: ids('nowhere') } } },
      { event: '$groupidentify', distinct_id: u, properties: { $group_type: 'company', $group_key: org, $group_set: { size: 2 } } },
    );
    const types = await listGroupTypes(db, TEAM);
    const company = types.get('company')!;
    expect(types.get('project')).toBe(company + 1);
    expect(await findGroup(db, TEAM, company, org)).toMatchObject({ properties: { name: 'Acme', size: 2 } });
    expect(await findGroup(db, TEAM, types.get('project')!, ids('nowhere'))).toBeNull();
    const rows = await (
      await ch.query({
        query: `SELECT JSONExtractString(properties, {g:String}) AS key, group${company}_properties AS props FROM events FINAL WHERE distinct_id = {d:String} AND event = 'e'`,
        query_params: { d: u, g: `$group_${company}` },
        format: 'JSONEachRow',
      })
    ).json<{ key: string; props: string }>();
    expect(rows).toEqual([{ key: org, props: '{"name":"Acme","size":1}' }]);
    const copy = await (
      await ch.query({
        query: 'SELECT argMax(group_properties, version) AS p FROM groups WHERE team_id = {t:Int64} AND group_key = {k:String} GROUP BY group_key',
        query_params: { t: TEAM, k: org },
        format: 'JSONEachRow',
      })
    ).json<{ p: string }>();
    expect(JSON.parse(copy[0]!.p)).toEqual({ name: 'Acme', size: 2 });
    // $groupidentify does not write person properties.
    expect((await person(u))!.properties).toEqual({});
  });

  it('allows at most five group types per project', async () => {
    const u = ids('u');
    const groups = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [ids(`type${i}`), 'k']));
    await ingest({ event: 'e', distinct_id: u, properties: { $groups: groups } });
    expect((await listGroupTypes(db, TEAM)).size).toBe(5);
  });
});
