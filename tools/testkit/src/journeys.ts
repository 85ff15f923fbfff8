import { createHash } from 'node:crypto';
import { insertEvents, type ClickHouseClient } from '@sightline/clickhouse';
import type { Sql } from '@sightline/postgres';
import { testEventRow } from './event-rows';
import { createTestPerson, type TestPerson } from './person-rows';

/**
 * Test data in the shape PostHog's query-runner tests write it (`journeys_for` in
 * posthog/test/base.py): events by person, each person created with its properties, so a case
 * ported from a PostHog test reads like the original.
 */
export interface JourneyEvent {
  event: string;
  /** An ISO date-time (`2021-05-01 00:00:00` or `2021-05-01T00:00:00Z`), read as UTC when it has no offset. */
  timestamp: string;
  properties?: Record<string, unknown>;
  /** The person properties frozen on the event (default: the person's own). */
  personProperties?: Record<string, unknown>;
  /** Group properties by group type index. */
  groupProperties?: Record<number, Record<string, unknown>>;
  /** The distinct id sending the event (default: the person's key). */
  distinctId?: string;
  elementsChain?: string;
}

export interface JourneyPeople {
  [person: string]: JourneyEvent[];
}

export interface JourneyOptions {
  teamId?: number;
  /** Properties of each person (by journey key); persons without an entry have none. */
  personProperties?: Record<string, Record<string, unknown>>;
  /** Extra distinct ids of a person (its key is always one). */
  distinctIds?: Record<string, string[]>;
  /** Write the persons to PostgreSQL and ClickHouse's person tables too (default true). */
  createPeople?: boolean;
  /** When each person was created (by journey key, an ISO date-time as `timestamp`); default createTestPerson's. */
  personCreatedAt?: Record<string, string>;
}

/** A stable person uuid for a journey key, so tests can name a person's id. */
export function journeyPersonUuid(person: string, teamId = 1): string {
  const hex = createHash('sha256').update(`${teamId}:${person}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function journeyTimeMs(timestamp: string): number {
  const text = timestamp.includes('T') ? timestamp : timestamp.replace(' ', 'T');
  const withZone = /([zZ]|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text.length === 10 ? `${text}T00:00:00` : text}Z`;
  const ms = Date.parse(withZone);
  if (!Number.isFinite(ms)) throw new Error(`journey timestamp ${JSON.stringify(timestamp)} is not a date-time`);
  return ms;
}

/** Writes the journeys' persons and events; answers each journey key's person. */
export async function insertJourneys(
  stores: { db: Sql; ch: ClickHouseClient },
  people: JourneyPeople,
  options: JourneyOptions = {},
): Promise<Record<string, TestPerson>> {
  const teamId = options.teamId ?? 1;
  const persons: Record<string, TestPerson> = {};
  for (const key of Object.keys(people)) {
    const uuid = journeyPersonUuid(key, teamId);
    const distinctIds = [key, ...(options.distinctIds?.[key] ?? [])];
    persons[key] =
      options.createPeople === false
        ? { id: 0, uuid }
        : await createTestPerson(stores, {
            teamId,
            uuid,
            distinctIds,
            properties: options.personProperties?.[key] ?? {},
            ...(options.personCreatedAt?.[key]
              ? { createdAt: new Date(journeyTimeMs(options.personCreatedAt[key])).toISOString().slice(0, 19).replace('T', ' ') }
              : {}),
          });
  }
  const rows = Object.entries(people).flatMap(([key, events]) =>
    events.map((e) =>
      testEventRow({
        event: e.event,
        atMs: journeyTimeMs(e.timestamp),
        teamId,
        distinctId: e.distinctId ?? key,
        personId: persons[key]!.uuid,
        properties: e.properties ?? {},
        personProperties: e.personProperties ?? options.personProperties?.[key] ?? {},
        groupProperties: e.groupProperties,
        elementsChain: e.elementsChain,
      }),
    ),
  );
  if (rows.length > 0) await insertEvents(stores.ch, rows);
  return persons;
}
