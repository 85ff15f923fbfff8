/**
 * Source formats and how a record of each becomes a PostHog event. Mappings follow PostHog's
 * own import guides: Mixpanel's `time` in seconds or milliseconds, `$mp_web_page_view` →
 * `$pageview`, `$insert_id` as the event's id; Amplitude's distinct id from `user_id`, then
 * `device_id`, time from `event_time`, then `client_event_time`, page views → `$pageview`,
 * `user_properties` → `$set`.
 */
export const FORMATS = ['posthog', 'jsonl', 'csv', 'mixpanel', 'amplitude'] as const;
export type Format = (typeof FORMATS)[number];

/** `--map event=action` style renames: target field → a dotted path in the source record. */
export type FieldMap = Readonly<Record<string, string>>;

/** An event as it will be sent, before validation; `sourceId` is the source's own event id, if any. */
export interface MappedEvent {
  event: unknown;
  distinct_id: unknown;
  timestamp: unknown;
  sourceId: unknown;
  properties: unknown;
  $set?: unknown;
  $set_once?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function at(record: Record<string, unknown>, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (!isObject(value)) return undefined;
    value = value[part];
  }
  return value;
}

/** The fields of the PostHog shape, each read from its mapped path (or its own name). */
const FIELDS = ['event', 'distinct_id', 'timestamp', 'uuid', 'properties', '$set', '$set_once'] as const;

function mapGeneric(record: Record<string, unknown>, map: FieldMap, restToProperties: boolean): MappedEvent {
  const read = (field: string) => at(record, map[field] ?? field);
  let properties = read('properties');
  if (typeof properties === 'string' && properties.trim().startsWith('{')) {
    try {
      properties = JSON.parse(properties);
    } catch {
      // Left as text: validation reports it.
    }
  }
  if (restToProperties && properties === undefined) {
    // CSV: every column not used for a field becomes a property.
    const used = new Set(FIELDS.map((field) => (map[field] ?? field).split('.')[0]));
    properties = Object.fromEntries(Object.entries(record).filter(([key, value]) => !used.has(key) && value !== ''));
  }
  return {
    event: read('event'),
    distinct_id: read('distinct_id'),
    timestamp: read('timestamp'),
    sourceId: read('uuid'),
    properties: properties ?? {},
    $set: read('$set'),
    $set_once: read('$set_once'),
  };
}

const MIXPANEL_EVENTS: Record<string, string> = { $mp_web_page_view: '$pageview' };
const AMPLITUDE_EVENTS: Record<string, string> = { 'Page Viewed': '$pageview', '[Amplitude] Page Viewed': '$pageview' };

function mapMixpanel(record: Record<string, unknown>): MappedEvent {
  const { time, distinct_id, $insert_id, ...rest } = isObject(record['properties']) ? record['properties'] : {};
  // Mixpanel exports seconds; newer exports milliseconds: anything past 1e11 is milliseconds.
  const seconds = typeof time === 'number' ? (time > 1e11 ? time / 1000 : time) : Number(time);
  const event = typeof record['event'] === 'string' ? (MIXPANEL_EVENTS[record['event']] ?? record['event']) : record['event'];
  return {
    event,
    distinct_id,
    timestamp: Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : time,
    sourceId: $insert_id,
    properties: { ...rest, ...($insert_id === undefined ? {} : { $insert_id }) },
  };
}

/** Amplitude's times are `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC without a zone. */
function amplitudeTime(value: unknown): unknown {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/.test(value) ? `${value.replace(' ', 'T')}Z` : value;
}

function mapAmplitude(record: Record<string, unknown>): MappedEvent {
  const userId = record['user_id'];
  const distinctId = userId !== null && userId !== undefined && userId !== '' ? userId : record['device_id'];
  const type = record['event_type'];
  const properties: Record<string, unknown> = { ...(isObject(record['event_properties']) ? record['event_properties'] : {}) };
  if (record['device_id']) properties['$device_id'] = record['device_id'];
  if (record['ip_address']) properties['$ip'] = record['ip_address'];
  for (const [from, to] of [
    ['os_name', '$os'],
    ['os_version', '$os_version'],
    ['device_type', '$device_type'],
    ['country', '$geoip_country_name'],
    ['city', '$geoip_city_name'],
    ['app_version', '$app_version'],
  ] as const) {
    if (record[from]) properties[to] = record[from];
  }
  return {
    event: typeof type === 'string' ? (AMPLITUDE_EVENTS[type] ?? type) : type,
    distinct_id: distinctId,
    timestamp: amplitudeTime(record['event_time'] ?? record['client_event_time']),
    sourceId: record['uuid'] ?? record['$insert_id'] ?? record['insert_id'],
    properties,
    $set: isObject(record['user_properties']) ? record['user_properties'] : undefined,
  };
}

export function mapRecord(format: Format, record: Record<string, unknown>, map: FieldMap): MappedEvent {
  switch (format) {
    case 'mixpanel':
      return mapMixpanel(record);
    case 'amplitude':
      return mapAmplitude(record);
    case 'csv':
      return mapGeneric(record, map, true);
    default:
      return mapGeneric(record, map, false);
  }
}
