import type { RequestHandler } from 'express';
import { DEFAULT_INPUT_LIMITS, findInputProblem, type InputLimits } from '@sightline/json-input';
import { errors } from './api-error';

/**
 * Refuses a request whose body or query string breaks the input limits, with
 * a 400 naming the field, before any route parses them. Mount after the body parser.
 */
export function inputGuard(limits: InputLimits = DEFAULT_INPUT_LIMITS): RequestHandler {
  return (req, _res, next) => {
    const problem = findInputProblem(req.query, limits) ?? findInputProblem(req.body, limits);
    if (problem) return next(errors.validation(problem.detail, problem.attr, problem.code));
    next();
  };
}
