import { decideAccessLevels, type AccessFacts } from './access-decision';
import type { AccessRule } from './access-controls.repository';

const ME = 7;
const OTHER = 8;
const rule = (r: Partial<AccessRule> & Pick<AccessRule, 'access_level'>): AccessRule => ({ resource_id: null, role_id: null, user_id: null, ...r });
const facts = (f: Partial<AccessFacts>): AccessFacts => ({ userId: ME, roleIds: [], rules: [], restrictedTo: [], ...f });
const object = (id: number, createdBy: number | null = OTHER) => ({ id, created_by_id: createdBy });

describe('decideAccessLevels', () => {
  it('gives "editor" when no rule applies, and "manager" on what the caller created whatever the rules say', () => {
    const levels = decideAccessLevels(facts({ rules: [rule({ resource_id: '2', access_level: 'none' })] }), [object(1), object(2, ME)]);
    expect(Object.fromEntries(levels)).toEqual({ 1: 'editor', 2: 'manager' });
  });

  it("prefers the caller's own rule on the object, then the object's default, then the project-wide rules", () => {
    const rules = [
      rule({ resource_id: '1', user_id: ME, access_level: 'viewer' }),
      rule({ resource_id: '1', access_level: 'manager' }),
      rule({ resource_id: '2', access_level: 'none' }),
      rule({ access_level: 'viewer' }),
      rule({ resource_id: '3', user_id: OTHER, access_level: 'manager' }),
    ];
    const levels = decideAccessLevels(facts({ rules }), [object(1), object(2), object(3)]);
    expect(Object.fromEntries(levels)).toEqual({ 1: 'viewer', 2: 'none', 3: 'viewer' });
  });

  it("takes the highest of the rules for the caller's roles, on the object and project-wide", () => {
    const rules = [
      rule({ resource_id: '1', role_id: 'r1', access_level: 'viewer' }),
      rule({ resource_id: '1', role_id: 'r2', access_level: 'manager' }),
      rule({ resource_id: '1', role_id: 'r3', access_level: 'none' }),
      rule({ role_id: 'r1', access_level: 'none' }),
      rule({ role_id: 'r2', access_level: 'viewer' }),
      rule({ access_level: 'manager' }),
    ];
    const levels = decideAccessLevels(facts({ roleIds: ['r1', 'r2'], rules }), [object(1), object(2)]);
    expect(Object.fromEntries(levels)).toEqual({ 1: 'manager', 2: 'viewer' });
  });

  it('lets only members of the roles an object is restricted to edit it; others may view, "none" stays none', () => {
    const restrictedTo = [
      { object_id: 1, role_id: 'r1' },
      { object_id: 2, role_id: 'r2' },
      { object_id: 3, role_id: 'r2' },
    ];
    const rules = [rule({ resource_id: '3', access_level: 'none' })];
    const levels = decideAccessLevels(facts({ roleIds: ['r1'], rules, restrictedTo }), [object(1), object(2), object(3), object(4)]);
    expect(Object.fromEntries(levels)).toEqual({ 1: 'editor', 2: 'viewer', 3: 'none', 4: 'editor' });
  });
});
