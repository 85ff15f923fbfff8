// The person-event deletion in ClickHouse's cluster layout (CLICKHOUSE_CLUSTER): its mutations
// cannot run here (no cluster), so they are recorded, parsed by ClickHouse (chdb's formatQuery)
// and answered as done; everything else runs on the test stores as in the single-server test.
import { clickhouseLayout, insertEvents } from '@sightline/clickhouse';
import { createTestPerson, createTestStores, formatWithClickHouse, recordStatements, testEventRow, type TestStores } from '@sightline/testkit';
import { runPersonEventsDeletion } from './person-events-deletion';
import { deletePersons } from './person-writes';

describe('person-event deletion on a cluster', () => {
  let stores: TestStores;

  beforeAll(async () => {
    stores = await createTestStores('deletion_cluster');
  });
  afterAll(() => stores.close());

  it("deletes the events on every shard's table, the persons' rows through replication, and waits on every replica", async () => {
    const person = await createTestPerson(stores, { distinctIds: ['gone'] });
    await insertEvents(stores.ch, [testEventRow({ event: 'e', atMs: Date.now() - 60_000, distinctId: 'gone', personId: person.uuid })]);
    await deletePersons(stores, 1, [person.id], { deleteEvents: true, requestedBy: null });
    // Mutations and their status come from the cluster: recorded, answered "done".
    const recorded = recordStatements(stores.ch, (sql) =>
      /^ALTER TABLE/.test(sql) ? [] : sql.includes('system.mutations') ? [{ running: '0', failure: '' }] : undefined,
    );

    const summary = await runPersonEventsDeletion({ db: stores.db, ch: recorded.client, layout: clickhouseLayout('sightline') });

    expect(summary).toMatchObject({ tasks: 1, eventsDeleted: 1 });
    const mutations = recorded.statements.filter((s) => s.startsWith('ALTER TABLE'));
    expect(mutations.map((s) => /^ALTER TABLE (\S+(?: ON CLUSTER \w+)?) DELETE WHERE/.exec(s)?.[1])).toEqual([
      'sharded_events ON CLUSTER sightline',
      'person',
      'person_distinct_id2',
    ]);
    const polls = recorded.statements.filter((s) => s.includes('system.mutations'));
    expect(polls).toHaveLength(3);
    for (const poll of polls) expect(poll).toContain('FROM clusterAllReplicas(sightline, system.mutations)');
    for (const sql of [...mutations, ...polls])
      expect(await formatWithClickHouse(sql)).toMatch(/DELETE WHERE|clusterAllReplicas\(sightline, system\.mutations\)/);
  });
});
