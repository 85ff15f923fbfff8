import type { IngestMessage } from '@sightline/ingestion';
import { deadLetter, ok, type StepResult } from './step-result';

const REQUIRED_STRINGS = ['uuid', 'distinct_id', 'data', 'now', 'token', 'event', 'timestamp'] as const;

/** Parses a bus message; anything that is not an IngestMessage can never succeed (dead letter). */
export function parseStep(value: Buffer): StepResult<IngestMessage> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch (error) {
    return deadLetter(`value is not JSON: ${(error as Error).message}`);
  }
  return checkIngestMessage(parsed);
}

/**
 * Checks a decoded message: what parseStep does once the JSON is parsed. The in-process bus
 * hands the gateway's IngestMessage over undecoded, and it is checked the same way.
 */
export function checkIngestMessage(parsed: unknown): StepResult<IngestMessage> {
  const m = parsed as Partial<IngestMessage>;
  for (const field of REQUIRED_STRINGS) {
    if (typeof m?.[field] !== 'string') return deadLetter(`field ${field} is missing or not a string`);
  }
  if (Number.isNaN(Date.parse(m.timestamp!))) return deadLetter('timestamp is not a date');
  return ok(m as IngestMessage);
}
