import type { ProjectFlagDefinitions } from '@sightline/flag-store';
import { evaluateFlags, type FlagDefinition, type PropertyFilter } from '@sightline/flags';
import type { PersonForDecide } from '@sightline/persons';
import { keepEvaluation, reusedEvaluation, TIME_DEPENDENT_REUSE_MS, type EvaluationInputs } from './reused-evaluations';

const flag = (key: string, properties: PropertyFilter[] = []): FlagDefinition => ({
  id: 1,
  team_id: 1,
  key,
  name: '',
  active: true,
  ensure_experience_continuity: false,
  version: 1,
  filters: { groups: [{ properties, rollout_percentage: 100 }] },
});

const definitionsOf = (flags: FlagDefinition[]): ProjectFlagDefinitions => ({
  teamId: 1,
  flags,
  cohorts: new Map(),
  groupTypeNames: new Map(),
  groupTypeIndexes: new Map(),
  usesStaticCohorts: false,
});

const personOf = (plan: string): PersonForDecide => ({
  personUuid: 'p-1',
  properties: { plan },
  staticCohortIds: new Set(),
  hashKeyOverrides: {},
  groups: new Map(),
});

function evaluate(inputs: EvaluationInputs) {
  return evaluateFlags(inputs.flags, {
    distinctId: 'ann',
    personProperties: { ...inputs.person.properties },
    groups: {},
    groupProperties: {},
    groupTypeNames: inputs.definitions.groupTypeNames,
    cohorts: inputs.definitions.cohorts,
    staticCohortIds: inputs.person.staticCohortIds,
    hashKeyOverrides: inputs.person.hashKeyOverrides,
    now: new Date(inputs.now),
  });
}

describe('reused flag evaluations', () => {
  it('gives the kept results for exactly the same flags, stored person and request, and nothing once any of them changed', () => {
    const definitions = definitionsOf([flag('pro-only', [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }])]);
    const person = personOf('pro');
    const inputs: EvaluationInputs = { definitions, flags: definitions.flags, person, requestKey: '["ann"]', now: 1_000 };
    expect(reusedEvaluation(inputs)).toBeUndefined();
    const results = evaluate(inputs);
    keepEvaluation(inputs, results, false);
    expect(reusedEvaluation({ ...inputs, now: 1_000_000 })).toEqual({ results, failed: false, evaluatedAt: 1_000 });
    // A person write (a new answer object from the person cache), new definitions or another request: evaluated again.
    expect(reusedEvaluation({ ...inputs, person: personOf('pro') })).toBeUndefined();
    const reloaded = definitionsOf([...definitions.flags]);
    expect(reusedEvaluation({ ...inputs, definitions: reloaded, flags: reloaded.flags })).toBeUndefined();
    expect(reusedEvaluation({ ...inputs, requestKey: '["ann-anon"]' })).toBeUndefined();
  });

  it('reuses results of definitions that compare dates for at most TIME_DEPENDENT_REUSE_MS', () => {
    const definitions = definitionsOf([flag('recent', [{ key: 'signup', type: 'person', operator: 'is_date_after', value: '-30d' }])]);
    const inputs: EvaluationInputs = { definitions, flags: definitions.flags, person: personOf('free'), requestKey: '[]', now: 5_000 };
    keepEvaluation(inputs, evaluate(inputs), false);
    expect(reusedEvaluation({ ...inputs, now: 5_000 + TIME_DEPENDENT_REUSE_MS })).toBeDefined();
    expect(reusedEvaluation({ ...inputs, now: 5_001 + TIME_DEPENDENT_REUSE_MS })).toBeUndefined();
  });

  it('keeps at most eight request variants per stored person, the oldest going first', () => {
    const definitions = definitionsOf([flag('all')]);
    const inputs = (i: number): EvaluationInputs => ({ definitions, flags: definitions.flags, person: personOf('x'), requestKey: `[${i}]`, now: 0 });
    const person = inputs(0).person;
    for (let i = 0; i < 9; i++) keepEvaluation({ ...inputs(i), person }, new Map(), false);
    expect(reusedEvaluation({ ...inputs(0), person })).toBeUndefined();
    expect(reusedEvaluation({ ...inputs(1), person })).toBeDefined();
    expect(reusedEvaluation({ ...inputs(8), person })).toBeDefined();
  });
});
