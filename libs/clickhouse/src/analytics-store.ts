import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { ClickHouseLogLevel, createClient, parseError, type ClickHouseClient } from '@clickhouse/client';
import { clusterClientSettings, SINGLE_SERVER, type ClickHouseLayout } from './cluster/layout';
import { restoreCrashSignalDefaults } from './crash-signals';
import { EMBEDDED_STORE_PRIORITY, UNBOUNDED_QUERY_SETTINGS } from './query-limits';
import { withSettingsClause } from './settings-clause';
import { createEngineSessionQueue, DRAIN_SQL } from './engine-session-queue';

export type { ClickHouseClient };

/**
 * The client's own log is off: every caller receives the error and answers or logs it itself,
 * where the client also printed each refused query (an analyst's bad HogQL, a limit that fired)
 * as an ERROR with its stack.
 */
const CLIENT_LOG = { level: ClickHouseLogLevel.OFF };

/** A text-format insert handed to the in-process engine as it is, settings in its SETTINGS clause. */
export type InProcessInsert = (insert: { table: string; format: 'JSONEachRow'; body: Buffer; settings: Record<string, string | number> }) => Promise<void>;

/** Clients over the in-process chdb engine, with their raw insert. */
const inProcessStores = new WeakMap<ClickHouseClient, InProcessInsert>();

/** Whether the client talks to the in-process engine (binary insert formats need the HTTP interface). */
export const isInProcessStore = (client: ClickHouseClient): boolean => inProcessStores.has(client);

/** The in-process engine's raw insert of the client; undefined over HTTP. */
export const inProcessInsertOf = (client: ClickHouseClient): InProcessInsert | undefined => inProcessStores.get(client);

/**
 * Marks `derived` (a client made over `client`, such as a read-limited proxy) as talking to the
 * same engine, so inserts through it pick the same body format: over the in-process engine a
 * RowBinary body would reach chdb as text and be refused.
 */
export function sameEngineAs(derived: ClickHouseClient, client: ClickHouseClient): void {
  const insert = inProcessStores.get(client);
  if (insert) inProcessStores.set(derived, insert);
}

/**
 * What every statement on the in-process engine runs with. Settings are SET on the engine's one
 * session and outlast their query: a request's limits and tag (queryClickhouse) are lifted again
 * by the next query of anyone else.
 */
const IN_PROCESS_SETTINGS = {
  date_time_input_format: 'best_effort',
  ...UNBOUNDED_QUERY_SETTINGS,
  priority: String(EMBEDDED_STORE_PRIORITY),
  log_comment: '',
} as const;

/** The same as a raw insert's SETTINGS clause takes them (every one is a number or a text). */
const IN_PROCESS_INSERT_SETTINGS: Record<string, string | number> = Object.fromEntries(
  Object.entries(IN_PROCESS_SETTINGS).filter((entry): entry is [string, string | number] => typeof entry[1] === 'string' || typeof entry[1] === 'number'),
);

export interface AnalyticsStoreConfig {
  /** ClickHouse HTTP interface; when absent, the in-process chdb engine under dataDir is used. */
  url?: string;
  user: string;
  password: string;
  database: string;
  dataDir?: string;
  /** One server, or a cluster of shards and replicas (cluster/layout.ts); a cluster needs `url`. */
  layout?: ClickHouseLayout;
}

/**
 * The analytics store adapter factory: the same @clickhouse/client, either over HTTP or over
 * chdb's in-process connection. Everything above this speaks the same SQL to both.
 */
