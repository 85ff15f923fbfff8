import type { JsonObjectBytes } from '@sightline/clickhouse';
import { parseBusTime, type IngestMessage } from '@sightline/ingestion';
import { hasLoneSurrogate, isJsonObject, withoutLoneSurrogates } from '@sightline/json-input';
import { elementsChainFromElements } from './elements-chain';
import { deadLetter, ok, type StepResult } from './step-result';

type Properties = Record<string, unknown>;

/** An event ready for person processing and the events row. */
export interface PreparedEvent {
  uuid: string;
  teamId: number;
  distinctId: string;
  event: string;
  properties: Properties;
  /**
   * The properties' JSON text as bytes when it is exactly JSON.stringify(properties) (bus format
   * 2 sends it, and normalisation changed nothing but perhaps appended `$ip`): the insert copies
   * it. null or absent: the insert serialises `properties`.
   */
  propertiesBytes?: JsonObjectBytes | null;
  timestampMs: number;
  createdAtMs: number;
  /** false for `$process_person_profile: false`: no person is created or updated (docs/data-model.md#personless-events). */
  processPerson: boolean;
  /** Sent as a historical migration: person properties are applied by event time (docs/data-model.md#person-properties). */
  historical: boolean;
  elementsChain: string;
}

export const MAX_EVENT_NAME_LENGTH = 200;
const TOP_LEVEL_UPDATES = ['$set', '$set_once'] as const;

/**
 * PostgreSQL's jsonb refuses U+0000 and lone surrogates (half of a UTF-16 pair): an event whose
 * `$set` holds one would fail its whole run and be dead-lettered. NUL characters are stripped from
 * every string, lone surrogates replaced by U+FFFD (docs/data-model.md#event-normalisation).
 */
const cleanText = (text: string) => withoutLoneSurrogates(text.replaceAll('\u0000', ''));
function cleanStrings(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) return value.map(cleanStrings);
  if (isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleanText(k), cleanStrings(v)]));
  return value;
}

/**
 * Whether the JSON text may hold a NUL or a lone surrogate: JSON.stringify writes both as
 * `\u` escapes (a pair of surrogates is written as the character itself). A string that merely
 * contains such text passes too, and is then walked for nothing.
 */
const mayNeedCleaning = (json: string) => json.includes('\\u0000') || json.includes('\\ud');

/**
 * Whether the string holds a NUL or a lone surrogate. Scanned unit by unit: most strings hold
 * neither NULs nor surrogates at all, and the loop answers them faster than a regular expression.
 */
function isUncleanText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0) return true;
    if (code >= 0xd800 && code <= 0xdfff) return hasLoneSurrogate(text);
  }
  return false;
}

/** Whether a string anywhere in the value (keys too) holds a NUL or a lone surrogate. */
function hasUncleanString(value: unknown): boolean {
  if (typeof value === 'string') return isUncleanText(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasUncleanString);
  for (const key in value) if (hasUncleanString(key) || hasUncleanString((value as Properties)[key])) return true;
  return false;
}

/**
 * The `"$ip":…` JSON member for an address, the last one kept: a run's events mostly come from
 * few clients, and one text shared by them all stays alive until the insert instead of one each.
 */
let lastIp = '';
let lastIpMember = '';
export function ipMemberOf(ip: string): string {
  if (ip !== lastIp) {
    lastIpMember = `"$ip":${JSON.stringify(ip)}`;
    lastIp = ip;
  }
  return lastIpMember;
}

/** What the bus message's bytes tell: see normalizeStep. */
export interface SentText {
  /** The message holding the properties' JSON text from `propertiesStart` to its end (bus format 2), else null. */
  bytes: Buffer | null;
  propertiesStart: number;
  /** No NUL or lone surrogate in the distinct id and event name. */
  namesKnownClean: boolean;
  /** parseBusTime of `timestamp` and `now`, when the parse step has them already (each read once per event). */
  timestampMs?: number;
  nowMs?: number;
}

/**
 * The event as ingestion sees it (docs/data-model.md#event-normalisation): top-level `$set`/`$set_once` merged into the
 * properties' (top level wins), `$ip` from the capture request unless given (or the event is a
 * historical migration, whose request comes from the importing machine), NULs stripped,
 * the name truncated to 200 characters.
 */
