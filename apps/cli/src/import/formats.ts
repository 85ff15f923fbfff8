import { createHash } from 'node:crypto';

/**
 * Source formats and how a record of each becomes PostHog events. Mappings follow PostHog's
 * own migration guides (posthog.com/docs/migrate): Mixpanel's `$mp_web_page_view` →
 * `$pageview`, `$insert_id` as the event's id; Amplitude's distinct id from `user_id`, then
 * `device_id`, `user_properties` → `$set`, every other field kept as a property, `$geoip_disable`
 * set, and each device id aliased to the user id it is first seen with (a `$create_alias`),
 * so events from before sign-in join the user.
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

/** Turns one source record into the events it stands for: the event itself, then any it implies (an alias, a group's properties). */
export type RecordMapper = (record: Record<string, unknown>) => MappedEvent[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const present = (v: unknown) => v !== undefined && v !== null && v !== '';

function at(record: Record<string, unknown>, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (!isObject(value)) return undefined;
    value = value[part];
  }
  return value;
}

/** Exports sometimes hold objects as JSON text (PostHog's batch exports, CSV cells). */
function objectOrText(value: unknown): unknown {
  if (typeof value === 'string' && value.trim().startsWith('{')) {
    try {
      return JSON.parse(value);
    } catch {
      // Left as text: validation reports it.
    }
  }
  return value;
}

/**
 * Where the source has no address, none is invented: `$geoip_disable` keeps PostHog from
 * locating the person by the importing machine's address (which Sightline does not record for
 * historical migrations, docs/data-model.md#event-normalisation).
 */
function withoutMachineAddress(properties: Record<string, unknown>): Record<string, unknown> {
  if (!present(properties['$ip']) && properties['$geoip_disable'] === undefined) properties['$geoip_disable'] = true;
  return properties;
}

/** The fields of the PostHog shape, each read from its mapped path (or its own name). */
const FIELDS = ['event', 'distinct_id', 'timestamp', 'uuid', 'properties', '$set', '$set_once'] as const;

/**
 * PostHog's event shape, which also covers its batch exports' JSON lines: `elements_chain`
 * (autocapture's elements) goes back into `$elements_chain`, `person_properties` (the person
 * as it was at the event) is set on the person with `set`/`$set` on top, `set_once` and `ip`
 * are read as `$set_once` and `$ip`.
 */
function mapGeneric(record: Record<string, unknown>, map: FieldMap, shape: 'posthog' | 'jsonl' | 'csv'): MappedEvent {
  const read = (field: string) => at(record, map[field] ?? field);
  let properties = objectOrText(read('properties'));
  if (shape === 'csv' && properties === undefined) {
    // CSV: every column not used for a field becomes a property.
    const used = new Set(FIELDS.map((field) => (map[field] ?? field).split('.')[0]));
    properties = Object.fromEntries(Object.entries(record).filter(([key, value]) => !used.has(key) && value !== ''));
  }
  properties ??= {};
  let $set = objectOrText(read('$set'));
  let $setOnce = objectOrText(read('$set_once'));
  if (isObject(properties)) {
    properties = { ...properties };
    const props = properties as Record<string, unknown>;
    if (shape === 'posthog') ({ $set, $setOnce } = withBatchExportFields(record, props, $set, $setOnce));
    withoutMachineAddress(props);
  }
  return {
    event: read('event'),
    distinct_id: read('distinct_id'),
    timestamp: read('timestamp'),
    sourceId: read('uuid'),
    properties,
    $set,
    $set_once: $setOnce,
  };
}

/** The columns PostHog's batch exports add to the event shape (see mapGeneric). */
function withBatchExportFields(
  record: Record<string, unknown>,
  props: Record<string, unknown>,
  $set: unknown,
  $setOnce: unknown,
): { $set: unknown; $setOnce: unknown } {
  const chain = record['elements_chain'];
  if (typeof chain === 'string' && chain !== '' && props['$elements_chain'] === undefined) props['$elements_chain'] = chain;
  if (present(record['ip']) && props['$ip'] === undefined) props['$ip'] = record['ip'];
  const personProperties = objectOrText(record['person_properties']);
  const exportedSet = objectOrText(record['set']);
  if (isObject(personProperties) || isObject(exportedSet)) {
    $set = { ...(isObject(personProperties) ? personProperties : {}), ...(isObject(exportedSet) ? exportedSet : {}), ...(isObject($set) ? $set : {}) };
  }
  const exportedSetOnce = objectOrText(record['set_once']);
  if (isObject(exportedSetOnce)) $setOnce = { ...exportedSetOnce, ...(isObject($setOnce) ? $setOnce : {}) };
  return { $set, $setOnce };
}

const MIXPANEL_EVENTS: Record<string, string> = { $mp_web_page_view: '$pageview' };
const AMPLITUDE_EVENTS: Record<string, string> = { 'Page Viewed': '$pageview', '[Amplitude] Page Viewed': '$pageview' };

/** Mixpanel's `time` (epoch seconds or milliseconds, as a number or text) is read like any epoch time (source-time.ts). */
function mapMixpanel(record: Record<string, unknown>): MappedEvent {
  const { time, distinct_id, $insert_id, ...rest } = isObject(record['properties']) ? record['properties'] : {};
  const event = typeof record['event'] === 'string' ? (MIXPANEL_EVENTS[record['event']] ?? record['event']) : record['event'];
  return {
    event,
    distinct_id,
    timestamp: time,
    sourceId: $insert_id,
    properties: withoutMachineAddress({ ...rest, ...($insert_id === undefined ? {} : { $insert_id }) }),
  };
}

