import { isJsonObject } from '@sightline/json-input';
import { parsePropertyFilters, PropertyFilterError, re2Problem, type PropertyGroup } from '@sightline/properties';
import { parseSelector, SelectorError, type TextMatching } from './elements-chain.sql';

/** PostHog's ActionStepJSON (posthog/models/action/action.py). */
export interface ActionStep {
  event: string | null;
  properties: unknown[] | null;
  selector: string | null;
  tag_name: string | null;
  text: string | null;
  text_matching: TextMatching | null;
  href: string | null;
  href_matching: TextMatching | null;
  url: string | null;
  url_matching: TextMatching | null;
}

/** An action as queries need it. */
export interface ActionDefinition {
  id: number;
  name: string;
  steps: ActionStep[];
}

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
const STEP_FILTER_TYPES = new Set(['event', 'person', 'element', 'cohort', 'group', 'hogql']);
/** The most steps one action may have. */
export const MAX_ACTION_STEPS = 100;

function optionalText(step: Record<string, unknown>, key: string, attr: string): string | null {
  const value = step[key];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw new ActionStepError(`${attr}__${key}`, `${key} must be a string.`, 'invalid');
  if (value.length > 65_535) throw new ActionStepError(`${attr}__${key}`, `${key} is too long.`, 'max_length');
  return value;
}

function matching(step: Record<string, unknown>, key: string, attr: string, fallback: TextMatching | null): TextMatching | null {
  const value = step[key];
  if (value === undefined || value === null) return fallback;
  if (!MATCHINGS.includes(value as TextMatching))
    throw new ActionStepError(`${attr}__${key}`, `"${String(value).slice(0, 40)}" is not a valid choice.`, 'invalid_choice');
  return value as TextMatching;
}

/** Checks an action's steps as PostHog's editor sends them; each problem names its field. */
export function parseActionSteps(value: unknown, attr = 'steps'): ActionStep[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ActionStepError(attr, 'steps must be a list.', 'not_a_list');
  if (value.length > MAX_ACTION_STEPS) throw new ActionStepError(attr, `An action may have at most ${MAX_ACTION_STEPS} steps.`, 'max_length');
  return value.map((raw, i) => {
    const where = `${attr}__${i}`;
    if (!isJsonObject(raw)) throw new ActionStepError(where, 'Each step must be an object.', 'invalid');
    const step: ActionStep = {
      event: optionalText(raw, 'event', where),
      properties: null,
      selector: optionalText(raw, 'selector', where),
      tag_name: optionalText(raw, 'tag_name', where),
      text: optionalText(raw, 'text', where),
      text_matching: null,
      href: optionalText(raw, 'href', where),
      href_matching: null,
      url: optionalText(raw, 'url', where),
      // PostHog's default for URLs is "contains"; text and href default to exact.
      url_matching: null,
    };
    step.url_matching = step.url ? matching(raw, 'url_matching', where, 'contains') : matching(raw, 'url_matching', where, null);
    step.text_matching = matching(raw, 'text_matching', where, step.text ? 'exact' : null);
    step.href_matching = matching(raw, 'href_matching', where, step.href ? 'exact' : null);
    for (const [key, mode] of [
      ['url', step.url_matching],
      ['text', step.text_matching],
      ['href', step.href_matching],
    ] as const) {
      const text = step[key];
      if (text && mode === 'regex') {
        const problem = re2Problem(text);
        if (problem) throw new ActionStepError(`${where}__${key}`, `Invalid regular expression (RE2 syntax): ${problem.slice(0, 200)}`, 'invalid_value');
      }
    }
    if (step.selector) {
      try {
        parseSelector(step.selector);
      } catch (error) {
        if (error instanceof SelectorError) throw new ActionStepError(`${where}__selector`, error.message, 'invalid_value');
        throw error;
      }
    }
    if (raw['properties'] !== undefined && raw['properties'] !== null) {
      if (!Array.isArray(raw['properties'])) throw new ActionStepError(`${where}__properties`, 'properties must be a list of property filters.', 'not_a_list');
      try {
        parsePropertyFilters(raw['properties'], `${where}__properties`, { types: STEP_FILTER_TYPES });
      } catch (error) {
        if (error instanceof PropertyFilterError) throw new ActionStepError(error.attr, error.message, error.code);
        throw error;
      }
      step.properties = raw['properties'];
    }
    return step;
  });
}

/** A step's property filters as one group (checked when the step was saved). */
export function stepPropertyGroup(step: ActionStep): PropertyGroup {
  return parsePropertyFilters(step.properties ?? [], 'properties', { types: STEP_FILTER_TYPES });
}
