import { errors } from '@sightline/http';
import { findInputProblem, isJsonObject } from '@sightline/json-input';

/**
 * Parsing of request fields with Django REST framework's messages and codes, so a
 * client written against PostHog sees the same 400 bodies. Written by hand rather
 * than with ajv: the DRF wording and code differ per field kind, not per schema keyword.
 */

const TRUE_VALUES = new Set<unknown>(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 1, true]);
const FALSE_VALUES = new Set<unknown>(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0', 0, false]);

/** The largest value of a PostgreSQL `integer` column (ids, versions, counts). */
export const INT4_MAX = 2_147_483_647;

const ECHO_LENGTH = 200;

/**
 * A client's value as DRF quotes it in a message (Python's str: JSON text for lists and
 * dictionaries), cut to 200 characters so an error answer, and any log line carrying it, stays
 * small whatever was sent.
 */
export function echoed(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'object' && value !== null) {
    try {
      text = JSON.stringify(value);
    } catch {
      text = pythonType(value); // nested past what JSON.stringify can walk
    }
  } else text = String(value);
  return text.length > ECHO_LENGTH ? `${text.slice(0, ECHO_LENGTH)}…` : text;
}

/** Python's type name, as DRF puts it in "got type" messages. */
export function pythonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return 'dict';
}

/** The input limits' problem with a scalar, reported on `attr`. */
function throwInputProblem(value: string | number, attr: string) {
  const problem = findInputProblem(value);
  if (problem) throw errors.validation(problem.detail, attr, problem.code);
}

const notNull = (value: unknown, attr: string) => {
  if (value === null) throw errors.validation('This field may not be null.', attr, 'null');
};

export function parseBoolean(value: unknown, attr: string): boolean {
  notNull(value, attr);
  if (TRUE_VALUES.has(value)) return true;
  if (FALSE_VALUES.has(value)) return false;
  throw errors.validation('Must be a valid boolean.', attr, 'invalid');
}

/**
 * DRF CharField: numbers are taken as their text; `maxLength` as the model's max_length. The
 * input limits are checked here too, not only by the /api guard: a NUL or lone surrogate cannot
 * be stored, and a number past 2^53 or beyond a double has already lost the digits the client sent.
 */
export function parseString(value: unknown, attr: string, options: { allowBlank?: boolean; maxLength?: number } = {}): string {
  notNull(value, attr);
  if (typeof value === 'number') {
    throwInputProblem(value, attr);
    value = String(value);
  }
  if (typeof value !== 'string') throw errors.validation('Not a valid string.', attr, 'invalid');
  if (!options.allowBlank && value.trim() === '') throw errors.validation('This field may not be blank.', attr, 'blank');
  // DRF runs MaxLengthValidator before its NUL and surrogate validators.
  if (options.maxLength !== undefined && value.length > options.maxLength) {
    throw errors.validation(`Ensure this field has no more than ${options.maxLength} characters.`, attr, 'max_length');
  }
  throwInputProblem(value, attr);
  return value;
}

export function parseDict(value: unknown, attr: string): Record<string, unknown> {
  notNull(value, attr);
  if (!isJsonObject(value)) throw errors.validation(`Expected a dictionary of items but got type "${pythonType(value)}".`, attr, 'not_a_dict');
  return value;
}

export function parseList(value: unknown, attr: string): unknown[] {
  notNull(value, attr);
  if (!Array.isArray(value)) throw errors.validation(`Expected a list of items but got type "${pythonType(value)}".`, attr, 'not_a_list');
  return value;
}

/** DRF IntegerField, bounded by default to a PostgreSQL `integer` column's range. */
export function parseInteger(value: unknown, attr: string, range: { min?: number; max?: number } = {}): number {
  notNull(value, attr);
  const number = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) throw errors.validation('A valid integer is required.', attr, 'invalid');
  const { min = -INT4_MAX - 1, max = INT4_MAX } = range;
  if (number > max) throw errors.validation(`Ensure this value is less than or equal to ${max}.`, attr, 'max_value');
  if (number < min) throw errors.validation(`Ensure this value is greater than or equal to ${min}.`, attr, 'min_value');
  return number;
}

export function parseChoice<T extends string>(value: unknown, attr: string, choices: readonly T[]): T {
  notNull(value, attr);
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw errors.validation(`"${echoed(value)}" is not a valid choice.`, attr, 'invalid_choice');
  }
  return value as T;
}

/** A request body must be a JSON object; DRF reports anything else as a non-field error (attr null). */
export function parseBody(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) throw errors.validation(`Invalid data. Expected a dictionary, but got ${pythonType(body)}.`, null, 'invalid');
  return body;
}

/**
 * DRF LimitOffsetPagination: a missing or malformed value silently falls back; a value past a
 * PostgreSQL `integer` is clamped to it (no page is that far, and LIMIT/OFFSET stay in range).
 */
export function queryInteger(value: unknown, fallback: number, min: number): number {
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return fallback;
  const n = Number(value);
  return n < min ? fallback : Math.min(n, INT4_MAX);
}