/** Amplitude's times are `YYYY-MM-DD HH:MM:SS[.ffffff]` in UTC without a zone. */
const AMPLITUDE_TIME_FIELDS = ['event_time', 'client_event_time', 'server_upload_time'] as const;

/** Amplitude fields and the PostHog properties they also fill. */
const AMPLITUDE_AS_POSTHOG = [
  ['device_id', '$device_id'],
  ['ip_address', '$ip'],
  ['os_name', '$os'],
  ['os_version', '$os_version'],
  ['device_type', '$device_type'],
  ['device_manufacturer', '$device_manufacturer'],
  ['device_model', '$device_model'],
  ['country', '$geoip_country_name'],
  ['city', '$geoip_city_name'],
  ['region', '$geoip_subdivision_1_name'],
  ['app_version', '$app_version'],
  ['version_name', '$app_version'],
] as const;
/** Fields that become the event's own parts rather than properties. */
const AMPLITUDE_STRUCTURE = new Set(['event_type', 'event_properties', 'user_properties', 'groups', 'group_properties']);

const digest = (text: string) => createHash('sha1').update(text).digest('base64url');

/**
 * Amplitude's export. Events of an anonymous device carry only `device_id`; once the user signs
 * in they carry both. Like PostHog's Amplitude migration guide, an event with both ids also
 * implies a `$create_alias` (distinct id: the device, alias: the user), so the device's earlier
 * events join the user's person. `groups` ({type: key or [key]}) become `$groups`, and
 * `group_properties` ({type: {key: {…}}} or {type: {…}}) a `$groupidentify` per group. The
 * implied events' ids derive from what they say (the pair; the group and its properties), and
 * the run sends each id once.
 */
function mapAmplitude(record: Record<string, unknown>): MappedEvent[] {
  const userId = record['user_id'];
  const deviceId = record['device_id'];
  const distinctId = present(userId) ? userId : deviceId;
  const type = record['event_type'];
  const timestamp = AMPLITUDE_TIME_FIELDS.map((f) => record[f]).find(present);
  const properties: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!AMPLITUDE_STRUCTURE.has(key) && value !== null && value !== undefined) properties[key] = value;
  }
  Object.assign(properties, isObject(record['event_properties']) ? record['event_properties'] : {});
  for (const [from, to] of AMPLITUDE_AS_POSTHOG) if (present(record[from]) && properties[to] === undefined) properties[to] = record[from];
  const sessionId = record['session_id'];
  // Amplitude marks events outside a session with -1.
  if (present(sessionId) && sessionId !== -1 && sessionId !== '-1') properties['$session_id'] = String(sessionId);
  const groups: Record<string, string> = {};
  if (isObject(record['groups'])) {
    for (const [groupType, raw] of Object.entries(record['groups'])) {
      const key = Array.isArray(raw) ? raw[0] : raw;
      if (typeof key === 'string' || typeof key === 'number') groups[groupType] = String(key);
    }
  }
  if (Object.keys(groups).length > 0) properties['$groups'] = groups;
  withoutMachineAddress(properties);
  const sourceId = record['uuid'] ?? record['$insert_id'] ?? record['insert_id'];
  const events: MappedEvent[] = [
    {
      event: typeof type === 'string' ? (AMPLITUDE_EVENTS[type] ?? type) : type,
      distinct_id: distinctId,
      timestamp,
      sourceId,
      properties,
      $set: isObject(record['user_properties']) ? record['user_properties'] : undefined,
    },
  ];
  if (present(userId) && present(deviceId) && String(userId) !== String(deviceId)) {
    events.push({
      event: '$create_alias',
      distinct_id: deviceId,
      timestamp,
      sourceId: `amplitude-alias:${String(deviceId)}\u0000${String(userId)}`,
      properties: { alias: String(userId), $geoip_disable: true },
    });
  }
  const groupProperties = record['group_properties'];
  if (isObject(groupProperties)) {
    for (const [groupType, key] of Object.entries(groups)) {
      const byType = groupProperties[groupType];
      if (!isObject(byType)) continue;
      const set = isObject(byType[key]) ? byType[key] : Object.values(byType).every((v) => !isObject(v)) ? byType : null;
      if (!set || Object.keys(set).length === 0) continue;
      const identity = `${groupType}\u0000${key}\u0000${digest(JSON.stringify(set))}`;
      events.push({
        event: '$groupidentify',
        distinct_id: distinctId,
        timestamp,
        sourceId: `amplitude-group:${identity}`,
        properties: { $group_type: groupType, $group_key: key, $group_set: set, $geoip_disable: true },
      });
    }
  }
  return events;
}

export function createRecordMapper(format: Format, map: FieldMap): RecordMapper {
  switch (format) {
    case 'mixpanel':
      return (record) => [mapMixpanel(record)];
    case 'amplitude':
      return mapAmplitude;
    case 'csv':
    case 'jsonl':
    case 'posthog':
      return (record) => [mapGeneric(record, map, format)];
  }
}

/** The format a record looks like, for the hint when nothing matched the one given. */
export function guessFormat(record: Record<string, unknown>): Format | null {
  if ('event_type' in record && ('user_id' in record || 'device_id' in record)) return 'amplitude';
  const properties = record['properties'];
  if ('event' in record && isObject(properties) && 'time' in properties && 'distinct_id' in properties && !('distinct_id' in record)) return 'mixpanel';
  if ('event' in record && 'distinct_id' in record) return 'posthog';
  return null;
}
