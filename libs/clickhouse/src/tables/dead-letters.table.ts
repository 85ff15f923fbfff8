import type { ClickHouseClient } from '@clickhouse/client';

export const DEAD_LETTERS_TABLE = 'dead_letters';

export interface DeadLetterRow {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
  error: string;
}

export async function insertDeadLetters(client: ClickHouseClient, rows: readonly DeadLetterRow[]): Promise<void> {
  if (rows.length === 0) return;
  await client.insert({ table: DEAD_LETTERS_TABLE, values: rows as DeadLetterRow[], format: 'JSONEachRow' });
}
