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
});