export function normalizeStep(
  message: IngestMessage,
  teamId: number,
  handedOver = false,
  knownClean = false,
  sent: SentText = { bytes: null, propertiesStart: -1, namesKnownClean: knownClean },
): StepResult<PreparedEvent> {
  let raw: Properties;
  /**
   * Whether the event object is someone else's and is not modified: a message the in-process
   * bus handed over (`handedOver`) is the gateway's, and a retried run normalises it again: its
   * properties are copied (Object.assign: the spread form cost ten times as much under tsx).
   * An object decoded from the message's bytes is this run's own. `knownClean`: the bytes held
   * no `\u` escape (holdsNoUnicodeEscape), so no string of `data` needs cleaning and none is
   * walked; `sent.namesKnownClean` says the same of the distinct id and event name (in bus
   * format 2 they are not JSON, and are checked on their own). `sent.bytes`: the bus message
   * holding the properties' text (format 2), carried while the properties are left as sent.
   */
  let carried = sent.bytes !== null;
  let lastMember: string | null = null;
  let shared = false;
  if (typeof message.data === 'string') {
    // bus format 0: the event's JSON text
    try {
      const parsed: unknown = JSON.parse(message.data);
      if (!isJsonObject(parsed)) return deadLetter('data is not a JSON object');
      raw = !knownClean && mayNeedCleaning(message.data) ? (cleanStrings(parsed) as Properties) : parsed;
    } catch (error) {
      return deadLetter(`data is not JSON: ${(error as Error).message}`);
    }
  } else {
    if (!isJsonObject(message.data)) return deadLetter('data is not a JSON object');
    const clean = knownClean || !hasUncleanString(message.data);
    shared = clean && handedOver;
    raw = clean ? message.data : (cleanStrings(message.data) as Properties);
    if (!clean) carried = false;
  }
  const sentProperties = raw['properties'];
  if (!isJsonObject(sentProperties)) carried = false;
  const properties: Properties = isJsonObject(sentProperties) ? (shared ? Object.assign({}, sentProperties) : sentProperties) : {};
  for (const key of TOP_LEVEL_UPDATES) {
    const topLevel = raw[key];
    if (topLevel !== undefined && isJsonObject(topLevel)) {
      properties[key] = { ...(isJsonObject(properties[key]) ? properties[key] : {}), ...topLevel };
      carried = false;
    }
  }
  if (message.ip && properties['$ip'] === undefined && message.historical_migration !== true) {
    properties['$ip'] = message.ip;
    // A key added last is written last: the text gains it the way JSON.stringify would write it.
    lastMember = ipMemberOf(message.ip);
  }
  // The persons step writes `$group_N` into properties that name `$groups`.
  if (properties['$groups'] !== undefined) carried = false;
  // Autocapture sends either the chain itself or the element list; the list becomes the chain,
  // and both leave the properties (the chain has its own column), as PostHog's ingestion does.
  const sentChain = properties['$elements_chain'];
  const elementsChain = typeof sentChain === 'string' && sentChain !== '' ? sentChain : elementsChainFromElements(properties['$elements']);
  // (only when present: most events have neither, and a delete is not free)
  if (sentChain !== undefined) {
    delete properties['$elements_chain'];
    carried = false;
  }
  if (properties['$elements'] !== undefined) {
    delete properties['$elements'];
    carried = false;
  }
  const namesClean = sent.namesKnownClean;
  const distinctId =
    !namesClean && (message.distinct_id.includes('\u0000') || hasLoneSurrogate(message.distinct_id)) ? cleanText(message.distinct_id) : message.distinct_id;
  return ok({
    uuid: message.uuid,
    teamId,
    distinctId,
    event:
      message.event.length <= MAX_EVENT_NAME_LENGTH && (namesClean || (!message.event.includes('\u0000') && !hasLoneSurrogate(message.event)))
        ? message.event
        : cleanText(message.event.slice(0, MAX_EVENT_NAME_LENGTH)),
    properties,
    propertiesBytes: carried ? { bytes: sent.bytes!, start: sent.propertiesStart, lastMember } : null,
    timestampMs: sent.timestampMs ?? parseBusTime(message.timestamp),
    createdAtMs: sent.nowMs ?? parseBusTime(message.now),
    processPerson: properties['$process_person_profile'] !== false,
    historical: message.historical_migration === true,
    elementsChain,
  });
}
