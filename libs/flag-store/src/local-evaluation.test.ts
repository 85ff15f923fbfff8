import type { FlagDefinition } from '@sightline/flags';
import type { ProjectFlagDefinitions } from './definitions.repository';
import { localEvaluationBody } from './local-evaluation';

const flag = (id: number, key: string, dependsOn: string[] = [], extra: Partial<FlagDefinition> = {}): FlagDefinition => ({
  id,
  team_id: 1,
  key,
  name: '',
  active: true,
  ensure_experience_continuity: false,
  version: 1,
  filters: { groups: [{ properties: dependsOn.map((ref) => ({ key: ref, type: 'flag', operator: 'flag_evaluates_to', value: true })) }] },
  ...extra,
});

function definitions(flags: FlagDefinition[]): ProjectFlagDefinitions {
  return {
    teamId: 1,
    flags,
    cohorts: new Map([
      [1, { id: 1, is_static: true, properties: null }],
      [2, { id: 2, is_static: false, properties: { type: 'OR', values: [] } }],
    ]),
    groupTypeNames: new Map([[0, 'company']]),
    groupTypeIndexes: new Map([['company', 0]]),
    usesStaticCohorts: false,
  };
}

describe('local evaluation body', () => {
  it('rewrites dependencies to keys with chains (dependencies first), empty for cycles', () => {
    const defs = definitions([
      flag(1, 'base'),
      flag(2, 'middle', ['1']),
      flag(3, 'top', ['middle', 'base']),
      flag(4, 'x', ['y']),
      flag(5, 'y', ['x']),
      flag(6, 'client-only', [], { evaluation_runtime: 'client' }),
    ]);
    const body = JSON.parse(localEvaluationBody(defs, true).text);
    const props = (key: string) => body.flags.find((f: FlagDefinition) => f.key === key).filters.groups[0].properties;
    expect(props('middle')).toEqual([expect.objectContaining({ key: 'base', dependency_chain: ['base'] })]);
    expect(props('top')[0].dependency_chain).toEqual(['base', 'middle']);
    expect(props('x')[0].dependency_chain).toEqual([]);
    expect(body.flags.map((f: FlagDefinition) => f.key)).not.toContain('client-only');
    expect(body.group_type_mapping).toEqual({ '0': 'company' });
    expect(Object.keys(body.cohorts)).toEqual(['2']);
  });

  it('serves a malformed stored definition as stored and still rewrites the other flags', () => {
    const malformed: Array<FlagDefinition['filters']> = [
      { groups: { a: 1 } as never },
      {
        groups: [
          null as never,
          { properties: 'x' as never },
          { properties: [7 as never, { key: '1', type: 'flag', operator: 'flag_evaluates_to', value: true }] },
        ],
      },
      'text' as never,
    ];
    const defs = definitions([flag(1, 'base'), ...malformed.map((filters, i) => flag(10 + i, `broken-${i}`, [], { filters })), flag(2, 'dependent', ['1'])]);
    const body = JSON.parse(localEvaluationBody(defs, false).text);
    const served = (key: string) => body.flags.find((f: FlagDefinition) => f.key === key).filters;
    expect(served('broken-0')).toEqual({ groups: { a: 1 } });
    expect(served('broken-1').groups.slice(0, 2)).toEqual([null, { properties: 'x' }]);
    expect(served('broken-1').groups[2].properties).toEqual([7, expect.objectContaining({ key: 'base', dependency_chain: ['base'] })]);
    expect(served('broken-2')).toBe('text');
    expect(served('dependent').groups[0].properties[0]).toMatchObject({ key: 'base', dependency_chain: ['base'] });
  });

  it('gives a stable ETag per content and cohort choice', () => {
    const defs = definitions([flag(1, 'a')]);
    expect(localEvaluationBody(defs, true).etag).toBe(localEvaluationBody(definitions([flag(1, 'a')]), true).etag);
    expect(localEvaluationBody(defs, false).etag).not.toBe(localEvaluationBody(defs, true).etag);
  });
});
