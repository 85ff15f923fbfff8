import * as ingestion from '@sightline/ingestion';
import * as jsonInput from '@sightline/json-input';
import * as normalize from './normalize.step';
import type { PreparedEvent } from './normalize.step';

// Bound once: run through tsx (as the worker is), each use of an imported name is a call to a
// getter of the module's exports (two for a package's re-export), a few per event here.
const { busTimeOfBytes, BUS_FORMAT_VERSION, FORMAT2_HEADER_BYTES, holdsNoUnicodeEscape, readFormat2Layout } = ingestion;
const { isJsonObject } = jsonInput;
const { ipMemberOf, MAX_EVENT_NAME_LENGTH } = normalize;

const { HAS_TEAM, HAS_IP, HISTORICAL, ASCII_STRINGS, TOP_LEVEL_UPDATES } = ingestion.FORMAT2_FLAGS;
/** The flags of the common case: the project known, every plain string ASCII, no top-level `$set`. */
const COMMON_MASK = HAS_TEAM | ASCII_STRINGS | TOP_LEVEL_UPDATES;
const COMMON = HAS_TEAM | ASCII_STRINGS;

/** One layout for every call (synchronous). */
const layout = ingestion.newFormat2Layout();

/**
 * parseStep, the team step and normalizeStep in one, for a bus format 2 message in the common
 * case: the PreparedEvent they would make together, built straight from the bytes, without the
 * IngestMessage, the decoded value, the step results, or the strings the worker never reads
 * (token, sent_at, the times' text). null for anything else, which then takes those steps:
 * another format, no team id, non-ASCII plain strings, a top-level `$set`/`$set_once`, a NUL
 * in the distinct id or event name, a name over 200 characters, a `\u` escape in the JSON (a
 * string to clean, perhaps), times not in toISOString's shape, properties that are not a JSON
 * object (or not JSON), `$groups`, `$elements` or `$elements_chain` in them.
 * prepare-format2.step.test runs a corpus through both and compares what they make.
 */
export function prepareCommonFormat2(value: Buffer): PreparedEvent | null {
  if (value[0] !== BUS_FORMAT_VERSION) return null;
  try {
    readFormat2Layout(value, layout);
  } catch {
    return null;
  }
  const flags = layout.flags;
  if ((flags & COMMON_MASK) !== COMMON) return null;
  const { uuidEnd, distinctIdEnd, ipEnd, nowEnd, tokenEnd, eventEnd, timestampEnd, propertiesStart } = layout;
  if (eventEnd - tokenEnd > MAX_EVENT_NAME_LENGTH) return null;
  // A NUL anywhere up to the event name's end (ASCII strings hold no surrogates); the JSON after
  // it holds none (JSON writes it as an escape, which the search below finds).
  const nul = value.indexOf(0, uuidEnd);
  if (nul !== -1 && nul < eventEnd) return null;
  const timestampMs = busTimeOfBytes(value, eventEnd, timestampEnd);
  const createdAtMs = busTimeOfBytes(value, ipEnd, nowEnd);
  if (timestampMs === undefined || createdAtMs === undefined) return null;
  if (!holdsNoUnicodeEscape(value, timestampEnd)) return null;
  let properties: unknown;
  try {
    properties = JSON.parse(value.toString('utf8', propertiesStart));
  } catch {
    return null;
  }
  if (!isJsonObject(properties)) return null;
  if (properties['$groups'] !== undefined || properties['$elements_chain'] !== undefined || properties['$elements'] !== undefined) return null;
  let lastMember: string | null = null;
  const historical = (flags & HISTORICAL) !== 0;
  if (flags & HAS_IP && ipEnd > distinctIdEnd && !historical && properties['$ip'] === undefined) {
    const ip = value.toString('latin1', distinctIdEnd, ipEnd);
    properties['$ip'] = ip;
    lastMember = ipMemberOf(ip);
  }
  return {
    uuid: value.toString('latin1', FORMAT2_HEADER_BYTES, uuidEnd),
    teamId: layout.teamId,
    distinctId: value.toString('latin1', uuidEnd, distinctIdEnd),
    event: value.toString('latin1', tokenEnd, eventEnd),
    properties,
    propertiesBytes: { bytes: value, start: propertiesStart, lastMember },
    timestampMs,
    createdAtMs,
    processPerson: properties['$process_person_profile'] !== false,
    historical,
    elementsChain: '',
  };
}
