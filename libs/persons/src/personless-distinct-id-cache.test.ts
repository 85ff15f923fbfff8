import { personUuidFor } from '@sightline/ingestion';
import { PersonlessDistinctIdCache } from './person-batch';

describe('PersonlessDistinctIdCache', () => {
  it('answers each id its person uuid, known to the cache or not, again and again', () => {
    const cache = new PersonlessDistinctIdCache();
    cache.add(1, 'known');
    for (let round = 0; round < 3; round++) {
      expect(cache.personUuid(1, 'known')).toBe(personUuidFor(1, 'known'));
      expect(cache.personUuid(2, 'known')).toBe(personUuidFor(2, 'known'));
      expect(cache.personUuid(1, 'unknown')).toBe(personUuidFor(1, 'unknown'));
    }
    // Asking does not make an id known.
    expect(cache.has(1, 'unknown')).toBe(false);
    expect(cache.has(2, 'known')).toBe(false);
  });

  it('forgets the oldest ids first, whether or not their uuid was asked for', () => {
    const cache = new PersonlessDistinctIdCache(2);
    cache.add(1, 'a');
    cache.add(1, 'b');
    cache.personUuid(1, 'a'); // remembering a's uuid does not move it to the back
    cache.add(1, 'c');
    expect([cache.has(1, 'a'), cache.has(1, 'b'), cache.has(1, 'c')]).toEqual([false, true, true]);
    expect(cache.personUuid(1, 'a')).toBe(personUuidFor(1, 'a'));
    expect(cache.personUuid(1, 'c')).toBe(personUuidFor(1, 'c'));
  });
});

describe('PersonlessDistinctIdCache across projects', () => {
  it('forgets the oldest ids first over every project, many times round its capacity', () => {
    const cache = new PersonlessDistinctIdCache(3);
    const added: [number, string][] = [];
    for (let i = 0; i < 10; i++) {
      const entry: [number, string] = [i % 2 === 0 ? 1 : 2, `id-${i}`];
      cache.add(...entry);
      cache.add(...entry); // adding again neither grows the cache nor moves the id
      added.push(entry);
    }
    expect(added.map(([team, id]) => cache.has(team, id))).toEqual([false, false, false, false, false, false, false, true, true, true]);
    // The same id in another project is another entry.
    expect(cache.has(1, 'id-9')).toBe(false);
    expect(cache.personUuid(2, 'id-9')).toBe(personUuidFor(2, 'id-9'));
    expect(cache.knownPersonUuid(1, 'id-8')).toBe(personUuidFor(1, 'id-8'));
    expect(cache.knownPersonUuid(1, 'id-9')).toBeUndefined();
  });

  it('keeps the person uuid it is given with an id, instead of working it out again', () => {
    const cache = new PersonlessDistinctIdCache();
    const uuid = personUuidFor(1, 'with-uuid');
    cache.add(1, 'with-uuid', uuid);
    cache.add(1, 'with-uuid', 'ignored: already known');
    expect(cache.knownPersonUuid(1, 'with-uuid')).toBe(uuid);
    // Given by the batch that computed it: a stand-in shows the cache does not compute it again.
    cache.add(2, 'stand-in', 'the batch computed this');
    expect(cache.personUuid(2, 'stand-in')).toBe('the batch computed this');
  });
});
