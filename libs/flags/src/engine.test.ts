import { evaluateFlags, flagHash, holdoutHash, matchProperty, RegexBudgetExceededError, type EvaluationContext, type FlagDefinition } from './index';

const NOW = new Date('2024-06-15T12:00:00Z');

function context(overrides: Partial<EvaluationContext> = {}): EvaluationContext {
  return {
    distinctId: 'user-1',
    personProperties: {},
    groups: {},
    groupProperties: {},
    groupTypeNames: new Map([[0, 'company']]),
    cohorts: new Map(),
    staticCohortIds: new Set(),
    hashKeyOverrides: {},
    now: NOW,
    ...overrides,
  };
}

let nextId = 1;
function flag(key: string, filters: FlagDefinition['filters'], extra: Partial<FlagDefinition> = {}): FlagDefinition {
  return { id: nextId++, team_id: 1, key, name: '', filters, active: true, ensure_experience_continuity: false, version: 1, ...extra };
}

const one = (f: FlagDefinition, ctx = context(), all: FlagDefinition[] = [f]) => evaluateFlags(all, ctx).get(f.key)!;

describe('bucketing hash (docs/flags.md#bucketing vectors)', () => {
  it.each([
    ['beta-feature', 'user-1', 0.726491254926089, 0.145782183342665],
    ['beta-feature', 'user-2', 0.696538491674513, 0.602274324464384],
    ['multivariate-flag', 'user-1', 0.652180513307143, 0.302818169978207],
    ['simple-flag', 'some-distinct-id', 0.477755795905271, 0.777047430839275],
    ['checkout', 'user-123', 0.507881512825757, 0.833415744838689],
  ])('%s / %s', (key, id, rollout, variant) => {
    expect(flagHash(key, id)).toBeCloseTo(rollout, 14);
    expect(flagHash(key, id, 'variant')).toBeCloseTo(variant, 14);
  });

  it('holdout hash ignores the flag key', () => {
    expect(holdoutHash('user-1')).toBeCloseTo(0.17805599206573, 14);
  });
});

describe('worked examples (computed with the bucketing formula)', () => {
  const variants = {
    variants: [
      { key: 'control', rollout_percentage: 33 },
      { key: 'test', rollout_percentage: 33 },
      { key: 'test2', rollout_percentage: 34 },
    ],
  };

  it('multivariate at 70 %: user-1 gets control via condition 0', () => {
    const f = flag('multivariate-flag', { groups: [{ properties: [], rollout_percentage: 70 }], multivariate: variants, payloads: { control: '{"c":1}' } });
    expect(one(f)).toMatchObject({
      enabled: true,
      variant: 'control',
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      payload: '{"c":1}',
    });
  });

  it('multivariate at 60 %: out of rollout bound', () => {
    const f = flag('multivariate-flag', { groups: [{ properties: [], rollout_percentage: 60 }], multivariate: variants });
    expect(one(f)).toMatchObject({
      enabled: false,
      variant: null,
      payload: null,
      reason: { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' },
    });
  });

  it('beta-feature at 70 %: user-1 off, user-2 on', () => {
    const f = flag('beta-feature', { groups: [{ rollout_percentage: 70 }] });
    expect(one(f, context({ distinctId: 'user-1' })).enabled).toBe(false);
    expect(one(f, context({ distinctId: 'user-2' })).enabled).toBe(true);
  });
});

describe('conditions', () => {
  it('conditions with a variant override go first but keep their index', () => {
    const f = flag('ordered', {
      groups: [
        { properties: [], rollout_percentage: 100 },
        { properties: [], rollout_percentage: 100, variant: 'b' },
      ],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 100 },
          { key: 'b', rollout_percentage: 0 },
        ],
      },
    });
    expect(one(f)).toMatchObject({ enabled: true, variant: 'b', reason: { code: 'condition_match', condition_index: 1 } });
  });

  it('an override naming no variant falls back to the hashed variant', () => {
    const f = flag('bad-override', {
      groups: [{ rollout_percentage: 100, variant: 'nope' }],
      multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
    });
    expect(one(f).variant).toBe('a');
  });

  it('variants summing below 100 can leave the flag plain true', () => {
    const f = flag('gap', { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'a', rollout_percentage: 1 }] } });
    expect(one(f, context({ distinctId: 'user-2' }))).toMatchObject({ enabled: true, variant: null });
  });

  it('reports the best reason when nothing matches (later ties win)', () => {
    const f = flag('reasons', {
      groups: [
        { properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 },
        { properties: [], rollout_percentage: 0 },
        { properties: [{ key: 'plan', value: 'x', type: 'person' }] },
      ],
    });
    expect(one(f).reason).toEqual({ code: 'out_of_rollout_bound', condition_index: 1, description: 'Out of rollout bound' });
  });

  it('inactive flags are off with flag_disabled', () => {
    expect(one(flag('off', { groups: [{ rollout_percentage: 100 }] }, { active: false })).reason.code).toBe('flag_disabled');
  });

  it('early_exit stops at the first out-of-rollout condition', () => {
    const f = flag('early', { early_exit: true, groups: [{ rollout_percentage: 0 }, { rollout_percentage: 100 }] });
    expect(one(f)).toMatchObject({ enabled: false, reason: { code: 'out_of_rollout_bound', condition_index: 0 } });
  });
});

