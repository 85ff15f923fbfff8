import { isJsonObject } from '@sightline/json-input';
import {
  filtersOf,
  parsePropertyFilters,
  PropertyFilterError,
  re2Problem,
  selectorRegex,
  type PropertyFilter,
  type PropertyGroup,
} from '@sightline/properties';

/** How a step compares a URL, an element text or an href. */
export type TextMatching = 'exact' | 'contains' | 'regex';

/**
 * One step of an action: PostHog's ActionStepJSON (posthog/models/action/action.py). Every
 * condition set must hold; the element conditions (selector, tag_name, text, href) apply to
 * `$autocapture` steps only, as in PostHog.
 */
export interface ActionStep {
  event?: string | null;
  url?: string | null;
  url_matching?: TextMatching | null;
  properties?: PropertyFilter[] | null;
  selector?: string | null;
  text?: string | null;
  text_matching?: TextMatching | null;
  href?: string | null;
  href_matching?: TextMatching | null;
  tag_name?: string | null;
}

/** An action as queries need it. */
export interface ActionDefinition {
  id: number;
  name: string;
  steps: ActionStep[];
}

/** A step that cannot be saved; `attr` names the field as PostHog's API does (`steps__0__url`). */
export class ActionStepError extends Error {
  constructor(
    readonly attr: string,
    message: string,
    readonly code = 'invalid_input',
  ) {
    super(message);
  }
}

const MATCHINGS: readonly TextMatching[] = ['exact', 'contains', 'regex'];
/** Filter types a step's properties may use (PostHog accepts any; these are the ones queries apply). */
const STEP_FILTER_TYPES = new Set(['event', 'person', 'element', 'cohort', 'group', 'hogql']);
/** The most steps one action may have. */
export const MAX_ACTION_STEPS = 100;
/** The longest text a step field may hold (PostHog's fields are unbounded text). */
const MAX_STEP_TEXT = 65_535;

/** A DRF CharField (numbers taken as their text); '' and null both mean "no condition". */
function optionalText(step: Record<string, unknown>, key: string, attr: string): string | null {
  const value = step[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw new ActionStepError(`${attr}__${key}`, 'Not a valid string.', 'invalid');
  if (value.length > MAX_STEP_TEXT)
    throw new ActionStepError(`${attr}__${key}`, `Ensure this field has no more than ${MAX_STEP_TEXT} characters.`, 'max_length');
  return value;
}

/** A DRF ChoiceField with PostHog's default when the key is absent. */
function matching(step: Record<string, unknown>, key: string, attr: string, absent: TextMatching | null): TextMatching | null {
  const value = step[key];
  if (value === undefined) return absent;
  if (value === null) return null;
  if (!MATCHINGS.includes(value as TextMatching))
    throw new ActionStepError(`${attr}__${key}`, `"${String(value).slice(0, 200)}" is not a valid choice.`, 'invalid_choice');
  return value as TextMatching;
}

function checkPattern(pattern: string, attr: string) {
  const problem = re2Problem(pattern);
  if (problem) throw new ActionStepError(attr, `Invalid regular expression (RE2 syntax): ${problem.slice(0, 200)}`, 'invalid_value');
}

function parseStep(raw: unknown, where: string): ActionStep {
  if (!isJsonObject(raw)) throw new ActionStepError(where, 'Each step must be an object.', 'invalid');
  // Keys in PostHog's stored order; a missing url_matching is "contains" (its dataclass default),
  // the other matchings stay null and read as exact.
  const step: ActionStep = {
    tag_name: optionalText(raw, 'tag_name', where),
    text: optionalText(raw, 'text', where),
    text_matching: matching(raw, 'text_matching', where, null),
    href: optionalText(raw, 'href', where),
    href_matching: matching(raw, 'href_matching', where, null),
    selector: optionalText(raw, 'selector', where),
    url: optionalText(raw, 'url', where),
    url_matching: matching(raw, 'url_matching', where, 'contains'),
    event: optionalText(raw, 'event', where),
    properties: null,
  };
  // Patterns are checked when saved: a bad one would otherwise fail every query that uses the action.
  for (const key of ['url', 'text', 'href'] as const) {
    const text = step[key];
    if (text && step[`${key}_matching`] === 'regex') checkPattern(text, `${where}__${key}`);
  }
  if (step.selector) checkPattern(selectorRegex(step.selector), `${where}__selector`);
  const properties = raw['properties'];
  if (properties !== undefined && properties !== null) {
    if (!Array.isArray(properties)) throw new ActionStepError(`${where}__properties`, 'properties must be a list of property filters.', 'not_a_list');
    try {
      parsePropertyFilters(properties, `${where}__properties`, { types: STEP_FILTER_TYPES });
    } catch (error) {
      if (error instanceof PropertyFilterError) throw new ActionStepError(error.attr, error.message, error.code);
      throw error;
    }
    step.properties = properties as PropertyFilter[];
  }
  return step;
}

/**
 * Checks an action's steps as PostHog's API takes them (its field names, its defaults, unknown
 * keys ignored) and answers them normalised, every field present. Each problem names its field.
 */
export function parseActionSteps(value: unknown, attr = 'steps'): ActionStep[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ActionStepError(attr, 'Expected a list of steps.', 'not_a_list');
  if (value.length > MAX_ACTION_STEPS) throw new ActionStepError(attr, `An action may have at most ${MAX_ACTION_STEPS} steps.`, 'max_length');
  return value.map((raw, i) => parseStep(raw, `${attr}__${i}`));
}

/** A step's property filters as one group (checked when the step was saved). */
export function stepPropertyGroup(step: ActionStep): PropertyGroup {
  return parsePropertyFilters(step.properties ?? [], 'properties', { types: STEP_FILTER_TYPES });
}

/**
 * Every property filter in an action's steps, so a query can load what they name (cohorts,
 * HogQL expressions) before compiling the action.
 */
export function actionPropertyFilters(action: ActionDefinition): PropertyFilter[] {
  return action.steps.flatMap((step) => filtersOf(stepPropertyGroup(step)));
}
