import { loadMigrations, migrationStatements, schemaMigrationsStatements } from '../migrations';
import { clusterStatements } from './cluster-statements';
import { clickhouseLayout, clusterClientSettings, mutationsSource, mutationTarget, SINGLE_SERVER } from './layout';

const cluster = clickhouseLayout('sightline');
const all = [...schemaMigrationsStatements(cluster), ...loadMigrations().flatMap((m) => migrationStatements(m, cluster))];
const created = (table: string) => all.filter((s) => new RegExp(`^CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER sightline\\b`).test(s));
const altered = (table: string) => all.filter((s) => new RegExp(`^ALTER TABLE ${table} ON CLUSTER sightline\\b`).test(s));

describe('ClickHouse layout', () => {
  it('is one server unless CLICKHOUSE_CLUSTER names a cluster', () => {
    expect(clickhouseLayout(undefined)).toBe(SINGLE_SERVER);
    expect(clickhouseLayout('')).toBe(SINGLE_SERVER);
    expect(cluster.cluster).toBe('sightline');
  });

  it('refuses a cluster name that is not a plain identifier (it is printed into DDL)', () => {
    expect(() => clickhouseLayout("x' ; DROP TABLE events")).toThrow(/plain identifier/);
    expect(() => clickhouseLayout('sightline', 'a-b')).toThrow(/CLICKHOUSE_DATABASE must be a plain identifier/);
  });

  it('asks a cluster client to answer inserts only once every shard wrote its rows', () => {
    expect(clusterClientSettings(SINGLE_SERVER)).toEqual({});
    expect(clusterClientSettings(cluster)).toEqual({ distributed_foreground_insert: 1 });
  });

  it("deletes events on every shard's table and waits on every replica; replicated tables as they are", () => {
    expect(mutationTarget(SINGLE_SERVER, 'events')).toEqual({ table: 'events', clause: 'events' });
    expect(mutationTarget(cluster, 'events')).toEqual({ table: 'sharded_events', clause: 'sharded_events ON CLUSTER sightline' });
    expect(mutationTarget(cluster, 'person')).toEqual({ table: 'person', clause: 'person' });
    expect(mutationsSource(SINGLE_SERVER)).toBe('system.mutations');
    expect(mutationsSource(cluster)).toBe('clusterAllReplicas(sightline, system.mutations)');
  });
});

describe('cluster migrations', () => {
  it('leave every statement as written on one server', () => {
    for (const m of loadMigrations()) expect(migrationStatements(m, SINGLE_SERVER)).toEqual(m.statements);
  });

  it('run every statement ON CLUSTER, on replicated or distributed engines only', () => {
    expect(all.length).toBeGreaterThan(0);
    for (const statement of all) {
      expect(statement).toMatch(/^(CREATE TABLE IF NOT EXISTS|ALTER TABLE) \w+ ON CLUSTER sightline\b/);
      const engine = /ENGINE = (\w+)/.exec(statement)?.[1];
      if (engine) expect(engine).toMatch(/^(Replicated\w*MergeTree|Distributed)$/);
    }
  });

  it('shard the events by sipHash64(distinct_id) behind a Distributed table named events', () => {
    const [shards] = created('sharded_events');
    expect(shards).toContain("ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}.sharded_events', '{replica}')");
    // The single-server ordering key (uuid included) is kept: FINAL collapses a redelivery per shard.
    expect(shards).toContain('ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))');
    const [distributed] = created('events');
    expect(distributed).toMatch(/ENGINE = Distributed\('sightline', 'default', 'sharded_events', sipHash64\(distinct_id\)\)$/);
    expect(clusterStatements(loadMigrations()[0]!.statements[0]!, clickhouseLayout('sightline', 'analytics'))[1]).toContain(
      "Distributed('sightline', 'analytics', 'sharded_events'",
    );
    // Same columns on both.
    const columns = (s: string) => s.slice(s.indexOf('('), s.indexOf('\nENGINE'));
    expect(columns(distributed!)).toBe(columns(shards!));
  });

  it.each(['person', 'person_distinct_id2', 'groups', 'person_static_cohort', 'dead_letters', 'insight_timings', 'schema_migrations'])(
    'replicate %s whole to every node (one replication group, replica names unique per node)',
    (table) => {
      const [statement] = created(table);
      expect(statement).toContain(`ENGINE = Replicated`);
      expect(statement).toContain(`('/clickhouse/tables/noshard/{database}.${table}', '{replica}-{shard}'`);
      expect(created(`sharded_${table}`)).toEqual([]);
    },
  );

  it('keep the engine arguments after the Keeper path and replica', () => {
    expect(created('person')[0]).toContain("'{replica}-{shard}', version)");
  });

  it("add the events' group columns to the shards and to the Distributed table", () => {
    const [shards] = altered('sharded_events');
    const [distributed] = altered('events');
    expect(shards).toContain('ADD COLUMN IF NOT EXISTS group4_created_at');
    expect(distributed).toBe(shards!.replace('sharded_events', 'events'));
  });

  it('leave out the non-replicated deduplication window (replicated tables keep block ids in Keeper)', () => {
    expect(all.join('\n')).not.toContain('non_replicated_deduplication_window');
    expect(clusterStatements('ALTER TABLE events MODIFY SETTING non_replicated_deduplication_window = 1000', cluster)).toEqual([]);
    expect(clusterStatements('ALTER TABLE events MODIFY SETTING non_replicated_deduplication_window = 5, index_granularity_bytes = 1', cluster)).toEqual([
      'ALTER TABLE sharded_events ON CLUSTER sightline\n    MODIFY SETTING index_granularity_bytes = 1',
    ]);
  });

  it('send column changes of a sharded table to both tables, other changes to the shards only', () => {
    expect(
      clusterStatements(
        "ALTER TABLE events ADD COLUMN IF NOT EXISTS x String DEFAULT 'a,b', ADD INDEX IF NOT EXISTS i x TYPE bloom_filter GRANULARITY 1",
        cluster,
      ),
    ).toEqual([
      "ALTER TABLE sharded_events ON CLUSTER sightline\n    ADD COLUMN IF NOT EXISTS x String DEFAULT 'a,b',\n    ADD INDEX IF NOT EXISTS i x TYPE bloom_filter GRANULARITY 1",
      "ALTER TABLE events ON CLUSTER sightline\n    ADD COLUMN IF NOT EXISTS x String DEFAULT 'a,b'",
    ]);
  });

  it('refuse a statement they have no cluster form for, naming it', () => {
    expect(() => clusterStatements('CREATE MATERIALIZED VIEW IF NOT EXISTS mv TO t AS SELECT 1', cluster)).toThrow(/no cluster form.*MATERIALIZED VIEW/);
    expect(() => clusterStatements('CREATE TABLE IF NOT EXISTS t (a Int8) ENGINE = Memory', cluster)).toThrow(/only .*MergeTree/);
  });
});
