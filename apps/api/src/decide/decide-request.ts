import { gunzipSync } from 'node:zlib';
import { errors } from '@sightline/http';
import { exceedsDepth, isJsonObject } from '@sightline/json-input';

/** What a /decide or /flags request asks for (docs/http-api.md#decide-request), with PostHog's field aliases. */
export interface FlagRequest {
  token: string | null;
  distinctId: string;
  anonDistinctId: string | null;
  deviceId: string | null;
  personProperties: Record<string, unknown>;
  groups: Record<string, unknown>;
  groupProperties: Record<string, Record<string, unknown>>;
  flagKeys: string[] | null;
  geoipDisable: boolean;
  disableFlags: boolean;
}

/** The body limit PostHog applies to single-request routes. */
export const MAX_FLAGS_BODY_BYTES = 2 * 1024 * 1024;

const GZIP_MAGIC = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function fromBase64(text: string): string {
  const cleaned = text.replace(/\s/g, '');
  return Buffer.from(cleaned + '='.repeat((4 - (cleaned.length % 4)) % 4), 'base64').toString('utf8');
}

/**
 * Decodes a flags body (PostHog: rust/feature-flags/src/handler/decoding.rs): gzip (Content-Encoding is inflated by
 * the body reader; `?compression=gzip|gzip-js` or the magic bytes here), form
 * `data=<base64>` (posthog-js `?compression=base64`), plain JSON, or bare base64 JSON.
 */
export function decodeFlagsBody(raw: Buffer, contentType: string | undefined, compression: string | undefined): Record<string, unknown> {
  let bytes = raw;
  if (GZIP_MAGIC(bytes) || compression === 'gzip' || compression === 'gzip-js') {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_FLAGS_BODY_BYTES });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw errors.payloadTooLarge(MAX_FLAGS_BODY_BYTES);
      throw errors.parse('Malformed request data: invalid gzip body');
    }
  }
  let text = bytes.toString('utf8');
  const isForm = contentType?.toLowerCase().startsWith('application/x-www-form-urlencoded') ?? false;
  if (isForm && !/^\s*[{[]/.test(text)) {
    const data = new URLSearchParams(text).get('data');
    text = fromBase64(data ?? decodeURIComponent(text));
  } else if (compression === 'base64') text = fromBase64(text);
  if (text.trim() === '') throw errors.parse('Malformed request data: empty body');
  let body = parseJson(text);
  if (body === undefined) body = parseJson(fromBase64(text));
  if (body === undefined) throw errors.parse('Malformed request data: the body is not JSON, gzip or base64 JSON');
  if (!isJsonObject(body)) throw errors.parse('Malformed request data: the body must be a JSON object');
  // Evaluation walks property values recursively (matching stringifies them).
  if (exceedsDepth(body)) throw errors.validation('Nested too deeply: at most 64 levels of lists and objects are allowed.', null, 'max_depth');
  return body;
}

/** The first of the names the body gives a value (not null): PostHog's aliases for one field. */
function firstDefined(body: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) {
    const value = body[name];
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

const TOKEN = ['token', 'api_key', '$token'] as const;
const DISTINCT_ID = ['distinct_id', '$distinct_id'] as const;
const PERSON_PROPERTIES = ['person_properties', '$properties'] as const;
const GROUPS = ['groups', '$groups'] as const;
const GROUP_PROPERTIES = ['group_properties', '$group_properties'] as const;
const FLAG_KEYS = ['flag_keys_to_evaluate', 'flag_keys'] as const;
const ANON_DISTINCT_ID = ['$anon_distinct_id', 'anon_distinct_id'] as const;

/** The request's groups, with NULs stripped from their keys; the body's own object when none has one. */
function groupsOf(groups: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.values(groups)) {
    if (typeof key === 'string' && key.includes('\u0000')) {
      return Object.fromEntries(Object.entries(groups).map(([name, k]) => [name, typeof k === 'string' ? withoutNul(k) : k]));
    }
  }
  return groups;
}

/**
 * Ids are looked up in PostgreSQL, which refuses U+0000 in text; ingestion strips NULs from every
 * string it stores, so stripping them here finds the same person.
 */
const withoutNul = (text: string) => (text.includes('\u0000') ? text.replaceAll('\u0000', '') : text);

function stringOrNull(value: unknown): string | null {
  if (typeof value === 'string' && value !== '') return withoutNul(value) || null;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

export function readFlagRequest(body: Record<string, unknown>): FlagRequest {
  const token = firstDefined(body, TOKEN);
  const rawDistinctId = firstDefined(body, DISTINCT_ID);
  let distinctId: string;
  if (typeof rawDistinctId === 'string') distinctId = rawDistinctId;
  else if (typeof rawDistinctId === 'number' || typeof rawDistinctId === 'boolean') distinctId = String(rawDistinctId);
  else throw errors.validation('distinct_id is required.', 'distinct_id', 'required');
  const personProperties = firstDefined(body, PERSON_PROPERTIES);
  const groups = firstDefined(body, GROUPS);
  const groupProperties = firstDefined(body, GROUP_PROPERTIES);
  const flagKeys = firstDefined(body, FLAG_KEYS);
  return {
    token: typeof token === 'string' && token !== '' ? token : null,
    distinctId: withoutNul(distinctId).slice(0, 200),
    anonDistinctId: stringOrNull(firstDefined(body, ANON_DISTINCT_ID)),
    deviceId: stringOrNull(body['$device_id']),
    personProperties: isJsonObject(personProperties) ? personProperties : {},
    groups: isJsonObject(groups) ? groupsOf(groups) : {},
    groupProperties: isJsonObject(groupProperties)
      ? Object.fromEntries(Object.entries(groupProperties).filter((e): e is [string, Record<string, unknown>] => isJsonObject(e[1])))
      : {},
    flagKeys: Array.isArray(flagKeys) ? flagKeys.filter((k): k is string => typeof k === 'string') : null,
    geoipDisable: body['geoip_disable'] === true,
    disableFlags: body['disable_flags'] === true,
  };
}
