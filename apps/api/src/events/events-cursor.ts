import type { EventsCursor } from '@sightline/insights';
import { UUID_PATTERN } from '@sightline/json-input';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?$/;

/** The opaque `cursor` of a `next` link: where the page ended, base64url JSON. */
export function encodeEventsCursor(cursor: EventsCursor): string {
  return Buffer.from(JSON.stringify([cursor.timestamp, cursor.uuid])).toString('base64url');
}

/** The cursor back, or null when the text is not one this server wrote. */
export function decodeEventsCursor(text: string): EventsCursor | null {
  if (text.length > 200) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 2) return null;
  const [timestamp, uuid] = value as unknown[];
  if (typeof timestamp !== 'string' || !TIMESTAMP.test(timestamp) || typeof uuid !== 'string' || !UUID_PATTERN.test(uuid)) return null;
  return { timestamp, uuid };
}
