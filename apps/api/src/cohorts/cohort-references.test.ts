import type { CohortDefinition } from '@sightline/insights';
import { cohortsContaining } from './cohort-references';

const naming = (id: number, ...cohortIds: number[]): [number, CohortDefinition] => [
  id,
  {
    id,
    name: `c${id}`,
    isStatic: false,
    properties: {
      type: 'AND',
      values: [{ type: 'OR', values: cohortIds.map((value) => ({ key: 'id', type: 'cohort' as const, value, operator: 'exact' as const })) }],
    },
  },
];

describe('cohortsContaining', () => {
  it('finds the cohort and every cohort naming it, directly or through others, and no other', () => {
    const definitions = new Map([naming(1), naming(2, 1), naming(3, 9, 2), naming(4), naming(5, 6), naming(6, 5, 4), naming(7, 3)]);
    expect(cohortsContaining(definitions, 1).sort()).toEqual([1, 2, 3, 7]);
    expect(cohortsContaining(definitions, 4).sort()).toEqual([4, 5, 6]);
    expect(cohortsContaining(definitions, 42)).toEqual([42]);
  });
});