export function createAnalyticsStore(config: AnalyticsStoreConfig): ClickHouseClient {
  const layout = config.layout ?? SINGLE_SERVER;
  if (layout.cluster !== null && !config.url) {
    throw new Error(`CLICKHOUSE_CLUSTER=${layout.cluster} needs CLICKHOUSE_URL: the in-process engine is one server`);
  }
  if (config.url) {
    return createClient({
      url: config.url,
      username: config.user,
      password: config.password,
      database: config.database,
      request_timeout: 60_000,
      log: CLIENT_LOG,
      // A busy event loop can hand out a keep-alive socket the server already closed (EPIPE,
      // ECONNRESET): the batch then fails and is retried after a backoff. Dropped before use instead.
      keep_alive: { eagerly_destroy_stale_sockets: true },
      clickhouse_settings: {
        // Inserts are acknowledged only once written: no fire-and-forget async inserts.
        async_insert: 0,
        date_time_input_format: 'best_effort',
        ...clusterClientSettings(layout),
      },
    });
  }
  if (!config.dataDir) throw new Error('analytics store: either CLICKHOUSE_URL or a data directory is required');
  const path = join(config.dataDir, 'clickhouse');
  mkdirSync(path, { recursive: true });
  // Loaded lazily so a distributed process never loads the native engine.
  // (typed by hand: chdb's subpath types need a newer moduleResolution than our CommonJS build)
  const { createChdbConnection } = require('chdb/connection') as {
    createChdbConnection: (options: { path: string }) => ChdbConnection;
  };
  const connection = createChdbConnection({ path });
  // The engine's session installed its crash handlers just now (see restoreCrashSignalDefaults).
  restoreCrashSignalDefaults();
  queueEveryStatement(connection);
  // Reads carry their settings in a clause of their own where they can (settings-clause.ts):
  // they then leave the session's settings as the last SET made them, which every other
  // statement (inserts, commands) still sends whole, and each read gives all of its own.
  const query = connection.query.bind(connection);
  connection.query = (params) => {
    const sql = withSettingsClause(params.query, params.clickhouse_settings);
    return query(sql === null ? params : { ...params, query: sql, clickhouse_settings: undefined });
  };
  const client = createClient({ connection, log: CLIENT_LOG, clickhouse_settings: IN_PROCESS_SETTINGS });
  inProcessStores.set(client, rawInsertOf(connection.chdb));
  return client;
}

type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;
/** chdb's connection with its `.chdb` extension (typed by hand, as createChdbConnection). */
type ChdbConnection = ClientConnection & {
  chdb: {
    rawInsert(params: { table: string; format: string; values: Buffer; settings: Record<string, string | number> }): Promise<unknown>;
    queryAsync(sql: string, options: { format: string }): Promise<{ bytes(): Buffer }>;
  };
};
type ChdbRawInserter = Pick<ChdbConnection['chdb'], 'rawInsert'>;

/**
 * Every statement the connection runs goes through one queue, which reads out what a failed one
 * left behind before the next runs (engine-session-queue.ts: otherwise a failed read's partial
 * rows would lead the next read's answer, maybe another project's).
 */
function queueEveryStatement(connection: ChdbConnection): void {
  const { chdb } = connection;
  const queryAsync = chdb.queryAsync.bind(chdb);
  const queue = createEngineSessionQueue(async () => (await queryAsync(DRAIN_SQL, { format: 'TabSeparated' })).bytes().toString('utf8'));
  const queued = <K extends 'query' | 'exec' | 'command' | 'insert'>(name: K) => {
    const run = connection[name].bind(connection) as (params: unknown) => Promise<unknown>;
    (connection as Record<K, unknown>)[name] = (params: unknown) => queue.run(() => run(params));
  };
  queued('query');
  queued('exec');
  queued('command');
  queued('insert');
  const ping = connection.ping.bind(connection);
  // Readiness: a session given up on answers ping as failed.
  connection.ping = (params) => queue.run(() => ping(params)).catch((error: unknown) => ({ success: false as const, error: error as Error }));
  const rawInsert = chdb.rawInsert.bind(chdb);
  chdb.rawInsert = (params) => queue.run(() => rawInsert(params));
  chdb.queryAsync = (sql, options) => queue.run(() => queryAsync(sql, options));
  // Closing the session under a running statement is not survivable for the engine.
  const close = connection.close.bind(connection);
  connection.close = async () => {
    await queue.idle();
    await close();
  };
}

/**
 * Inserts through chdb's raw insert rather than the client's `exec`. The client's path sends each
 * insert as one multi-statement text, `SET …; SET …; INSERT … FORMAT JSONEachRow` followed by the
 * body, the client's eleven settings first: the engine pays for that text per statement, and the
 * body is copied into it twice. The raw insert hands the body over as it is, behind
 * `INSERT INTO t SETTINGS … FORMAT …`: the same settings, for this statement only. Its errors
 * are the client's (ClickHouseError with the server's code), as the worker tells data errors
 * from outages by that code.
 */
function rawInsertOf(chdb: ChdbRawInserter): InProcessInsert {
  return async ({ table, format, body, settings }) => {
    try {
      await chdb.rawInsert({ table, format, values: body, settings: { ...IN_PROCESS_INSERT_SETTINGS, ...settings } });
    } catch (error) {
      throw parseError(error instanceof Error && error.message ? error.message : String(error));
    }
  };
}
