import { errors } from '@sightline/http';
import { DateRangeError, FormulaError, QueryInputError, SelectorError, TrendFilterError, UnknownCohortError } from '@sightline/insights';
import { HogQLError } from '@sightline/hogql';
import { PropertyCompileError } from '@sightline/properties';

/** Every way an insight request can be wrong, as the DRF-shaped 400 naming the field. */
export function asValidationError(error: unknown): unknown {
  if (error instanceof TrendFilterError || error instanceof QueryInputError) return errors.validation(error.message, error.attr, error.code);
  if (error instanceof DateRangeError) return errors.validation(error.message, error.attr, 'invalid_date');
  if (error instanceof FormulaError) return errors.validation(error.message, 'formula', 'invalid_formula');
  if (error instanceof SelectorError) return errors.validation(error.message, 'properties', 'invalid_value');
  if (error instanceof UnknownCohortError) return errors.validation(error.message, 'properties', 'cohort_does_not_exist');
  if (error instanceof HogQLError) return errors.validation(error.message, 'hogql', 'invalid_hogql');
  if (error instanceof PropertyCompileError) return errors.validation(error.message, 'properties', 'not_supported');
  return error;
}

/** `refresh=true` and friends, from a body or a query string. */
export const truthy = (value: unknown) => value === true || value === 'true' || value === '1';
