import type { Logger } from '@sightline/logger';
import type { Sql } from '@sightline/postgres';
import { definitionsStep } from './definitions.step';
import type { PreparedEvent } from './normalize.step';

const event = (name: string, properties: Record<string, unknown>): PreparedEvent => ({
  uuid: '0190c1d2-0000-7000-8000-000000000001',
  teamId: 1,
  distinctId: 'u1',
  event: name,
  properties,
  timestampMs: 0,
  createdAtMs: 0,
  processPerson: true,
  elementsChain: '',
});

function recordingLogger() {
  const warnings: unknown[] = [];
  return { logger: { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger, warnings };
}

describe('definitionsStep', () => {
  it('upserts the run’s event names and property keys as bound arrays', async () => {
    const queries: { text: string; params: readonly unknown[] }[] = [];
    const db = { query: async (text: string, params: readonly unknown[] = []) => (queries.push({ text, params }), []) } as unknown as Sql;
    const { logger, warnings } = recordingLogger();
    await definitionsStep(db, [event('$pageview', { $browser: 'Chrome' }), event('$pageview', { $browser: 'Firefox' })], logger);
    expect(queries).toHaveLength(2);
    expect(queries[0]!.text).toContain('INSERT INTO event_definitions');
    expect(queries[0]!.params).toEqual([[1], ['$pageview'], [2]]);
    expect(queries[1]!.params).toEqual([[1], [1], ['$browser'], ['String'], [2]]);
    expect(warnings).toEqual([]);
  });

  // A PostgreSQL outage cannot be caused on the in-process store mid-run, so the store fails here.
  it('logs and carries on when the store refuses: the events are already written', async () => {
    const db = { query: async () => Promise.reject(new Error('connection refused')) } as unknown as Sql;
    const { logger, warnings } = recordingLogger();
    await expect(definitionsStep(db, [event('x', {})], logger)).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});
