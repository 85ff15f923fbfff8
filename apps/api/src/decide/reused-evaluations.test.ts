import { evaluateFlags, type DateMargin, type FlagDefinition, type PropertyFilter } from '@sightline/flags';
import type { PersonForDecide } from '@sightline/persons';
import { keepEvaluation, reusedEvaluation, TIME_DEPENDENT_REUSE_MS, type EvaluationInputs } from './reused-evaluations';

const DAY_MS = 86_400_000;

const flagOf = (key: string, properties: PropertyFilter[] = []): FlagDefinition => ({
  id: 1,
  team_id: 1,
  key,
  name: '',
  active: true,
  ensure_experience_continuity: false,
  version: 1,
  filters: { groups: [{ properties, rollout_percentage: 100 }] },
});

const personOf = (properties: Record<string, unknown>): PersonForDecide => ({
  personUuid: 'p-1',
  properties,
  staticCohortIds: new Set(),
  hashKeyOverrides: {},
  groups: new Map(),
});

/** Evaluates as decide does, returning what it would keep. */
function evaluate(inputs: EvaluationInputs) {
  const dateMargin: DateMargin = { ms: Infinity };
  const results = evaluateFlags(inputs.flags, {
    distinctId: 'ann',
    personProperties: { ...inputs.person.properties },
    groups: {},
    groupProperties: {},
    groupTypeNames: new Map(),
    cohorts: new Map(),
    staticCohortIds: inputs.person.staticCohortIds,
    hashKeyOverrides: inputs.person.hashKeyOverrides,
    now: new Date(inputs.now),
    dateMargin,
  });
  return { results, dateMargin };
}

describe('reused flag evaluations', () => {
  it('gives the kept results for exactly the same flags, stored person and request, and nothing once any of them changed', () => {
    const flags = [flagOf('pro-only', [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }])];
    const inputs: EvaluationInputs = { flags, person: personOf({ plan: 'pro' }), requestKey: '["ann"]', now: 1_000 };
    expect(reusedEvaluation(inputs)).toBeUndefined();
    const { results, dateMargin } = evaluate(inputs);
    expect(dateMargin.ms).toBe(Infinity); // no date comparison: the clock does not matter
    const kept = keepEvaluation(inputs, results, false, dateMargin.ms);
    expect(reusedEvaluation({ ...inputs, now: 1_000 + 365 * DAY_MS })?.results).toBe(kept);
    // A person write (a new answer object from the person cache), a new flags load or another request: evaluated again.
    expect(reusedEvaluation({ ...inputs, person: personOf({ plan: 'pro' }) })).toBeUndefined();
    expect(reusedEvaluation({ ...inputs, flags: [...flags] })).toBeUndefined();
    expect(reusedEvaluation({ ...inputs, requestKey: '["ann-anon"]' })).toBeUndefined();
  });

  it('reuses results that compare against a relative date only while the comparison keeps its outcome, and at least a second', () => {
    const now = Date.UTC(2026, 0, 31);
    const flags = [flagOf('recent', [{ key: 'signup', type: 'person', operator: 'is_date_after', value: '-30d' }])];
    // Signed up 20 days ago: "after 30 days ago" holds for 10 more days.
    const inputs: EvaluationInputs = { flags, person: personOf({ signup: new Date(now - 20 * DAY_MS).toISOString() }), requestKey: '[]', now };
    const first = evaluate(inputs);
    expect(first.results.get('recent')!.enabled).toBe(true);
    expect(first.dateMargin.ms).toBe(10 * DAY_MS);
    keepEvaluation(inputs, first.results, false, first.dateMargin.ms);
    expect(reusedEvaluation({ ...inputs, now: now + 10 * DAY_MS })).toBeDefined();
    expect(evaluate({ ...inputs, now: now + 10 * DAY_MS + 1 }).results.get('recent')!.enabled).toBe(false);
    expect(reusedEvaluation({ ...inputs, now: now + 10 * DAY_MS + 1 })).toBeUndefined();

    // At the edge, the floor: a second.
    const edge: EvaluationInputs = { ...inputs, person: personOf({ signup: new Date(now - 30 * DAY_MS + 5).toISOString() }) };
    const atEdge = evaluate(edge);
    expect(atEdge.dateMargin.ms).toBe(5);
    keepEvaluation(edge, atEdge.results, false, atEdge.dateMargin.ms);
    expect(reusedEvaluation({ ...edge, now: now + TIME_DEPENDENT_REUSE_MS })).toBeDefined();
    expect(reusedEvaluation({ ...edge, now: now + TIME_DEPENDENT_REUSE_MS + 1 })).toBeUndefined();
  });

  it("keeps a copy of the results, never the engine's own objects, and answers with the copy", () => {
    const flags = [flagOf('pro-only', [{ key: 'plan', type: 'person', operator: 'exact', value: 'pro' }]), flagOf('all')];
    const inputs: EvaluationInputs = { flags, person: personOf({ plan: 'pro' }), requestKey: '["ann"]', now: 1_000 };
    const { results, dateMargin } = evaluate(inputs);
    const kept = keepEvaluation(inputs, results, false, dateMargin.ms);
    // The engine's objects are then garbage once the request is answered (reused-evaluations.ts says why that matters).
    expect(kept).not.toBe(results);
    for (const [key, result] of results) expect(kept.get(key)).not.toBe(result);
    expect([...kept]).toEqual([...results]);
    expect(reusedEvaluation(inputs)?.results).toBe(kept);
  });

  it('keeps at most eight request variants per stored person, the oldest going first', () => {
    const flags = [flagOf('all')];
    const person = personOf({});
    const inputs = (i: number): EvaluationInputs => ({ flags, person, requestKey: `[${i}]`, now: 0 });
    for (let i = 0; i < 9; i++) keepEvaluation(inputs(i), new Map(), false, Infinity);
    expect(reusedEvaluation(inputs(0))).toBeUndefined();
    expect(reusedEvaluation(inputs(1))).toBeDefined();
    expect(reusedEvaluation(inputs(8))).toBeDefined();
  });
});
