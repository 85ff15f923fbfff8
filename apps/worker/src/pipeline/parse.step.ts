import { decodeBusValue, parseBusTime, type DecodedBusValue, type IngestMessage } from '@sightline/ingestion';
import type { SentText } from './normalize.step';
import { deadLetter, ok, type StepResult } from './step-result';

/** The field that is missing or not a string, in the order they are checked; null when all are strings. */
function missingString(m: Partial<IngestMessage>): string | null {
  // Spelled out rather than looped over names: one property read each, no keyed lookups per message.
  if (typeof m.uuid !== 'string') return 'uuid';
  if (typeof m.distinct_id !== 'string') return 'distinct_id';
  // an object (bus format 1) or its JSON text (format 0), checked when it is normalised
  if (typeof m.data !== 'string' && (typeof m.data !== 'object' || m.data === null)) return 'data';
  if (typeof m.now !== 'string') return 'now';
  if (typeof m.token !== 'string') return 'token';
  if (typeof m.event !== 'string') return 'event';
  if (typeof m.timestamp !== 'string') return 'timestamp';
  return null;
}

/** A bus message as read: the checked message and what its bytes tell normalisation (see normalizeStep). */
export interface BusReading extends SentText {
  message: IngestMessage;
  /** No string of `message.data` holds a NUL or a lone surrogate. */
  knownClean: boolean;
}

/** Decodes a bus message (any format); anything that is not an IngestMessage can never succeed (dead letter). */
export function parseStep(value: Buffer): StepResult<BusReading> {
  let decoded: DecodedBusValue;
  try {
    decoded = decodeBusValue(value);
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'value is not JSON' : 'value is not a bus message';
    return deadLetter(`${reason}: ${(error as Error).message}`);
  }
  const m = asMessage(decoded.message);
  const missing = missingString(m);
  if (missing !== null) return deadLetter(`field ${missing} is missing or not a string`);
  // Format 2 read it from its bytes already.
  const timestampMs = decoded.timestampMs ?? parseBusTime(m.timestamp!);
  if (Number.isNaN(timestampMs)) return deadLetter(NOT_A_DATE);
  return ok({
    message: m as IngestMessage,
    bytes: decoded.propertiesStart === -1 ? null : value,
    propertiesStart: decoded.propertiesStart,
    knownClean: decoded.jsonClean,
    // Format 2 writes them as plain strings, outside the JSON the byte search covers.
    namesKnownClean: decoded.jsonClean && decoded.format !== 2,
    timestampMs,
    nowMs: decoded.nowMs ?? undefined,
  });
}

const NOT_A_DATE = 'timestamp is not a date';
const asMessage = (parsed: unknown) => (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Partial<IngestMessage>;

/**
 * Checks a decoded message: what parseStep does once the JSON is parsed. The in-process bus
 * hands the gateway's IngestMessage over undecoded, and it is checked the same way.
 */
export function checkIngestMessage(parsed: unknown): StepResult<IngestMessage> {
  const m = asMessage(parsed);
  const missing = missingString(m);
  if (missing !== null) return deadLetter(`field ${missing} is missing or not a string`);
  if (Number.isNaN(parseBusTime(m.timestamp!))) return deadLetter(NOT_A_DATE);
  return ok(m as IngestMessage);
}

/** A message the in-process bus handed over (the gateway's object): checked as parseStep checks; nothing is known clean. */
export function checkHandedOver(decoded: unknown): StepResult<BusReading> {
  const checked = checkIngestMessage(decoded);
  if (checked.kind !== 'ok') return checked;
  return ok({ message: checked.value, bytes: null, propertiesStart: -1, knownClean: false, namesKnownClean: false });
}
