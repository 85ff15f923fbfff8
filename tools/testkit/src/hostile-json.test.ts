import fc from 'fast-check';
import { hostileBodies, injectJson, jsonPaths } from './hostile-json';

describe('hostile JSON bodies', () => {
  const base = { key: 'k', filters: { groups: [{ rollout_percentage: 50 }] } };

  it('lists every path of a value', () => {
    expect(jsonPaths(base)).toEqual([
      [],
      ['key'],
      ['filters'],
      ['filters', 'groups'],
      ['filters', 'groups', 0],
      ['filters', 'groups', 0, 'rollout_percentage'],
    ]);
  });

  it('puts the raw text at the path, unchanged by any JavaScript parsing', () => {
    expect(injectJson(base, ['filters', 'groups', 0, 'rollout_percentage'], '9223372036854775808')).toBe(
      '{"key":"k","filters":{"groups":[{"rollout_percentage":9223372036854775808}]}}',
    );
    expect(injectJson(base, ['key'], '"\\u0000"')).toBe('{"key":"\\u0000","filters":{"groups":[{"rollout_percentage":50}]}}');
    expect(injectJson(base, ['filters'], '"\\ud800"', true)).toBe('{"key":"k","filters":{"groups":[{"rollout_percentage":50}],"\\ud800":1}}');
    expect(injectJson(base, [], '1e309')).toBe('1e309');
    // Replacement patterns such as $& inside the hostile text stay as they are.
    expect(injectJson(base, ['key'], '"$&$\'"')).toBe('{"key":"$&$\'","filters":{"groups":[{"rollout_percentage":50}]}}');
    expect(injectJson(base, ['filters'], '"$&"', true)).toBe('{"key":"k","filters":{"groups":[{"rollout_percentage":50}],"$&":1}}');
  });

  it('produces text a JSON parser reads, for every body', () => {
    fc.assert(
      fc.property(hostileBodies(base), (text) => {
        expect(() => JSON.parse(text)).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});
