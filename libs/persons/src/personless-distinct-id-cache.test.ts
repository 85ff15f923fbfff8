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
