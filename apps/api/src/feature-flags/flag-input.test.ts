import { ApiError } from '@sightline/http';
import { parseFlagInput, type FlagRef, type FlagValidationContext } from './flag-input';

function context(overrides: Partial<FlagValidationContext> = {}, flags: FlagRef[] = []): FlagValidationContext {
  return {
    method: 'POST',
    keyTaken: async (key) => key === 'taken',
    cohortExists: async (id) => id === 7,
    findFlag: async (ref) => flags.find((f) => f.id === ref || f.key === ref) ?? null,
    missingDashboards: async () => [],
    ...overrides,
  };
}

async function failure(body: unknown, ctx = context()) {
  try {
    await parseFlagInput(body, ctx);
  } catch (error) {
    if (error instanceof ApiError) return error.toBody();
    throw error;
  }
  throw new Error('expected a validation error');
}

const everyone = { groups: [{ properties: [], rollout_percentage: 100 }] };

describe('parseFlagInput', () => {
  it('checks uniqueness before the key pattern, as PostHog does', async () => {
    expect(await failure({ key: 'taken' })).toMatchObject({ code: 'unique', attr: 'key' });
    expect(await failure({ key: 'has space' })).toMatchObject({ code: 'invalid_key', attr: 'key' });
  });
  it('accepts numbers as keys (DRF CharField) and requires a key only on create', async () => {
    expect((await parseFlagInput({ key: 123, filters: everyone }, context())).key).toBe('123');
    const current = { id: 1, key: 'k', filters: everyone };
    expect(await parseFlagInput({ name: 'n' }, context({ method: 'PATCH', current }))).toEqual({ name: 'n' });
  });
  it('keeps the stored filters when a PATCH sends filters without groups', async () => {
    const current = { id: 1, key: 'k', filters: { groups: [{ properties: [], rollout_percentage: 5 }] } };
    expect((await parseFlagInput({ filters: { payloads: {} } }, context({ method: 'PATCH', current }))).filters).toBe(current.filters);
  });
  it('accepts cohorts that exist and group properties of the flag’s group type', async () => {
    const cohort = { groups: [{ properties: [{ key: 'id', type: 'cohort', value: '7' }], rollout_percentage: 100 }] };
    expect((await parseFlagInput({ key: 'c', filters: cohort }, context())).filters).toEqual(cohort);
    const group = {
      aggregation_group_type_index: 1,
      groups: [{ properties: [{ key: 'size', type: 'group', group_type_index: 1, value: '5', operator: 'gt' }] }],
    };
    expect((await parseFlagInput({ key: 'g', filters: group }, context())).filters).toEqual(group);
    expect(await failure({ key: 'g2', filters: { ...group, aggregation_group_type_index: 0 } })).toMatchObject({
      detail: 'Filters are not valid (can only use group properties)',
    });
  });
  it('refuses flag dependencies by key, on disabled flags, and cycles through stored flags', async () => {
    const dep = (key: unknown) => ({ groups: [{ properties: [{ key, type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] });
    expect(await failure({ key: 'a', filters: dep('b') })).toMatchObject({
      detail: "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: 'b'",
    });
    const flags: FlagRef[] = [
      { id: 2, key: 'off', active: false, filters: everyone },
      { id: 3, key: 'b', active: true, filters: dep(4) },
      { id: 4, key: 'c', active: true, filters: dep(5) },
      { id: 5, key: 'a', active: true, filters: everyone },
    ];
    expect(await failure({ key: 'x', filters: dep(2) }, context({}, flags))).toMatchObject({
      detail: "Cannot create dependency on disabled flag 'off' (ID: 2). Flag dependencies must reference active flags only.",
    });
    const current = { id: 5, key: 'a', filters: everyone };
    expect(await failure({ filters: dep(3) }, context({ method: 'PATCH', current }, flags))).toMatchObject({
      detail: 'Circular dependency detected: a → b → c → a',
    });
  });
  it('reads DRF booleans and refuses other values', async () => {
    expect((await parseFlagInput({ key: 'k', active: 'false', ensure_experience_continuity: 1 }, context())).active).toBe(false);
    expect(await failure({ key: 'k', deleted: 'perhaps' })).toEqual({
      type: 'validation_error',
      code: 'invalid',
      detail: 'Must be a valid boolean.',
      attr: 'deleted',
    });
  });

  describe('hostile input, without the /api guard in front', () => {
    const nested = (depth: number) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown;
    const person = (property: Record<string, unknown>) => ({ groups: [{ properties: [{ type: 'person', ...property }], rollout_percentage: 100 }] });

    it.each([
      [
        'rollback_conditions nested 10,000 levels',
        { key: 'k', filters: everyone, rollback_conditions: nested(10_000) },
        'max_depth',
        /^rollback_conditions__0__0/,
      ],
      [
        'a filter value nested 10,000 levels',
        { key: 'k', filters: person({ key: 'p', value: nested(10_000) }) },
        'max_depth',
        /^filters__groups__0__properties__0__value/,
      ],
      ['a key past 2^53', { key: 2 ** 63, filters: everyone }, 'max_value', /^key$/],
      ['an infinite name', { key: 'k', name: Infinity, filters: everyone }, 'invalid', /^name$/],
      ['a NUL in a tag', { key: 'k', filters: everyone, tags: ['a\u0000'] }, 'null_characters_not_allowed', /^tags__0$/],
      [
        'a lone surrogate in a filter key',
        { key: 'k', filters: person({ key: '\ud800', value: 'x' }) },
        'surrogate_characters_not_allowed',
        /^filters__groups__0__properties__0__key$/,
      ],
    ])('%s is a 400 naming the field', async (_label, body, code, attr) => {
      expect(await failure(body)).toMatchObject({ type: 'validation_error', code, attr: expect.stringMatching(attr) });
    });

    it('keeps DRF CharField’s numbers as text when they are exact', async () => {
      expect((await parseFlagInput({ key: Number.MAX_SAFE_INTEGER, filters: everyone }, context())).key).toBe('9007199254740991');
      expect(await failure({ key: Number.MAX_SAFE_INTEGER + 1, filters: everyone })).toMatchObject({ code: 'max_value', attr: 'key' });
    });

    it.each([
      ['variants {}', { variants: {} }],
      ['variants true', { variants: true }],
      ['variants 0', { variants: 0 }],
      ['a variant without a key', { variants: [{ rollout_percentage: 100 }] }],
      ['a variant with a numeric key', { variants: [{ key: 1, rollout_percentage: 100 }] }],
      ['a rollout that is text', { variants: [{ key: 'a', rollout_percentage: '100' }] }],
      [
        'a rollout past 100',
        {
          variants: [
            { key: 'a', rollout_percentage: 150 },
            { key: 'b', rollout_percentage: -50 },
          ],
        },
      ],
      [
        'duplicate keys',
        {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'a', rollout_percentage: 50 },
          ],
        },
      ],
    ])('refuses %s', async (_label, multivariate) => {
      expect(await failure({ key: 'k', filters: { ...everyone, multivariate } })).toMatchObject({ attr: 'filters' });
    });

    it('bounds name, variant keys and property keys', async () => {
      expect(await failure({ key: 'k', name: 'n'.repeat(65_536), filters: everyone })).toEqual({
        type: 'validation_error',
        code: 'max_length',
        detail: 'Ensure this field has no more than 65535 characters.',
        attr: 'name',
      });
      const variants = { variants: [{ key: 'v'.repeat(401), rollout_percentage: 100 }] };
      expect(await failure({ key: 'k', filters: { ...everyone, multivariate: variants } })).toMatchObject({ code: 'max_length', attr: 'filters' });
      expect(await failure({ key: 'k', filters: person({ key: 'p'.repeat(401), value: 'x' }) })).toMatchObject({ code: 'max_length', attr: 'filters' });
      const fine = {
        key: 'k',
        name: 'n'.repeat(65_535),
        filters: { ...everyone, multivariate: { variants: [{ key: 'v'.repeat(400), rollout_percentage: 100 }] } },
      };
      expect((await parseFlagInput(fine, context())).name).toHaveLength(65_535);
    });

    it.each([
      ['an unknown operator', { key: 'p', operator: 'o'.repeat(100_000), value: 'x' }, 'invalid_operator'],
      ['a pattern RE2 cannot compile', { key: 'p', operator: 'regex', value: '(?<=a)b' }, 'invalid_value'],
      ['a regex value that is a list', { key: 'p', operator: 'regex', value: ['x'.repeat(100_000)] }, 'invalid_value'],
      ['between with one bound', { key: 'p', operator: 'between', value: [1] }, 'invalid_value'],
      ['between with an object bound', { key: 'p', operator: 'between', value: [1, {}] }, 'invalid_value'],
      ['in on a person property', { key: 'p', operator: 'in', value: 'x' }, 'invalid_operator'],
    ])('refuses %s, quoting at most 200 characters of it', async (_label, property, code) => {
      const answer = await failure({ key: 'k', filters: person(property) });
      expect(answer).toMatchObject({ attr: 'filters', code });
      expect(answer.detail.length).toBeLessThan(500);
    });

    it('accepts between with numbers or numeric text', async () => {
      const filters = person({ key: 'p', operator: 'between', value: ['1', 5] });
      expect((await parseFlagInput({ key: 'k', filters }, context())).filters).toEqual(filters);
    });

    it.each([2 ** 31, -1, 0, 'abc', 1.5])('refuses cohort id %p without asking the store', async (value) => {
      const cohortExists = jest.fn(async () => true);
      const filters = { groups: [{ properties: [{ key: 'id', type: 'cohort', value }] }] };
      expect(await failure({ key: 'k', filters }, context({ cohortExists }))).toMatchObject({ code: 'cohort_does_not_exist', attr: 'filters' });
      expect(cohortExists).not.toHaveBeenCalled();
    });
  });
});
