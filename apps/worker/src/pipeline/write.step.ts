import { hash } from 'node:crypto';
import { insertEventValues, type ClickHouseClient } from '@sightline/clickhouse';
import { writeCopies, type GroupCopy, type PersonBatchCopies, type WrittenCopies } from '@sightline/persons';
import { isClickHouseOutage } from './dependency-errors';
import { toEventValues } from './event-row';
import type { PreparedEvent } from './normalize.step';
import type { Enrichment } from './persons.step';
import { runStep } from './step-result';

/**
 * The run's events as one ClickHouse insert, beside the person and group copies the persons
 * step produced. The insert carries a deduplication token made from each event's project and
 * uuid: an insert retried after its answer was lost is skipped by ClickHouse instead of written
 * twice, while the same uuids sent to another project (one export imported into staging and then
 * production) make another token and are stored there too. Person and distinct-id copies this
 * process already wrote at the same version are left out.
 */
export async function writeStep(
  ch: ClickHouseClient,
  events: readonly PreparedEvent[],
  enrichments: readonly Enrichment[],
  copies: Partial<PersonBatchCopies> & { groups?: GroupCopy[] },
  writtenCopies?: WrittenCopies,
): Promise<void> {
  const deduplicationToken = deduplicationTokenOf(events);
  const personCopies = { persons: copies.persons ?? [], distinctIds: copies.distinctIds ?? [] };
  const unwritten = writtenCopies ? writtenCopies.unwritten(personCopies) : personCopies;
  await runStep('write', isClickHouseOutage, () =>
    Promise.all([
      writeCopies(ch, { ...unwritten, groups: copies.groups }),
      insertEventValues(ch, events, (event, i) => toEventValues(event, enrichments[i]!), { deduplicationToken }),
    ]),
  );
  writtenCopies?.record(unwritten);
}

/** ClickHouse skips an insert whose token it saw among its last blocks, so the token names each row's project too. */
export function deduplicationTokenOf(events: readonly Pick<PreparedEvent, 'teamId' | 'uuid'>[]): string {
  // The same bytes as one "team:uuid," per event, hashed in one native call rather than one per event.
  let text = '';
  for (const event of events) text += `${event.teamId}:${event.uuid},`;
  return hash('sha1', text, 'hex');
}
