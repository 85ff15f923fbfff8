/**
 * The worker's floor: what any events pipeline must do with a personless event, and nothing
 * else. Each bus message is decoded (its properties parsed: a pipeline cannot tell what an event
 * asks for without reading them) and its row inserted in RowBinary with the properties' text
 * copied from the message, as the worker does with events it leaves as sent. No team lookup,
 * normalisation, person step, definitions or dead letters; person_id is a fixed uuid (no lookup
 * behind it). The runs of a fetch share one insert, as the worker's do (gatherWhileBusy).
 *
 * `pipelined`: a batch's handler returns once its rows are queued for their insert, not once
 * they are written, so the bus fetches and decodes the next batches while the insert runs: the
 * most any overlap of decode and insert can give on this one JavaScript thread (the worker cannot
 * do it so: a batch is committed only once written). `drained()` resolves once every queued row
 * is written.
 */
import type { ConsumedBatch } from '@sightline/bus';
import { insertEventValues, type ClickHouseClient, type EventValues } from '@sightline/clickhouse';
import { decodeBusValue, type IngestMessage } from '@sightline/ingestion';
import { gatherWhileBusy } from '@sightline/worker';

/** The floor's person_id: a uuid's 16 bytes like any other, with no lookup behind it. */
const FLOOR_PERSON_ID = '00000000-0000-5000-8000-000000000000';

export interface FloorConsumer {
  handle(batch: ConsumedBatch): Promise<void>;
  drained(): Promise<void>;
  /** Inserts made so far. */
  readonly inserts: number;
}

/** The row of a bus message, properties carried as sent (format 2) or serialised (formats 0 and 1). */
export function floorRow(value: Buffer): EventValues {
  const decoded = decodeBusValue(value);
  const m = decoded.message as IngestMessage & { data: { properties: Record<string, unknown> } };
  return {
    uuid: m.uuid,
    event: m.event,
    properties: decoded.propertiesStart === -1 ? m.data.properties : { bytes: value, start: decoded.propertiesStart, lastMember: null },
    timestamp: decoded.timestampMs ?? Date.parse(m.timestamp),
    team_id: 1,
    distinct_id: m.distinct_id,
    elements_chain: '',
    created_at: decoded.nowMs ?? Date.parse(m.now),
    person_id: FLOOR_PERSON_ID,
    person_created_at: null,
    person_properties: '{}',
    person_mode: 'propertyless',
    groups: [],
  };
}

export function createFloorConsumer(ch: ClickHouseClient, options: { maxEvents: number; pipelined: boolean }): FloorConsumer {
  let inserts = 0;
  const write = gatherWhileBusy<EventValues[], void>({
    execute: async (runs) => {
      inserts++;
      await insertEventValues(ch, runs.flat(), (row) => row);
      return runs.map(() => undefined);
    },
    sizeOf: (rows) => rows.length,
    maxSize: options.maxEvents,
    retryAlone: () => false,
  });
  let queued: Promise<void>[] = [];
  return {
    async handle(batch) {
      const written = write(batch.messages.map((m) => floorRow(m.value)));
      if (!options.pipelined) return written;
      queued.push(written);
    },
    async drained() {
      const all = queued;
      queued = [];
      await Promise.all(all);
    },
    get inserts() {
      return inserts;
    },
  };
}
