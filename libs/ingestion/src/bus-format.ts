import type { IngestMessage } from './ingest-message';

/**
 * The events topics' message format (docs/data-model.md#bus-messages). Format 1, written now:
 * one version byte (0x01), then the IngestMessage as UTF-8 JSON with the event in `data` as a
 * nested object, so a consumer parses each event once. Format 0, written before: the JSON
 * alone, `data` holding the event's JSON text; JSON never starts with a byte below 0x09, so
 * messages already in a topic (or replayed from the dead letters) still decode.
 */
export const BUS_FORMAT_VERSION = 1;
const FIRST_JSON_BYTE = 0x09;

/** The bus message bytes of an IngestMessage (format 1). */
export function encodeIngestMessage(message: IngestMessage): Buffer {
  const json = JSON.stringify(message);
  const value = Buffer.allocUnsafe(1 + Buffer.byteLength(json, 'utf8'));
  value[0] = BUS_FORMAT_VERSION;
  value.write(json, 1, 'utf8');
  return value;
}

/** The message a bus value holds, unchecked (format 1 or 0); throws on an unknown version or bad JSON (a SyntaxError). */
export function decodeIngestMessage(value: Buffer): unknown {
  const first = value[0];
  if (first === BUS_FORMAT_VERSION) return JSON.parse(value.toString('utf8', 1));
  // Bytes below a tab never start JSON text: they are kept for versions to come.
  if (first !== undefined && first < FIRST_JSON_BYTE) throw new Error(`unknown bus message format ${first}`);
  return JSON.parse(value.toString('utf8'));
}

const BACKSLASH = 0x5c;
const LETTER_U = 0x75;

/**
 * Whether no string of the message a bus value holds (either format, keys included) can contain
 * a NUL or a lone surrogate, found by searching its bytes: JSON writes both only as `\u` escapes
 * (a raw control character is not JSON, and a surrogate's UTF-8 bytes decode as U+FFFD), and in
 * format 0 the inner text's escapes are escaped again, still `\u`. False says only "maybe".
 */
export function holdsNoUnicodeEscape(value: Buffer): boolean {
  // A byte search (memchr) per backslash: most messages hold none, and it is several times
  // faster than searching for the two-byte sequence.
  for (let at = value.indexOf(BACKSLASH); at !== -1; at = value.indexOf(BACKSLASH, at + 1)) if (value[at + 1] === LETTER_U) return false;
  return true;
}
