import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { RequestHandler } from 'express';
import { errors } from '@sightline/http';
import { echoed, pythonType } from './drf-fields';

/** A JSON schema a route's body must satisfy; the same object goes into the API document. */
export type RequestBodySchema = Record<string, unknown>;

// One compiler for every route; keywords limited to those JSON Schema 2020-12 (OpenAPI 3.1) shares.
// Union types describe DRF fields that take more than one JSON type (a CharField takes a number).
const ajv = new Ajv({ allErrors: false, strict: true, allowUnionTypes: true });
const compiled = new WeakMap<RequestBodySchema, ValidateFunction>();

/** The schema's validator, compiled once; strict, so a keyword the compiler does not know throws. */
export function compileRequestBodySchema(schema: RequestBodySchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** `/scopes/2` → `scopes__2`: DRF's attr for nested fields. */
const attrOf = (path: string, child?: string) => {
  const parts = path.split('/').filter(Boolean);
  if (child !== undefined) parts.push(child);
  return parts.length === 0 ? null : parts.join('__');
};

const TYPE_MESSAGES: Record<string, (value: unknown) => [string, string]> = {
  string: () => ['Not a valid string.', 'invalid'],
  integer: () => ['A valid integer is required.', 'invalid'],
  number: () => ['A valid number is required.', 'invalid'],
  boolean: () => ['Must be a valid boolean.', 'invalid'],
  array: (value) => [`Expected a list of items but got type "${pythonType(value)}".`, 'not_a_list'],
  object: (value) => [`Expected a dictionary of items but got type "${pythonType(value)}".`, 'not_a_dict'],
};

/** The first schema failure as DRF words it for the same kind of field. */
export function drfValidationError(error: ErrorObject, body: unknown) {
  const at = (path: string): unknown =>
    path
      .split('/')
      .filter(Boolean)
      .reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], body);
  const value = at(error.instancePath);
  const attr = attrOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return errors.validation('This field is required.', attrOf(error.instancePath, String(params['missingProperty'])), 'required');
    case 'type': {
      if (attr === null) {
        // A body that is a list of objects (DRF's many=True) words its type as the list field does.
        if (params['type'] === 'array') return errors.validation(`Expected a list of items but got type "${pythonType(value)}".`, null, 'not_a_list');
        return errors.validation(`Invalid data. Expected a dictionary, but got ${pythonType(value)}.`, null, 'invalid');
      }
      if (value === null) return errors.validation('This field may not be null.', attr, 'null');
      const type = String(Array.isArray(params['type']) ? params['type'][0] : params['type']);
      const [detail, code] = (TYPE_MESSAGES[type] ?? (() => ['Invalid value.', 'invalid']))(value);
      return errors.validation(detail, attr, code);
    }
    case 'enum':
      // DRF checks null before the choices.
      if (value === null) return errors.validation('This field may not be null.', attr, 'null');
      return errors.validation(`"${echoed(value)}" is not a valid choice.`, attr, 'invalid_choice');
    case 'minLength':
      return errors.validation('This field may not be blank.', attr, 'blank');
    case 'maxLength':
      return errors.validation(`Ensure this field has no more than ${String(params['limit'])} characters.`, attr, 'max_length');
    case 'maxItems':
      return errors.validation(`Ensure this field has no more than ${String(params['limit'])} elements.`, attr, 'max_length');
    case 'minimum':
      return errors.validation(`Ensure this value is greater than or equal to ${String(params['limit'])}.`, attr, 'min_value');
    case 'maximum':
      return errors.validation(`Ensure this value is less than or equal to ${String(params['limit'])}.`, attr, 'max_value');
    default:
      return errors.validation('Invalid value.', attr, 'invalid');
  }
}

/** Checks the body against the route's schema; the first failure is a 400 naming the field. */
export function requestBodyValidator(schema: RequestBodySchema): RequestHandler {
  // Compiled at the route's first request, not when the routes mount: compiling every route's
  // schema up front is a large share of the embedded service's restart. Every declared schema is
  // compiled by the API document's test, so a bad one still fails before it ships.
  let validate: ValidateFunction | undefined;
  return (req, _res, next) => {
    validate ??= compileRequestBodySchema(schema);
    const body: unknown = req.body ?? {};
    if (validate(body)) return next();
    next(drfValidationError(validate.errors![0]!, body));
  };
}
