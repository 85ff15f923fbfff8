import { flagStatus, fullyRolledOutExplanation } from './flag-status';

const NOW = Date.parse('2024-03-01T00:00:00Z');
const old = new Date(NOW - 31 * 86_400_000);
const flag = (filters: Record<string, unknown>, extra: Partial<{ active: boolean; deleted: boolean; created_at: Date }> = {}) => ({
  filters,
  active: true,
  deleted: false,
  created_at: old,
  ...extra,
});
const everyone = { properties: [], rollout_percentage: 100 };

describe('flagStatus', () => {
  it('follows PostHog’s order: unknown, deleted, stale, active', () => {
    expect(flagStatus(null, NOW)).toEqual({ status: 'unknown', reason: 'Flag could not be found' });
    expect(flagStatus(flag({ groups: [everyone] }, { deleted: true }), NOW).status).toBe('deleted');
    expect(flagStatus(flag({ groups: [everyone] }), NOW)).toEqual({ status: 'stale', reason: 'This boolean flag will always evaluate to "true"' });
    expect(flagStatus(flag({ groups: [everyone] }, { created_at: new Date(NOW - 29 * 86_400_000) }), NOW).status).toBe('active');
  });
  it('never counts an inactive flag or a condition with properties as fully rolled out', () => {
    expect(fullyRolledOutExplanation(flag({ groups: [everyone] }, { active: false }))).toBeNull();
    expect(fullyRolledOutExplanation(flag({ groups: [{ properties: [{ key: 'a', value: 'b' }], rollout_percentage: 100 }] }))).toBeNull();
    expect(fullyRolledOutExplanation(flag({ groups: [{ properties: [], rollout_percentage: 99 }] }))).toBeNull();
  });
  it('names the variant a multivariate flag always serves: the condition override first, else a 100 % variant', () => {
    const variants = {
      variants: [
        { key: 'a', rollout_percentage: 0 },
        { key: 'b', rollout_percentage: 100 },
      ],
    };
    expect(fullyRolledOutExplanation(flag({ groups: [everyone], multivariate: variants }))).toBe('This flag will always use the variant "b"');
    expect(fullyRolledOutExplanation(flag({ groups: [{ ...everyone, variant: 'a' }], multivariate: variants }))).toBe(
      'This flag will always use the variant "a"',
    );
    const split = {
      variants: [
        { key: 'a', rollout_percentage: 50 },
        { key: 'b', rollout_percentage: 50 },
      ],
    };
    expect(fullyRolledOutExplanation(flag({ groups: [everyone], multivariate: split }))).toBeNull();
  });
});
