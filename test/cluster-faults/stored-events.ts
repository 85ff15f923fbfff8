/**
 * Reading back what the cluster stored, by uuid: the acknowledged uuids go into a table of the
 * test's ClickHouse database, and one query per check counts, per phase, how many of them the
 * events table holds, and how many rows beyond one each (as queries see them, FINAL, and as
 * written, replays included).
 */
import type { ClickHouseClient } from '@sightline/clickhouse';

export interface StoredCounts {
  acked: number;
  stored: number;
  /** Rows beyond one per uuid that queries see (FINAL): must be 0. */
  duplicates: number;
  /** Rows beyond one per uuid as written (a replayed batch, a retried capture): collapsed by FINAL. */
  replayedRows: number;
}

export class StoredEvents {
  private recorded = new Set<string>();

  constructor(private readonly ch: ClickHouseClient) {}

  async init(): Promise<void> {
    await this.ch.command({ query: 'CREATE TABLE IF NOT EXISTS acked_events (uuid UUID, phase String) ENGINE = MergeTree ORDER BY uuid' });
  }

  /** Adds the acknowledged uuids not recorded yet. */
  async record(acked: ReadonlyMap<string, string>): Promise<void> {
    const rows = [...acked].filter(([uuid]) => !this.recorded.has(uuid)).map(([uuid, phase]) => ({ uuid, phase }));
    for (let i = 0; i < rows.length; i += 20_000) {
      await this.ch.insert({ table: 'acked_events', values: rows.slice(i, i + 20_000), format: 'JSONEachRow' });
    }
    for (const { uuid } of rows) this.recorded.add(uuid);
  }

  /** Acknowledged events (of phases other than `live`) not in the events table yet: a cheap poll. */
  async missing(live: string): Promise<number> {
    const [row] = await (
      await this.ch.query({
        query: `SELECT count() AS c FROM acked_events WHERE phase != {live:String} AND uuid NOT IN (SELECT uuid FROM events WHERE team_id = 1)`,
        query_params: { live },
        format: 'JSONEachRow',
      })
    ).json<{ c: string }>();
    return Number(row!.c);
  }

  /** Acknowledged, stored and duplicated events of one phase ('*': all of them). */
  async countsOf(phase: string): Promise<StoredCounts> {
    const acked = phase === '*' ? 'SELECT uuid FROM acked_events' : 'SELECT uuid FROM acked_events WHERE phase = {phase:String}';
    const perUuid = (final: string) => `SELECT uuid, count() AS c FROM events ${final} WHERE team_id = 1 AND uuid IN (${acked}) GROUP BY uuid`;
    const [row] = await (
      await this.ch.query({
        query: `SELECT (SELECT count() FROM (${acked})) AS acked,
                       (SELECT count() FROM (${perUuid('FINAL')})) AS stored,
                       (SELECT sum(c - 1) FROM (${perUuid('FINAL')})) AS duplicates,
                       (SELECT sum(c - 1) FROM (${perUuid('')})) AS replayed`,
        query_params: { phase },
        format: 'JSONEachRow',
      })
    ).json<{ acked: string; stored: string; duplicates: string; replayed: string }>();
    return { acked: Number(row!.acked), stored: Number(row!.stored), duplicates: Number(row!.duplicates), replayedRows: Number(row!.replayed) };
  }
}
