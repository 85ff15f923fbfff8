/**
 * Where the analytics tables live: on one server, or over a ClickHouse cluster of shards and
 * replicas (CLICKHOUSE_CLUSTER, docs/scaling.md#clickhouse-over-shards-and-replicas). The cluster
 * layout is PostHog's (posthog/models/event/sql.py, posthog/models/person/sql.py,
 * posthog/clickhouse/table_engines.py):
 *
 * - `events` is a Distributed table over `sharded_events`, a ReplicatedReplacingMergeTree on
 *   every shard, rows placed by sipHash64(distinct_id): every event of one distinct id (and so
 *   every redelivery of one event) lands on one shard, where FINAL collapses it;
 * - every other table (persons, distinct ids, groups, static cohorts, …) is replicated whole
 *   to every node (one replication group, path `noshard`), so a shard joins events with them
 *   locally.
 *
 * Everything that differs between the two layouts is asked of this module; the migrations and
 * the query builders are the same code in both.
 */
export type ClickHouseLayout =
  | { readonly cluster: null }
  | {
      /** The cluster's name in the servers' remote_servers. */
      readonly cluster: string;
      /** The database the tables are in on every node (CLICKHOUSE_DATABASE), named in the Distributed table. */
      readonly database: string;
    };

export const SINGLE_SERVER: ClickHouseLayout = Object.freeze({ cluster: null });

/** Same rule as the CLICKHOUSE_CLUSTER and CLICKHOUSE_DATABASE patterns: a plain identifier, printed as is into DDL. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function clickhouseLayout(cluster: string | undefined | null, database = 'default'): ClickHouseLayout {
  if (cluster === undefined || cluster === null || cluster === '') return SINGLE_SERVER;
  if (!IDENTIFIER.test(cluster)) throw new Error(`CLICKHOUSE_CLUSTER must be a plain identifier, got ${JSON.stringify(cluster)}`);
  if (!IDENTIFIER.test(database)) throw new Error(`CLICKHOUSE_DATABASE must be a plain identifier, got ${JSON.stringify(database)}`);
  return Object.freeze({ cluster, database });
}

/** A table sharded over the cluster: its per-shard table and how rows are placed. */
export interface ShardedTable {
  /** The ReplicatedReplacingMergeTree each shard holds; the Distributed table keeps the plain name. */
  local: string;
  shardingKey: string;
}

/** The tables sharded in cluster mode; every other table is replicated to every node. */
export const SHARDED_TABLES: Readonly<Record<string, ShardedTable>> = Object.freeze({
  events: { local: 'sharded_events', shardingKey: 'sipHash64(distinct_id)' },
});

/** The Distributed tables of cluster mode (what a query reads across shards). */
export const DISTRIBUTED_TABLES: readonly string[] = Object.keys(SHARDED_TABLES);

export const isDistributed = (layout: ClickHouseLayout): boolean => layout.cluster !== null;

/** ` ON CLUSTER name` for DDL in cluster mode, '' on one server. */
export const onClusterClause = (layout: ClickHouseLayout): string => (layout.cluster === null ? '' : ` ON CLUSTER ${layout.cluster}`);

/**
 * `GLOBAL ` before a JOIN or IN whose right side reads a distributed table, in cluster mode.
 * A query over a Distributed table runs on every shard; a JOIN or IN subquery in it runs there
 * too, and over a distributed table it would be sent to every shard again from every shard
 * (ClickHouse refuses that by default, distributed_product_mode = deny). GLOBAL runs it once,
 * on the node that received the query, and ships the result to the shards. Right sides that read
 * only replicated tables stay local: every node has all their rows.
 */
export const globalPrefix = (layout: ClickHouseLayout): string => (isDistributed(layout) ? 'GLOBAL ' : '');

/**
 * What an `ALTER TABLE … DELETE` (a mutation) names for `table`: a sharded table's per-shard
 * table on every shard; a replicated table as is (ClickHouse replicates its mutation to every
 * replica through Keeper).
 */
export function mutationTarget(layout: ClickHouseLayout, table: string): { table: string; clause: string } {
  const sharded = SHARDED_TABLES[table];
  if (layout.cluster === null || !sharded) return { table, clause: table };
  return { table: sharded.local, clause: `${sharded.local}${onClusterClause(layout)}` };
}

/** Where running mutations are listed: this server's system.mutations, or every replica's. */
export const mutationsSource = (layout: ClickHouseLayout): string =>
  layout.cluster === null ? 'system.mutations' : `clusterAllReplicas(${layout.cluster}, system.mutations)`;

/**
 * Settings every request of a cluster-mode client carries. distributed_foreground_insert: an
 * insert into a Distributed table is answered once every shard wrote its rows (the default
 * spools them on the receiving node and answers at once, so an acknowledged batch could still be
 * lost with that node). The Distributed table forwards the request's settings, the insert's
 * insert_deduplication_token included, to each shard's insert (ClickHouse's
 * src/Storages/Distributed/DistributedSink.cpp): a retried batch splits into the same rows per
 * shard under the same token, and each shard skips what it already has.
 */
export const clusterClientSettings = (layout: ClickHouseLayout): Record<string, number> =>
  layout.cluster === null ? {} : { distributed_foreground_insert: 1 };
