import { createHash } from 'node:crypto';
import { insertEventsOf, type ClickHouseClient } from '@sightline/clickhouse';
import { writeCopies, type GroupCopy, type PersonBatchCopies, type WrittenCopies } from '@sightline/persons';
import { isClickHouseOutage } from './dependency-errors';
import { toEventRow } from './event-row';
import type { PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';
import { runStep } from './step-result';

/**
 * The run's events as one ClickHouse insert, beside the person and group copies the persons
 * step produced. The insert carries a deduplication token made from its uuids: an insert retried
 * after its answer was lost is skipped by ClickHouse instead of written twice. Person and
 * distinct-id copies this process already wrote at the same version are left out.
 */
export async function writeStep(
  ch: ClickHouseClient,
  events: readonly PreparedEvent[],
  enrichments: readonly Enrichment[],
  copies: Partial<PersonBatchCopies> & { groups?: GroupCopy[] },
  writtenCopies?: WrittenCopies,
): Promise<void> {
  const deduplicationToken = createHash('sha1')
    .update(events.map((e) => e.uuid).join(','))
    .digest('hex');
  const personCopies = { persons: copies.persons ?? [], distinctIds: copies.distinctIds ?? [] };
  const unwritten = writtenCopies ? writtenCopies.unwritten(personCopies) : personCopies;
  await runStep('write', isClickHouseOutage, () =>
    Promise.all([
      writeCopies(ch, { ...unwritten, groups: copies.groups }),
      insertEventsOf(ch, events, (event, i) => toEventRow(event, enrichments[i]!), { deduplicationToken }),
    ]),
  );
  writtenCopies?.record(unwritten);
}
