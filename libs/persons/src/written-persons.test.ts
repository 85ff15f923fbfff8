import type { Sql } from '@sightline/postgres';
import { PersonBatch } from './person-batch';
import { NO_UPDATE_TIMES } from './property-update-times';
import { MOST_KEPT_PROPERTIES_CHARS, WrittenPersons, type WrittenPerson } from './written-persons';

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
  it('holds at most its capacity of distinct ids over all projects, forgetting the one kept longest ago first', () => {
    const written = new WrittenPersons(4);
    for (let i = 0; i < 50; i++) {
      written.remember(1 + (i % 3), `d${i}`, kept(String(i), 1));
      expect(written.size).toBeLessThanOrEqual(4);
      for (let back = 0; back < Math.min(4, i + 1); back++) expect(written.get(1 + ((i - back) % 3), `d${i - back}`)?.id).toBe(String(i - back));
    }
    expect(written.get(1, 'd0')).toBeUndefined();
    expect(written.get(1 + (45 % 3), 'd45')).toBeUndefined();
  });

  it('keeps a distinct id kept again in its place, and forgets one on request', () => {
    const written = new WrittenPersons(3);
    written.remember(1, 'a', kept('1', 1));
    written.remember(1, 'b', kept('2', 1));
    written.remember(1, 'a', kept('1', 2));
    expect(written.get(1, 'a')?.version).toBe(2);
    expect(written.size).toBe(2);
    written.forget(1, 'b');
    expect(written.get(1, 'b')).toBeUndefined();
    written.remember(1, 'c', kept('3', 1));
    written.remember(1, 'd', kept('4', 1)); // the fourth added: a, added first, goes
    expect(written.get(1, 'a')).toBeUndefined();
    expect(written.get(1, 'c')?.id).toBe('3');
    expect(written.get(1, 'd')?.id).toBe('4');
    expect(written.size).toBeLessThanOrEqual(3);
  });

  it('does not keep a person whose properties JSON is too long or not at hand, and forgets what it kept of that id', () => {
    const written = new WrittenPersons();
    written.remember(1, 'a', kept('1', 1));
    written.remember(1, 'a', kept('1', 2, { big: 'x'.repeat(MOST_KEPT_PROPERTIES_CHARS) }));
    expect(written.get(1, 'a')).toBeUndefined();
    written.remember(1, 'b', { ...kept('2', 1), propertiesJson: undefined });
    expect(written.get(1, 'b')).toBeUndefined();
    expect(written.heldBytes).toBe(0);
  });

  it('forgets everything once its estimated bytes pass the bound, counting what the distinct-id bound pushes out', () => {
    const one = (i: number) => kept(String(i), 1, { v: 'x'.repeat(1000) });
    const written = new WrittenPersons(3, 100_000);
    written.remember(1, 'a', one(1));
    const each = written.heldBytes;
    expect(each).toBeGreaterThan(4000);
    for (let i = 2; i <= 6; i++) written.remember(1, `d${i}`, one(i));
    // Three held (the distinct-id bound), their bytes only.
    expect(written.size).toBe(3);
    expect(written.heldBytes).toBe(3 * each);
    written.forget(1, 'd6');
    expect(written.heldBytes).toBe(2 * each);

    // Memory by estimate: 100,000 bytes hold fewer than 25 such persons however many ids are allowed.
    const wide = new WrittenPersons(1000, 100_000);
    for (let i = 0; i < 60; i++) {
      wide.remember(1, `w${i}`, one(i));
      expect(wide.heldBytes).toBeLessThanOrEqual(100_000);
    }
    expect(wide.size).toBeLessThan(25);
    expect(wide.get(1, 'w59')?.id).toBe('59');
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
