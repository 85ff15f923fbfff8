// A flag's activity-log changes as the web app words them: before → after per condition set,
// variant and payload, never cut JSON.
import { describeFlagChange } from '../apps/web/src/flag-changes';

const groups = (...sets: { properties?: unknown[]; rollout_percentage?: number | null; variant?: string | null }[]) => ({ groups: sets });

describe('describeFlagChange', () => {
  it('words a rollout edit as the condition set’s percentage before and after', () => {
    expect(
      describeFlagChange({
        field: 'filters',
        before: groups({ properties: [], rollout_percentage: 30 }),
        after: groups({ properties: [], rollout_percentage: 100 }),
      }),
    ).toEqual(['Condition set 1 rollout: 30 % → 100 %']);
  });

  it('words filters, added and removed sets, variants and payloads, and leaves out what did not change', () => {
    const plan = { key: 'plan', type: 'person', operator: 'exact', value: ['pro'] };
    const before = {
      ...groups({ properties: [plan], rollout_percentage: 50 }, { properties: [], rollout_percentage: 10 }),
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 50 },
          { key: 'test', rollout_percentage: 50 },
        ],
      },
      payloads: { control: '{"a":1}' },
    };
    const after = {
      ...groups({ properties: [{ ...plan, value: ['pro', 'team'] }], rollout_percentage: 50, variant: 'test' }),
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 34 },
          { key: 'test', rollout_percentage: 33 },
          { key: 'third', rollout_percentage: 33 },
        ],
      },
      payloads: { control: '{"a":2}' },
    };
    expect(describeFlagChange({ field: 'filters', before, after })).toEqual([
      'Condition set 1 filters: plan = pro → plan = pro, team',
      'Condition set 1 variant: (none) → test',
      'Condition set 2 removed (was all users, 10 %)',
      'Variant control rollout: 50 % → 34 %',
      'Variant test rollout: 50 % → 33 %',
      'Variant third added: 33 %',
      'Payload of control: {"a":1} → {"a":2}',
    ]);
  });

  it('words switches as on and off, other fields as their values, and a created flag as what it is', () => {
    expect(describeFlagChange({ field: 'active', before: true, after: false })).toEqual(['Enabled: on → off']);
    expect(describeFlagChange({ field: 'name', before: 'Old', after: 'New checkout' })).toEqual(['Description: Old → New checkout']);
    expect(describeFlagChange({ field: 'name', before: 'x', after: 'y'.repeat(200) })[0]!.length).toBeLessThan(90);
    expect(describeFlagChange({ field: 'filters', before: null, after: groups({ properties: [], rollout_percentage: 30 }) }, true)).toEqual([
      'Condition set 1: all users, 30 %',
    ]);
    expect(describeFlagChange({ field: 'active', before: null, after: true }, true)).toEqual(['Enabled: on']);
    // A created flag's empty defaults are left out; unnamed fields read as words.
    expect(describeFlagChange({ field: 'performed_rollback', before: null, after: false }, true)).toEqual([]);
    expect(describeFlagChange({ field: 'tags', before: null, after: [] }, true)).toEqual([]);
    expect(describeFlagChange({ field: 'evaluation_runtime', before: 'all', after: 'server' })).toEqual(['Evaluation runtime: all → server']);
  });
});
