import { holdsPowersOf, powerBeyond, type KeyPowers } from './key-powers';

const key = (scopes: string[], scopedTeams: number[] | null = null, scopedOrganizations: string[] | null = null): KeyPowers => ({
  scopes,
  scopedTeams,
  scopedOrganizations,
});

describe('powerBeyond', () => {
  it('compares scopes: * only through *, read through write', () => {
    expect(powerBeyond(key(['*']), key(['*']))).toBeNull();
    expect(powerBeyond(key(['personal_api_key:write']), key(['*']))).toBe("the scope '*'");
    expect(powerBeyond(key(['insight:write']), key(['insight:read', 'insight:write']))).toBeNull();
    expect(powerBeyond(key(['insight:read']), key(['insight:write']))).toBe("the scope 'insight:write'");
    expect(powerBeyond(key(['*']), key(['insight:read', 'person:write']))).toBeNull();
  });

  it('treats no project restriction as more than any list of projects', () => {
    expect(powerBeyond(key(['*'], [2]), key(['*']))).toBe('access to every project');
    expect(powerBeyond(key(['*'], [2]), key(['*'], [1, 2]))).toBe('project 1');
    expect(powerBeyond(key(['*'], [1, 2]), key(['*'], [2]))).toBeNull();
    expect(powerBeyond(key(['*']), key(['*'], [2]))).toBeNull();
    expect(powerBeyond(key(['*'], [1, 2]), key(['*'], []))).toBeNull();
  });

  it('treats no organisation restriction as more than any list, comparing ids without case', () => {
    expect(powerBeyond(key(['*'], null, ['ABC']), key(['*']))).toBe('access to every organization');
    expect(powerBeyond(key(['*'], null, ['ABC']), key(['*'], null, ['abc']))).toBeNull();
    expect(powerBeyond(key(['*'], null, ['abc']), key(['*'], null, ['def']))).toBe('organization def');
    expect(holdsPowersOf(key(['*']), key(['*'], null, ['abc']))).toBe(true);
  });

  it('holds a key with exactly its own powers', () => {
    const own = key(['personal_api_key:write', 'insight:read'], [3], ['abc']);
    expect(holdsPowersOf(own, { ...own })).toBe(true);
  });
});
