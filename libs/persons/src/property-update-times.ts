import { applyPropertyUpdates, type Properties, type PropertyUpdates } from './property-updates';

/** What last wrote a property from a historical event: PostHog's `properties_last_operation` values, plus `unset`. */
export type PropertyOperation = 'set' | 'set_once' | 'unset';

/**
 * Per property, the event time (ISO 8601, UTC, so the text sorts as the time) and the operation
 * of the historical event that last wrote it: the persons columns `properties_last_updated_at`
 * and `properties_last_operation`, which PostHog's persons table has too. A property without an
 * entry was written by live ingestion or the API (or before these were kept).
 */
export interface PropertyUpdateTimes {
  updatedAt: Record<string, string>;
  operation: Record<string, PropertyOperation>;
}

export const emptyUpdateTimes = (): PropertyUpdateTimes => ({ updatedAt: {}, operation: {} });

/**
 * No update times, shared (most persons were never imported): frozen, so a writer must take
 * emptyUpdateTimes() instead first. Live updates only delete keys that are there, so they leave it.
 */
export const NO_UPDATE_TIMES: PropertyUpdateTimes = Object.freeze({ updatedAt: Object.freeze({}), operation: Object.freeze({}) }) as PropertyUpdateTimes;

const sameValue = (a: unknown, b: unknown) => a === b || (typeof b === 'object' && b !== null && JSON.stringify(a) === JSON.stringify(b));

/**
 * Applies the updates of a historical event (`historical_migration`) by event time, so that
 * files imported in any order, or sent twice, leave each property with the value of its latest
 * event. The rules are those of PostHog's per-property update function (posthog/test/test_update_person_props.py,
 * from migration 0176_update_person_props_function), with live values ranked above history:
 *
 * - `$set`: written when the property is absent (and no later `$unset` removed it), when it was
 *   last written by `$set_once`, or by a `$set` of a strictly earlier event. A `$set` of the same
 *   time (the same event sent again) changes nothing.
 * - `$set_once`: written when the property is absent (and no later `$unset`), or replaces a value
 *   that a later `$set_once` wrote: the earliest `$set_once` wins.
 * - `$unset`: removes a property last written by an earlier event, and remembers its time so an
 *   older `$set` imported afterwards does not bring the value back.
 * - A property present without a time was written live (or by the API): history never replaces it.
 *
 * Returns whether the properties or their times changed.
 */
export function applyHistoricalUpdates(target: Properties, times: PropertyUpdateTimes, updates: PropertyUpdates, timeMs: number): boolean {
  const at = new Date(timeMs).toISOString();
  let changed = false;
  const record = (key: string, operation: PropertyOperation) => {
    if (times.updatedAt[key] === at && times.operation[key] === operation) return;
    times.updatedAt[key] = at;
    times.operation[key] = operation;
    changed = true;
  };
  const write = (key: string, value: unknown) => {
    if (!sameValue(target[key], value)) {
      target[key] = value;
      changed = true;
    }
  };
  for (const [key, value] of Object.entries(updates.setOnce)) {
    if (value === undefined) continue;
    const last = times.updatedAt[key];
    if (target[key] === undefined) {
      if (last !== undefined && times.operation[key] === 'unset' && last > at) continue;
    } else if (last === undefined || times.operation[key] !== 'set_once' || !(at < last)) continue;
    write(key, value);
    record(key, 'set_once');
  }
  for (const [key, value] of Object.entries(updates.set)) {
    if (value === undefined) continue;
    const last = times.updatedAt[key];
    if (target[key] === undefined) {
      if (last !== undefined && times.operation[key] === 'unset' && last >= at) continue;
    } else if (last === undefined) continue;
    else if (times.operation[key] !== 'set_once' && !(at > last)) continue;
    write(key, value);
    record(key, 'set');
  }
  for (const key of updates.unset) {
    const last = times.updatedAt[key];
    if (target[key] !== undefined && last === undefined) continue;
    if (last !== undefined && last > at) continue;
    if (key in target) {
      delete target[key];
      changed = true;
    }
    record(key, 'unset');
  }
  return changed;
}

/**
 * Applies the updates of a live event (or an API write) as ingestion always has (last processed
 * wins), and forgets the historical times of what it wrote: from then on the property holds a
 * live value, which history does not replace. Returns whether anything changed.
 */
export function applyLiveUpdates(target: Properties, times: PropertyUpdateTimes, updates: PropertyUpdates): boolean {
  let forgot = false;
  // Most persons were never imported: nothing to forget, and nothing to look up per key.
  for (const key in times.updatedAt) {
    const written = key in updates.set || updates.unset.includes(key) || (key in updates.setOnce && target[key] === undefined);
    if (written) {
      delete times.updatedAt[key];
      delete times.operation[key];
      forgot = true;
    }
  }
  return applyPropertyUpdates(target, updates) || forgot;
}
