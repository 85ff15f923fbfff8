import type { ProjectFlagDefinitions } from '@sightline/flag-store';
import type { FlagDefinition, FlagResult } from '@sightline/flags';
import type { PersonForDecide } from '@sightline/persons';

/**
 * An SDK asks for the same person's flags with the same body on every page load: the engine's
 * results are kept for the exact inputs they were computed from and given again while none of
 * them changed. The inputs are the flags (a definitions load: a flag change announced, or the
 * 30 s reload, makes new ones), the stored person as decide's person cache answers it (the very
 * answer object: a write announced, a background refresh or the age limit replaces it), and
 * what the request adds (distinct and device id, the properties it and GeoIP set, its groups
 * and group properties, the keys asked for). Only the clock is outside them: definitions with
 * a date comparison (`is_date_after`, `is_date_before`, `is_date_exact`, relative dates, in a
 * flag or a cohort) answer from results at most TIME_DEPENDENT_REUSE_MS old.
 * Answers without a stored person (a new visitor) or with a store unavailable are not kept.
 */
export const TIME_DEPENDENT_REUSE_MS = 1_000;
/** Most request variants kept per stored person (its distinct ids, sets of overrides). */
const MOST_PER_PERSON = 8;

interface Reused {
  results: ReadonlyMap<string, FlagResult>;
  failed: boolean;
  evaluatedAt: number;
}

const byFlags = new WeakMap<readonly FlagDefinition[], WeakMap<PersonForDecide, Map<string, Reused>>>();
const timeDependent = new WeakMap<ProjectFlagDefinitions, boolean>();

/** Whether any flag or cohort of the definitions compares dates (its answer then depends on the clock). */
function comparesDates(definitions: ProjectFlagDefinitions): boolean {
  let known = timeDependent.get(definitions);
  if (known === undefined) {
    const text = JSON.stringify([definitions.flags.map((f) => f.filters), [...definitions.cohorts.values()]]);
    known = /"operator":"is_(?:relative_)?date/.test(text);
    timeDependent.set(definitions, known);
  }
  return known;
}

export interface EvaluationInputs {
  definitions: ProjectFlagDefinitions;
  flags: readonly FlagDefinition[];
  person: PersonForDecide;
  /** Everything else the evaluation reads from the request, as one text. */
  requestKey: string;
  now: number;
}

/** The results kept for exactly these inputs, or undefined. */
export function reusedEvaluation(inputs: EvaluationInputs): Reused | undefined {
  const kept = byFlags.get(inputs.flags)?.get(inputs.person)?.get(inputs.requestKey);
  if (!kept) return undefined;
  if (comparesDates(inputs.definitions) && inputs.now - kept.evaluatedAt > TIME_DEPENDENT_REUSE_MS) return undefined;
  return kept;
}

/** Keeps the results evaluated from these inputs (a stored person's, every store available). */
export function keepEvaluation(inputs: EvaluationInputs, results: ReadonlyMap<string, FlagResult>, failed: boolean): void {
  let persons = byFlags.get(inputs.flags);
  if (!persons) byFlags.set(inputs.flags, (persons = new WeakMap()));
  let variants = persons.get(inputs.person);
  if (!variants) persons.set(inputs.person, (variants = new Map()));
  variants.delete(inputs.requestKey);
  variants.set(inputs.requestKey, { results, failed, evaluatedAt: inputs.now });
  if (variants.size > MOST_PER_PERSON) variants.delete(variants.keys().next().value!);
}
