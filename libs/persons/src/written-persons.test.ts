import type { Sql } from '@sightline/postgres';
import { PersonBatch } from './person-batch';
import { NO_UPDATE_TIMES, WrittenPersons, type WrittenPerson } from './written-persons';

const kept = (id: string, version: number, properties: Record<string, unknown> = { id }): WrittenPerson => ({
  id,
  uuid: `00000000-0000-0000-0000-${id.padStart(12, '0')}`,
  properties,
  propertiesJson: JSON.stringify(properties),
  updateTimes: NO_UPDATE_TIMES,
  isIdentified: false,
  version,
  createdAtMs: 0,
  distinctIdVersion: 0,
});

/** A store no statement may reach: a batch whose persons are all kept reads nothing. */
const noStatements: Sql = {
  query: () => Promise.reject(new Error('no statement expected')),
  exec: () => Promise.reject(new Error('no statement expected')),
};

describe('WrittenPersons', () => {
  it('holds at most its capacity of distinct ids over all projects, always the last half of it kept', () => {
    const written = new WrittenPersons(4); // generations of 2 distinct ids
    for (let i = 0; i < 50; i++) {
      written.remember(1 + (i % 3), `d${i}`, kept(String(i), 1));
      expect(written.size).toBeLessThanOrEqual(4);
      expect(written.get(1 + (i % 3), `d${i}`)?.id).toBe(String(i));
      if (i > 0) expect(written.get(1 + ((i - 1) % 3), `d${i - 1}`)?.id).toBe(String(i - 1));
    }
    expect(written.get(1, 'd0')).toBeUndefined();
  });

  it('forgets a distinct id in both generations', () => {
    const written = new WrittenPersons(4);
    written.remember(1, 'a', kept('1', 1));
    written.remember(1, 'b', kept('2', 1)); // a and b now in the previous generation
    written.remember(1, 'a', kept('1', 2)); // a in both
    written.forget(1, 'a');
    expect(written.get(1, 'a')).toBeUndefined();
    expect(written.get(1, 'b')?.id).toBe('2');
  });

  it('is never changed by a batch that takes a kept person and changes it (the batch may yet lose its race)', async () => {
    const written = new WrittenPersons();
    written.remember(1, 'a', kept('7', 3, { plan: 'free' }));
    const batch = await PersonBatch.load(noStatements, new Map([[1, ['a']]]), { lock: false, remembered: written });
    const person = batch.getOrCreate(1, 'a', 0);
    expect(person).toMatchObject({ id: '7', version: 3, storedVersion: 3, remembered: true, properties: { plan: 'free' } });
    // A historical update: it writes the update times too.
    batch.updateProperties(person, { set: { seats: 5 }, setOnce: {}, unset: [] }, Date.parse('2026-01-01T00:00:00Z'));
    expect(person.properties).toEqual({ plan: 'free', seats: 5 });
    expect(person.updateTimes.updatedAt).toEqual({ seats: '2026-01-01T00:00:00.000Z' });
    const after = written.get(1, 'a')!;
    expect(after.version).toBe(3);
    expect(after.properties).toEqual({ plan: 'free' });
    expect(after.propertiesJson).toBe('{"plan":"free"}');
    expect(after.updateTimes).toEqual({ updatedAt: {}, operation: {} });
  });
});
