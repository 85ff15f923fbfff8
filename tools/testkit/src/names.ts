import { randomBytes } from 'node:crypto';

/**
 * A name unique across jest workers and runs, e.g. `events_lx2k9c1f_3fa9b2`:
 * the prefix (characters outside [A-Za-z0-9_-] become `_`), a timestamp and
 * random hex. Suits Kafka topics, consumer groups, Redis key prefixes and,
 * lower-cased, database names.
 */
export function uniqueName(prefix: string): string {
  const safePrefix = prefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${safePrefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}
