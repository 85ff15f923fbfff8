import type { Request } from 'express';
import { errors } from '@sightline/http';
import { findInputProblem } from '@sightline/json-input';
import { DateRangeError, FormulaError, QueryInputError, legacyFilterFromQuery, QueryFilterError, UnknownCohortError } from '@sightline/insights';
import { HogQLError } from '@sightline/hogql';
import { PropertyCompileError, PropertyFilterError } from '@sightline/properties';

/** Every way an insight request can be wrong, as the DRF-shaped 400 naming the field. */
export function asValidationError(error: unknown): unknown {
  if (error instanceof QueryFilterError || error instanceof QueryInputError) return errors.validation(error.message, error.attr, error.code);
  if (error instanceof DateRangeError) return errors.validation(error.message, error.attr, 'invalid_date');
  if (error instanceof FormulaError) return errors.validation(error.message, 'formula', 'invalid_formula');
  if (error instanceof UnknownCohortError) return errors.validation(error.message, 'properties', 'cohort_does_not_exist');
  if (error instanceof HogQLError) return errors.validation(error.message, 'hogql', 'invalid_hogql');
  if (error instanceof PropertyCompileError) return errors.validation(error.message, 'properties', 'not_supported');
  // A stored filter (an action's steps) read again at query time, refused by a check added since it was saved.
  if (error instanceof PropertyFilterError) return errors.validation(error.message, error.attr, error.code);
  return error;
}

/** `refresh=true` and friends, from a body or a query string. */
export const truthy = (value: unknown) => value === true || value === 'true' || value === '1';

/**
 * The legacy GET form of an insight: structured fields JSON-encoded in the query string. The
 * JSON is parsed only here, after the input guard saw plain strings, so it is checked again.
 */
export function insightQueryInput(req: Request): Record<string, unknown> {
  try {
    const input = legacyFilterFromQuery(req.query as Record<string, unknown>);
    const problem = findInputProblem(input);
    if (problem) throw errors.validation(problem.detail, problem.attr, problem.code);
    return input;
  } catch (error) {
    throw asValidationError(error);
  }
}

/** A POST body as an object (anything else reads as an empty filter). */
export const insightBody = (req: Request): Record<string, unknown> =>
  req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
