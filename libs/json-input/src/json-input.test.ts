import { DEFAULT_INPUT_LIMITS, exceedsDepth, findInputProblem } from './index';

function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

describe('findInputProblem', () => {
  it('accepts ordinary JSON, including astral characters, safe integers and fractions', () => {
    const body = { key: 'beta-flag', name: 'Beta 🚀', filters: { groups: [{ rollout_percentage: 12.5, properties: [] }] }, ids: [2147483647, -3] };
    expect(findInputProblem(body)).toBeNull();
    expect(findInputProblem(nested(DEFAULT_INPUT_LIMITS.maxDepth - 1))).toBeNull();
  });

  it('names the field holding a NUL character, in values and in keys', () => {
    expect(findInputProblem({ filters: { groups: [{ variant: 'a\u0000b' }] } })).toEqual({
      attr: 'filters__groups__0__variant',
      detail: 'Null characters are not allowed.',
      code: 'null_characters_not_allowed',
    });
    expect(findInputProblem({ filters: { 'k\u0000': 1 } })).toMatchObject({ attr: 'filters', code: 'null_characters_not_allowed' });
  });

  it('refuses lone surrogates but not surrogate pairs', () => {
    expect(findInputProblem({ name: '\ud800' })).toEqual({
      attr: 'name',
      detail: 'Surrogate characters are not allowed: U+D800.',
      code: 'surrogate_characters_not_allowed',
    });
    expect(findInputProblem({ name: 'x\udc01' })).toMatchObject({ detail: 'Surrogate characters are not allowed: U+DC01.' });
    expect(findInputProblem({ name: '\ud83d\ude80' })).toBeNull();
  });

  it('refuses numbers JSON cannot carry exactly: non-finite and integers past 2^53', () => {
    expect(findInputProblem(JSON.parse('{"name": 1e309}'))).toMatchObject({ attr: 'name', code: 'invalid' });
    expect(findInputProblem(JSON.parse('{"key": 9223372036854775808}'))).toMatchObject({ attr: 'key', code: 'max_value' });
    expect(findInputProblem({ limit: 1e20 })).toMatchObject({ attr: 'limit', code: 'max_value' });
    expect(findInputProblem({ value: 0.1 })).toBeNull();
  });

  it('stops at the depth limit without recursing, however deep the value', () => {
    const problem = findInputProblem({ rollback_conditions: nested(100_000) });
    expect(problem).toMatchObject({ code: 'max_depth' });
    expect(problem!.attr!.startsWith('rollback_conditions__k__0__k__0')).toBe(true);
  });

  it('refuses over-long strings and keys', () => {
    const limits = { maxDepth: 10, maxStringLength: 5 };
    expect(findInputProblem({ name: '123456' }, limits)).toEqual({
      attr: 'name',
      detail: 'Ensure this field has no more than 5 characters.',
      code: 'max_length',
    });
    expect(findInputProblem({ abcdefg: 1 }, limits)).toMatchObject({ attr: null, code: 'max_length' });
  });

  it('prefixes attr with the name of the whole value', () => {
    expect(findInputProblem({ search: 'a\u0000' }, DEFAULT_INPUT_LIMITS, 'query')).toMatchObject({ attr: 'query__search' });
  });
});

describe('exceedsDepth', () => {
  it('counts levels of lists and objects, the value itself being level 1', () => {
    expect(exceedsDepth('text', 1)).toBe(false);
    expect(exceedsDepth({ a: [1, 2] }, 2)).toBe(false);
    expect(exceedsDepth({ a: [1, { b: 2 }] }, 2)).toBe(true);
    expect(exceedsDepth(nested(64))).toBe(false);
    expect(exceedsDepth(nested(65))).toBe(true);
    expect(exceedsDepth({ deep: nested(100_000) })).toBe(true);
  });
});
