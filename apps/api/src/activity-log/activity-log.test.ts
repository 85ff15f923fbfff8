import { changesBetween } from './activity-log';

describe('changesBetween', () => {
  const fields = ['name', 'filters', 'tags', 'rollback_conditions'];
  it('reports every non-empty field as created when there was no previous version', () => {
    expect(changesBetween('FeatureFlag', null, { name: 'a', filters: {}, tags: [], rollback_conditions: null }, fields)).toEqual([
      { type: 'FeatureFlag', action: 'created', field: 'name', before: null, after: 'a' },
      { type: 'FeatureFlag', action: 'created', field: 'filters', before: null, after: {} },
      { type: 'FeatureFlag', action: 'created', field: 'tags', before: null, after: [] },
    ]);
  });
  it('compares structurally and names appearing, disappearing and changed values', () => {
    const before = { name: 'a', filters: { groups: [1] }, tags: ['x'], rollback_conditions: { a: 1 } };
    const after = { name: 'a', filters: { groups: [1] }, tags: ['y'], rollback_conditions: null };
    expect(changesBetween('FeatureFlag', before, after, fields)).toEqual([
      { type: 'FeatureFlag', action: 'changed', field: 'tags', before: ['x'], after: ['y'] },
      { type: 'FeatureFlag', action: 'deleted', field: 'rollback_conditions', before: { a: 1 }, after: null },
    ]);
  });
});