describe('groups, super conditions, holdouts, dependencies, continuity', () => {
  it('group flags hash the group key and need the group', () => {
    const f = flag('g', {
      aggregation_group_type_index: 0,
      groups: [{ properties: [{ key: 'size', value: 'big', type: 'group', group_type_index: 0 }], rollout_percentage: 100 }],
    });
    expect(one(f)).toMatchObject({ enabled: false, reason: { code: 'no_group_type', condition_index: null } });
    expect(one(f, context({ groups: { company: 'acme' }, groupProperties: { company: { size: 'BIG' } } })).enabled).toBe(true);
  });

  it('super conditions decide alone when the person has the enrollment key', () => {
    const f = flag('early-access', {
      groups: [{ rollout_percentage: 0 }],
      super_groups: [
        { properties: [{ key: '$feature_enrollment/early-access', value: ['true'], operator: 'exact', type: 'person' }], rollout_percentage: 100 },
      ],
      payloads: { true: '"p"' },
    });
    expect(one(f, context({ personProperties: { '$feature_enrollment/early-access': true } }))).toMatchObject({
      enabled: true,
      reason: { code: 'super_condition_value', condition_index: 0 },
      payload: '"p"',
    });
    expect(one(f).reason.code).toBe('out_of_rollout_bound');
  });

  it('holdouts put users below the holdout percentage in the holdout variant', () => {
    const f = flag('exp', { groups: [{ rollout_percentage: 100 }], holdout: { id: 7, exclusion_percentage: 20 } });
    expect(one(f, context({ distinctId: 'user-1' }))).toMatchObject({ enabled: true, variant: 'holdout-7', reason: { code: 'holdout_condition_value' } }); // hash 0.178
    expect(holdoutHash('user-2')).toBeGreaterThan(0.2);
    expect(one(f, context({ distinctId: 'user-2' })).reason.code).toBe('condition_match');
  });

  it('flag dependencies by key or id; cycles and missing flags give missing_dependency', () => {
    const base = flag('base', { groups: [{ rollout_percentage: 100 }], multivariate: { variants: [{ key: 'v', rollout_percentage: 100 }] } });
    const onVariant = flag('on-variant', { groups: [{ properties: [{ key: String(base.id), type: 'flag', operator: 'flag_evaluates_to', value: 'v' }] }] });
    const onFalse = flag('on-false', { groups: [{ properties: [{ key: 'base', type: 'flag', operator: 'flag_evaluates_to', value: false }] }] });
    const missing = flag('missing', { groups: [{ properties: [{ key: 'nope', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
    const a = flag('cycle-a', { groups: [{ properties: [{ key: 'cycle-b', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
    const b = flag('cycle-b', { groups: [{ properties: [{ key: 'cycle-a', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] });
    const results = evaluateFlags([onVariant, onFalse, missing, a, b, base], context());
    expect(results.get('on-variant')!.enabled).toBe(true);
    expect(results.get('on-false')!.enabled).toBe(false);
    expect(results.get('missing')!.reason.code).toBe('missing_dependency');
    expect(results.get('cycle-a')!.reason.code).toBe('missing_dependency');
    expect(results.get('cycle-b')!.reason.code).toBe('missing_dependency');
  });

  it('experience continuity buckets by the hash-key override', () => {
    const f = flag('beta-feature', { groups: [{ rollout_percentage: 70 }] }, { ensure_experience_continuity: true });
    expect(one(f, context({ distinctId: 'user-1', hashKeyOverrides: { 'beta-feature': 'user-2' } })).enabled).toBe(true);
  });

  it('cohorts: static by membership, dynamic by properties, not_in negates', () => {
    const cohorts = new Map([
      [1, { id: 1, is_static: true, properties: null }],
      [
        2,
        {
          id: 2,
          is_static: false,
          properties: { type: 'OR' as const, values: [{ type: 'AND' as const, values: [{ key: 'plan', value: 'pro', type: 'person' }] }] },
        },
      ],
    ]);
    const inStatic = flag('static', { groups: [{ properties: [{ key: 'id', value: 1, type: 'cohort', operator: 'in' }] }] });
    const notInDynamic = flag('dyn', { groups: [{ properties: [{ key: 'id', value: 2, type: 'cohort', operator: 'not_in' }] }] });
    const ctx = context({ cohorts, staticCohortIds: new Set([1]), personProperties: { plan: 'Pro' } });
    expect(one(inStatic, ctx).enabled).toBe(true);
    expect(one(notInDynamic, ctx).enabled).toBe(false);
  });
});

describe('property operators (server semantics, docs/flags.md#property-operators)', () => {
  const m = (operator: string, value: unknown, props: Record<string, unknown>) => matchProperty({ key: 'k', operator, value }, props, NOW);

  it('exact: case-insensitive, lists, boolean normalisation', () => {
    expect(m('exact', 'Pro', { k: 'pro' })).toBe(true);
    expect(m('exact', ['a', 'B'], { k: 'b' })).toBe(true);
    expect(m('exact', true, { k: 'TRUE' })).toBe(true);
    expect(m('exact', 'false', { k: 'no' })).toBe(true); // both falsy
    expect(m('exact', 5, { k: '5' })).toBe(true);
    expect(m('exact', 'x', {})).toBe(false);
    expect(m('is_not', 'x', {})).toBe(true);
    expect(m('exact', null, { k: null })).toBe(false);
  });

  it('contains, regex, set', () => {
    expect(m('icontains', 'ALU', { k: 'value' })).toBe(true);
    expect(m('not_icontains', 'x', {})).toBe(true);
    expect(m('regex', '^v.l', { k: 'value' })).toBe(true);
    expect(m('regex', '(', { k: 'x' })).toBe(false);
    expect(m('not_regex', '(', { k: 'x' })).toBe(false);
    expect(m('not_regex', 'a', {})).toBe(true);
    expect(m('is_set', 'x', { k: null })).toBe(true);
    expect(m('is_not_set', 'x', {})).toBe(true);
  });

  it('numeric comparisons coerce numeric strings and refuse others', () => {
    expect(m('gt', '10', { k: '9.5e1' })).toBe(true);
    expect(m('lte', 3, { k: 3 })).toBe(true);
    expect(m('gt', 'a', { k: 'b' })).toBe(false);
    expect(m('lt', 5, { k: true })).toBe(false);
  });

  it('dates: absolute, relative, unix seconds', () => {
    expect(m('is_date_before', '2024-01-01', { k: '2023-12-31T23:59:59Z' })).toBe(true);
    expect(m('is_date_after', '-7d', { k: '2024-06-10T00:00:00Z' })).toBe(true);
    expect(m('is_date_after', '-1m', { k: 1715000000 })).toBe(false); // 2024-05-06
    expect(m('is_date_exact', '2024-06-01', { k: '2024-06-01T00:00:00+00:00' })).toBe(true);
    expect(m('is_date_before', 'garbage', { k: '2024-01-01' })).toBe(false);
  });

  it('semver operators', () => {
    expect(m('semver_gt', '1.2.3', { k: 'v1.10.0' })).toBe(true);
    expect(m('semver_eq', '3.8', { k: '3.08.0' })).toBe(true);
    expect(m('semver_tilde', '1.2.3', { k: '1.2.9' })).toBe(true);
    expect(m('semver_tilde', '1.2.3', { k: '1.3.0' })).toBe(false);
    expect(m('semver_caret', '0.2.3', { k: '0.2.9' })).toBe(true);
    expect(m('semver_caret', '0.2.3', { k: '0.3.0' })).toBe(false);
    expect(m('semver_wildcard', '1.2.*', { k: '1.2.7' })).toBe(true);
    expect(m('semver_wildcard', '1.*', { k: '2.0.0' })).toBe(false);
    expect(m('semver_lt', '1.0.0', { k: 'not-a-version' })).toBe(false);
  });
});

describe('hash arithmetic', () => {
  it('matches the exact BigInt conversion on many identifiers', async () => {
    const { createHash } = await import('node:crypto');
    for (let i = 0; i < 20_000; i++) {
      const hex = createHash('sha1').update(`flag.user-${i}`).digest('hex').slice(0, 15);
      expect(flagHash('flag', `user-${i}`)).toBe(Number(BigInt('0x' + hex)) / 0xfffffffffffffff);
    }
  });

  it('hashes identifiers and keys beyond ASCII as their UTF-8 bytes', async () => {
    const { createHash } = await import('node:crypto');
    for (let i = 0; i < 2_000; i++) {
      const key = `clé-${i % 7}-🚀`;
      const id = `utilisateur-é-${i}-\u0000-日本`;
      const hex = createHash('sha1')
        .update(Buffer.from(`${key}.${id}variant`, 'utf8'))
        .digest('hex')
        .slice(0, 15);
      expect(flagHash(key, id, 'variant')).toBe(Number(BigInt('0x' + hex)) / 0xfffffffffffffff);
    }
  });
});

describe('hostile definitions and values', () => {
  it.each([{}, true, 0, 'abc', [null], [{ key: 'a', rollout_percentage: 'x' }], [{ rollout_percentage: 100 }]])(
    'a flag whose variants are %p fails alone; the other flags are answered',
    (variants) => {
      const broken = flag('broken', { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants } as never });
      const fine = flag('fine', { groups: [{ properties: [], rollout_percentage: 100 }] });
      const results = evaluateFlags([broken, fine], context());
      expect(results.get('fine')).toMatchObject({ enabled: true });
      expect(results.get('broken')).toMatchObject({ failed: true, enabled: false, variant: null, reason: { code: 'evaluation_error' } });
    },
  );

  it.each([
    ['properties a string', { groups: [{ properties: 'x' as never, rollout_percentage: 100 }] }],
    ['a null condition', { groups: [null as never] }],
    ['a property filter that is a number', { groups: [{ properties: [1 as never], rollout_percentage: 100 }] }],
    ['super_groups an object', { groups: [], super_groups: {} as never }],
    ['holdout_groups a string', { groups: [], holdout_groups: 'h' as never }],
  ])('a flag with %s fails alone instead of reading characters or throwing mid-request', (_label, filters) => {
    const broken = flag('broken', filters);
    const fine = flag('fine', { groups: [{ properties: [], rollout_percentage: 100 }] });
    const results = evaluateFlags([broken, fine], context({ personProperties: { x: 1 } }));
    expect(results.get('broken')).toMatchObject({ failed: true, reason: { code: 'evaluation_error' } });
    expect(results.get('fine')).toMatchObject({ enabled: true });
  });

  it('a match past the work budget fails that flag alone; a shorter value is matched', () => {
    const wide = flag('wide', { groups: [{ properties: [{ key: 'bio', type: 'person', operator: 'regex', value: '\\w{500}\\d' }], rollout_percentage: 100 }] });
    const fine = flag('fine', { groups: [{ properties: [], rollout_percentage: 100 }] });
    const long = evaluateFlags([wide, fine], context({ personProperties: { bio: 'a'.repeat(1_000_000) } }));
    expect(long.get('wide')).toMatchObject({ failed: true, reason: { code: 'evaluation_error' } });
    expect(long.get('fine')).toMatchObject({ enabled: true });
    const short = evaluateFlags([wide], context({ personProperties: { bio: `${'a'.repeat(500)}7` } }));
    expect(short.get('wide')).toMatchObject({ enabled: true, reason: { code: 'condition_match' } });
    expect(() => matchProperty({ key: 'bio', type: 'person', operator: 'regex', value: '\\w{500}\\d' }, { bio: 'a'.repeat(1_000_000) }, NOW)).toThrow(
      RegexBudgetExceededError,
    );
  });

  it('a stored definition without filters or with groups of the wrong type fails alone', () => {
    const noFilters = flag('no-filters', null as never);
    const groupsObject = flag('groups-object', { groups: { a: 1 } as never });
    const fine = flag('fine', { groups: [{ properties: [], rollout_percentage: 100 }] });
    const results = evaluateFlags([noFilters, groupsObject, fine], context());
    expect(results.get('no-filters')).toMatchObject({ failed: true, enabled: false, reason: { code: 'evaluation_error' } });
    expect(results.get('groups-object')).toMatchObject({ failed: true, reason: { code: 'evaluation_error' } });
    expect(results.get('fine')).toMatchObject({ enabled: true, reason: { code: 'condition_match' } });
  });

  it('matches catastrophic-backtracking patterns in linear time, with RE2 semantics', () => {
    const value = `${'a'.repeat(5_000)}!`;
    expect(matchProperty({ key: 'k', type: 'person', operator: 'regex', value: '^(a+)+$' }, { k: value }, NOW)).toBe(false);
    expect(matchProperty({ key: 'k', type: 'person', operator: 'regex', value: '^(a+)+$' }, { k: `${'a'.repeat(30)}!` }, NOW)).toBe(false);
    // Unanchored: a match anywhere in the value counts.
    expect(matchProperty({ key: 'k', type: 'person', operator: 'regex', value: 'a!' }, { k: value }, NOW)).toBe(true);
    expect(matchProperty({ key: 'k', type: 'person', operator: 'not_regex', value: '^(a+)+$' }, { k: value }, NOW)).toBe(true);
    expect(matchProperty({ key: 'k', type: 'person', operator: 'regex', value: '(?i)^A+!$' }, { k: value }, NOW)).toBe(true);
    // Look-arounds are not RE2: the pattern is invalid and matches nothing, for regex and not_regex.
    expect(matchProperty({ key: 'k', type: 'person', operator: 'regex', value: 'a(?=!)' }, { k: value }, NOW)).toBe(false);
    expect(matchProperty({ key: 'k', type: 'person', operator: 'not_regex', value: 'a(?=!)' }, { k: value }, NOW)).toBe(false);
  });
});
