import type { FlagDefinition, FlagResult } from '@sightline/flags';
import type { PersonForDecide } from '@sightline/persons';

/**
 * An SDK asks for the same person's flags with the same body on every page load: the engine's
 * results are kept for the exact inputs they were computed from and given again while none of
 * them changed. The inputs are the flags (a definitions load: a flag change announced, or the
 * 30 s reload, makes new ones), the stored person as decide's person cache answers it (the very
 * answer object: a write announced, a background refresh or the age limit replaces it), and
 * what the request adds (distinct and device id, the properties it and GeoIP set, its groups
 * and group properties, the keys asked for). And the clock, for date comparisons against a
 * relative date (`is_date_after: -30d`): the engine reports how long their outcomes hold
 * (DateMargin); results are reused that long, and never for less than TIME_DEPENDENT_REUSE_MS
 * (the documented bound: such a flag may answer as it did up to a second before).
 * Answers without a stored person (a new visitor) or with a store unavailable are not kept.
 */
export const TIME_DEPENDENT_REUSE_MS = 1_000;
/** Most request variants kept per stored person (its distinct ids, sets of overrides). */
const MOST_PER_PERSON = 8;

interface Reused {
  results: ReadonlyMap<string, FlagResult>;
  failed: boolean;
  /** Until when the results hold (ms since the epoch). */
  validUntil: number;
}

const byFlags = new WeakMap<readonly FlagDefinition[], WeakMap<PersonForDecide, Map<string, Reused>>>();

export interface EvaluationInputs {
  flags: readonly FlagDefinition[];
  person: PersonForDecide;
  /** Everything else the evaluation reads from the request, as one text. */
  requestKey: string;
  now: number;
}

/** The results kept for exactly these inputs, still valid at `now`, or undefined. */
export function reusedEvaluation(inputs: EvaluationInputs): Reused | undefined {
  const kept = byFlags.get(inputs.flags)?.get(inputs.person)?.get(inputs.requestKey);
  return kept && inputs.now <= kept.validUntil ? kept : undefined;
}

/**
 * Keeps the results evaluated from these inputs (a stored person's, every store available);
 * `dateMarginMs` is the engine's DateMargin of that evaluation. Returns what it kept, which the
 * caller answers with (the answer's text is then kept with it, decide-response.ts).
 *
 * It keeps a copy, never the engine's own result objects: V8 decides per allocation site whether
 * to allocate straight into the old generation ("pretenuring"), from how many of the site's
 * objects outlived two scavenges. Kept results live for seconds, so keeping the engine's objects
 * taught its sites that their objects live long, and from then on every evaluation that is not
 * kept (a new visitor's, 10% of bench:flags' requests) was allocated in the old generation and
 * freed only by a mark-compact (its pauses were decide's p99 in embedded mode). The copies
 * come from this function's own site; the engine's objects now die young.
 */
export function keepEvaluation(
  inputs: EvaluationInputs,
  results: ReadonlyMap<string, FlagResult>,
  failed: boolean,
  dateMarginMs: number,
): ReadonlyMap<string, FlagResult> {
  let persons = byFlags.get(inputs.flags);
  if (!persons) byFlags.set(inputs.flags, (persons = new WeakMap()));
  let variants = persons.get(inputs.person);
  if (!variants) persons.set(inputs.person, (variants = new Map()));
  const kept = new Map<string, FlagResult>();
  for (const [key, result] of results) kept.set(key, { ...result });
  variants.delete(inputs.requestKey);
  variants.set(inputs.requestKey, { results: kept, failed, validUntil: inputs.now + Math.max(TIME_DEPENDENT_REUSE_MS, dateMarginMs) });
  if (variants.size > MOST_PER_PERSON) variants.delete(variants.keys().next().value!);
  return kept;
}
