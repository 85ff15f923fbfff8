import { isJsonObject } from '@sightline/json-input';
export type Properties = Record<string, unknown>;

/** The person-property operations one event asks for (docs/data-model.md#person-properties). */
export interface PropertyUpdates {
  set: Properties;
  setOnce: Properties;
  unset: string[];
}

export const NO_UPDATES: PropertyUpdates = Object.freeze({ set: {}, setOnce: {}, unset: [] }) as PropertyUpdates;

/** Event properties lifted onto the person as `$set` and `$initial_*` `$set_once` (PostHog's personInitialAndUTMProperties). */
const LIFTED_PROPERTIES = [
  '$app_build',
  '$app_name',
  '$app_namespace',
  '$app_version',
  '$browser',
  '$browser_version',
  '$device_type',
  '$current_url',
  '$pathname',
  '$os',
  '$os_name',
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
  ...[
    'utm_source',
    'utm_medium',
    'utm_campaign',
    'utm_content',
    'utm_name',
    'utm_term',
    'gclid',
    'gad_source',
    'gclsrc',
    'dclid',
    'gbraid',
    'wbraid',
    'fbclid',
    'msclkid',
    'twclid',
    'li_fat_id',
    'mc_cid',
    'igshid',
    'ttclid',
    'rdt_cid',
    'irclid',
    '_kx',
    'epik',
    'qclid',
    'sccid',
  ],
];
/** Each lifted property with the `$initial_` key it is also set once as (worked out once, not per event). */
const LIFTED_WITH_INITIAL = LIFTED_PROPERTIES.map((key) => [key, `$initial_${key.replace(/^\$/, '')}`] as const);
/** Server SDKs report the server's OS, not the user's. */
const NOT_LIFTED_FOR_SERVERS = new Set(['$os', '$os_version']);

/**
 * Reads `$set`, `$set_once` and `$unset` from event properties and adds the lifted
 * properties (`$browser` → `$set.$browser` unless given, and `$set_once.$initial_browser`).
 */
export function personUpdatesFromEvent(properties: Properties): PropertyUpdates {
  const set: Properties = isJsonObject(properties['$set']) ? { ...properties['$set'] } : {};
  const setOnce: Properties = isJsonObject(properties['$set_once']) ? { ...properties['$set_once'] } : {};
  const rawUnset = properties['$unset'];
  const unset = Array.isArray(rawUnset) ? rawUnset.map(String) : isJsonObject(rawUnset) ? Object.keys(rawUnset) : [];
  const isServer = properties['$is_server'] === true;
  for (const [key, initialKey] of LIFTED_WITH_INITIAL) {
    const value = properties[key];
    if (value === undefined || (isServer && NOT_LIFTED_FOR_SERVERS.has(key))) continue;
    if (!(key in set)) set[key] = value;
    if (!(initialKey in setOnce)) setOnce[initialKey] = value;
  }
  if (!isServer && properties['$os'] === undefined && properties['$os_name'] !== undefined && !('$initial_os' in setOnce)) {
    setOnce['$initial_os'] = properties['$os_name'];
  }
  return { set, setOnce, unset };
}

/**
 * Applies `$set_once`, then `$set`, then `$unset` to `target` in place (docs/data-model.md#person-properties).
 * Returns whether anything changed: `$set` counts only values that differ (compared as JSON,
 * since stored values come back from jsonb as new objects).
 */
export function applyPropertyUpdates(target: Properties, updates: PropertyUpdates): boolean {
  let changed = false;
  // for…in rather than Object.entries: no [key, value] array per property per event.
  const { setOnce, set } = updates;
  for (const key in setOnce) {
    const value = setOnce[key];
    if (target[key] === undefined && value !== undefined) {
      target[key] = value;
      changed = true;
    }
  }
  for (const key in set) {
    const value = set[key];
    if (value === undefined) continue;
    const current = target[key];
    if (current === value) continue;
    if (typeof value === 'object' && value !== null && JSON.stringify(current) === JSON.stringify(value)) continue;
    target[key] = value;
    changed = true;
  }
  for (const key of updates.unset) {
    if (key in target) {
      delete target[key];
      changed = true;
    }
  }
  return changed;
}

export const hasUpdates = (updates: PropertyUpdates) =>
  Object.keys(updates.set).length > 0 || Object.keys(updates.setOnce).length > 0 || updates.unset.length > 0;
