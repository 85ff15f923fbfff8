import { mapStoredGroupProperties, storedPropertyFilters } from './stored-filters';
import type { FlagFilters } from './types';

const cohort = { key: 'id', type: 'cohort', value: 3 };
const person = { key: 'plan', type: 'person', value: 'pro' };

describe('stored filters of definitions written before validation', () => {
  it('reads the well-formed filters of groups and super_groups and skips the rest', () => {
    const filters = {
      groups: [null, 'x', { properties: 'y' }, { properties: [1, null, person] }, { rollout_percentage: 50 }],
      super_groups: [{ properties: [cohort] }],
    } as unknown as FlagFilters;
    expect(storedPropertyFilters(filters)).toEqual([person]);
    expect(storedPropertyFilters(filters, ['groups', 'super_groups'])).toEqual([person, cohort]);
  });

  it.each([null, undefined, 'text', 7, [], { groups: {} }, { groups: 'g' }])('finds nothing in %p', (filters) => {
    expect(storedPropertyFilters(filters as unknown as FlagFilters, ['groups', 'super_groups'])).toEqual([]);
  });

  it('rewrites well-formed filters only, keeps the rest as stored, and gives absent groups an empty list', () => {
    const rewrite = (p: { key: string }) => ({ ...p, key: `${p.key}!` }) as never;
    const filters = { groups: [null, { properties: 'y' }, { properties: [1, person] }, {}], payloads: {} } as unknown as FlagFilters;
    expect(mapStoredGroupProperties(filters, rewrite)).toEqual({
      groups: [null, { properties: 'y' }, { properties: [1, { ...person, key: 'plan!' }] }, { properties: [] }],
      payloads: {},
    });
    const objectGroups = { groups: { a: 1 } } as unknown as FlagFilters;
    expect(mapStoredGroupProperties(objectGroups, rewrite)).toBe(objectGroups);
    expect(mapStoredGroupProperties({}, rewrite)).toEqual({ groups: [] });
  });
});
