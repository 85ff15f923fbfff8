import { WrittenPersons, type WrittenPerson } from './written-persons';

const person = (id: string, version: number): WrittenPerson => ({
  id,
  uuid: `00000000-0000-0000-0000-${id.padStart(12, '0')}`,
  properties: { id },
  propertiesJson: undefined,
  updateTimes: { updatedAt: {}, operation: {} },
  isIdentified: false,
  version,
  createdAtMs: 0,
});

describe('WrittenPersons', () => {
  it('holds at most its capacity of distinct ids over all projects, always the last half of it kept', () => {
    const kept = new WrittenPersons(4); // generations of 2 distinct ids
    for (let i = 0; i < 50; i++) {
      kept.remember(1 + (i % 3), `d${i}`, { person: person(String(i), 1), version: 0 });
      expect(kept.size).toBeLessThanOrEqual(4);
      expect(kept.get(1 + (i % 3), `d${i}`)?.person.id).toBe(String(i));
      if (i > 0) expect(kept.get(1 + ((i - 1) % 3), `d${i - 1}`)?.person.id).toBe(String(i - 1));
    }
    expect(kept.get(1, 'd0')).toBeUndefined();
  });

  it('keeps the higher version of a person when runs commit out of order, and a person that replaced it', () => {
    const kept = new WrittenPersons();
    kept.remember(1, 'a', { person: person('7', 5), version: 0 });
    kept.remember(1, 'a', { person: person('7', 4), version: 0 });
    expect(kept.get(1, 'a')?.person.version).toBe(5);
    // Another person (the old one deleted, the id's person created again) replaces it at any version.
    kept.remember(1, 'a', { person: person('8', 0), version: 1 });
    expect(kept.get(1, 'a')).toMatchObject({ person: { id: '8', version: 0 }, version: 1 });
  });

  it('forgets a distinct id in both generations', () => {
    const kept = new WrittenPersons(4);
    kept.remember(1, 'a', { person: person('1', 1), version: 0 });
    kept.remember(1, 'b', { person: person('2', 1), version: 0 }); // a and b now in the previous generation
    kept.remember(1, 'a', { person: person('1', 2), version: 0 }); // a in both
    kept.forget(1, 'a');
    expect(kept.get(1, 'a')).toBeUndefined();
    expect(kept.get(1, 'b')?.person.id).toBe('2');
  });
});
