import type { Logger } from '@sightline/logger';
import type { Sql } from '@sightline/postgres';
import { createDefinitionsRecorder } from './definitions-recorder';
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
  historical: false,
  elementsChain: '',
});

function recordingLogger() {
  const warnings: unknown[] = [];
  return { logger: { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger, warnings };
}

describe('createDefinitionsRecorder: one run', () => {
  it('upserts the run’s event names and property keys as bound arrays', async () => {
    const queries: { text: string; params: readonly unknown[] }[] = [];
    const db = { query: async (text: string, params: readonly unknown[] = []) => (queries.push({ text, params }), []) } as unknown as Sql;
    const { logger, warnings } = recordingLogger();
    const recorder = createDefinitionsRecorder(db, logger);
    recorder.record([event('$pageview', { $browser: 'Chrome' }), event('$pageview', { $browser: 'Firefox' })]);
    await recorder.idle();
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
    const recorder = createDefinitionsRecorder(db, logger);
    recorder.record([event('x', {})]);
    await expect(recorder.idle()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});

describe('createDefinitionsRecorder', () => {
  it('writes one at a time, merging what runs queue meanwhile', async () => {
    const queries: { text: string; params: readonly unknown[] }[] = [];
    const releases: (() => void)[] = [];
    const db = {
      query: (text: string, params: readonly unknown[] = []) =>
        new Promise((resolve) => {
          queries.push({ text, params });
          releases.push(() => resolve([]));
        }),
    } as unknown as Sql;
    const { logger, warnings } = recordingLogger();
    const recorder = createDefinitionsRecorder(db, logger);
    recorder.record([event('$pageview', { $browser: 'Chrome' })]);
    // The first write is under way; the next two runs wait and go together.
    expect(queries).toHaveLength(1);
    recorder.record([event('$pageview', { $browser: 'Firefox' }), event('signed_up', {})]);
    recorder.record([event('$pageview', { $os: 'Mac OS X' })]);
    expect(queries).toHaveLength(1);
    let idle = false;
    const whenIdle = recorder.idle().then(() => (idle = true));
    while (releases.length > 0) {
      releases.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await whenIdle;
    expect(idle).toBe(true);
    expect(queries.map((q) => q.params)).toEqual([
      [[1], ['$pageview'], [1]],
      [[1], [1], ['$browser'], ['String'], [1]],
      [
        [1, 1],
        ['$pageview', 'signed_up'],
        [2, 1],
      ],
      [
        [1, 1],
        [1, 1],
        ['$browser', '$os'],
        ['String', 'String'],
        [1, 1],
      ],
    ]);
    expect(warnings).toEqual([]);
  });

  it('logs a refused write and goes on with the next', async () => {
    let calls = 0;
    const db = { query: async () => (++calls === 1 ? Promise.reject(new Error('connection refused')) : []) } as unknown as Sql;
    const { logger, warnings } = recordingLogger();
    const recorder = createDefinitionsRecorder(db, logger);
    recorder.record([event('x', {})]);
    await recorder.idle();
    recorder.record([event('y', {})]);
    await recorder.idle();
    expect(warnings).toHaveLength(1);
    expect(calls).toBe(2);
  });
});
