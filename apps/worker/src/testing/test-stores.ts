import { bootstrapInstance } from '@sightline/accounts';
import { createAnalyticsStore, migrateClickHouse, type ClickHouseClient } from '@sightline/clickhouse';
import { normalizeEvent, type RawEvent } from '@sightline/ingestion';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestClickHouseDatabase, createTestPostgresDatabase } from '@sightline/testkit';

/** Fresh, migrated PostgreSQL and ClickHouse databases with the project of `projectApiKey` (team 1). */
export interface WorkerTestStores {
  db: MetadataStore;
  ch: ClickHouseClient;
  /** Where the databases really are (the clients may go through `via`). */
  postgresUrl: string;
  clickhouseUrl: string;
  clickhouseDatabase: string;
  /** Closes the clients and drops the databases. */
  close(): Promise<void>;
}

export async function createWorkerTestStores(
  prefix: string,
  projectApiKey: string,
  via: { postgresUrl?: (real: URL) => string; clickhouseUrl?: (real: URL) => string } = {},
): Promise<WorkerTestStores> {
  const pg = await createTestPostgresDatabase(prefix);
  const chDb = await createTestClickHouseDatabase(prefix);
  const db = await createMetadataStore({ url: via.postgresUrl?.(new URL(pg.url)) ?? pg.url });
  await migratePostgres(db);
  await bootstrapInstance(db, { projectApiKey });
  const ch = createAnalyticsStore({ url: via.clickhouseUrl?.(new URL(chDb.url)) ?? chDb.url, user: 'default', password: '', database: chDb.database });
  await migrateClickHouse(ch);
  return {
    db,
    ch,
    postgresUrl: pg.url,
    clickhouseUrl: chDb.url,
    clickhouseDatabase: chDb.database,
    async close() {
      await ch.close();
      await db.close();
      await chDb.drop();
      await pg.drop();
    },
  };
}

/** A bus message as the gateway would produce it for team 1. */
export function busMessage(
  raw: RawEvent,
  options: { token: string; teamId?: number | null; nowMs?: number; ip?: string | null; historicalMigration?: boolean },
): { key: string; value: string; uuid: string } {
  const r = normalizeEvent(raw, {
    token: options.token,
    teamId: options.teamId === undefined ? 1 : options.teamId,
    nowMs: options.nowMs ?? Date.now(),
    sentAt: null,
    ip: options.ip ?? null,
    historicalMigration: options.historicalMigration ?? false,
  });
  if (!r.ok) throw new Error(r.reason);
  return { key: r.key, value: JSON.stringify(r.message), uuid: r.message.uuid };
}
