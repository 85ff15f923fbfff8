import { createTestClickHouseDatabase, type TestClickHouseDatabase } from '@sightline/testkit';
import { createAnalyticsStore, type ClickHouseClient } from './analytics-store';
import { CLICKHOUSE_TIME_ZONES } from './time-zones';

describe('the time zones ClickHouse knows', () => {
  let database: TestClickHouseDatabase;
  let ch: ClickHouseClient;
  beforeAll(async () => {
    database = await createTestClickHouseDatabase('timezones');
    ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
  });
  afterAll(async () => {
    await ch.close();
    await database.drop();
  });

  it('are exactly those of system.time_zones (else: node --import tsx scripts/generate-time-zones.ts)', async () => {
    const rows = await (await ch.query({ query: 'SELECT time_zone FROM system.time_zones', format: 'JSONEachRow' })).json<{ time_zone: string }>();
    expect([...CLICKHOUSE_TIME_ZONES].sort()).toEqual(rows.map((row) => row.time_zone).sort());
  });

  it('leave out the zones Node still accepts that ClickHouse refuses in every query', async () => {
    for (const zone of ['US/Pacific-New', 'SystemV/AST4', 'Canada/East-Saskatchewan']) {
      expect(CLICKHOUSE_TIME_ZONES.has(zone)).toBe(false);
      await expect(ch.query({ query: 'SELECT toDate(now(), {zone:String}) AS d', query_params: { zone }, format: 'JSONEachRow' })).rejects.toThrow(
        /time zone/i,
      );
    }
  });
});
