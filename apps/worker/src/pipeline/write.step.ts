import { createHash } from 'node:crypto';
import { insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import { writeCopies } from '@sightline/persons';
import { isClickHouseOutage } from './dependency-errors';
import { toEventRow } from './event-row';
import type { PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';
import { runStep } from './step-result';

/**
 * The run's events as one ClickHouse insert, beside the person and group copies the persons
 * step produced. The insert carries a deduplication token made from its uuids: an insert retried
 * after its answer was lost is skipped by ClickHouse instead of written twice.
 */
export async function writeStep(
  ch: ClickHouseClient,
  events: readonly PreparedEvent[],
  enrichments: readonly Enrichment[],
  copies: Parameters<typeof writeCopies>[1],
): Promise<void> {
  const rows = events.map((event, i) => toEventRow(event, enrichments[i]!));
  const deduplicationToken = createHash('sha1')
    .update(rows.map((r) => r.uuid).join(','))
    .digest('hex');
  await runStep('write', isClickHouseOutage, () => Promise.all([writeCopies(ch, copies), insertEvents(ch, rows, { deduplicationToken })]));
}
