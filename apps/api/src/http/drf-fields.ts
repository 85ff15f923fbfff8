import { errors } from '@sightline/http';
import { isJsonObject } from '@sightline/json-input';

/**
 * Parsing of request fields with Django REST framework's messages and codes, so a
 * client written against PostHog sees the same 400 bodies. Written by hand rather
 * than with ajv: the DRF wording and code differ per field kind, not per schema keyword.
 */

const TRUE_VALUES = new Set<unknown>(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 1, true]);
const FALSE_VALUES = new Set<unknown>(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0', 0, false]);

/** The largest value of a PostgreSQL `integer` column (ids, versions, counts). */
export const INT4_MAX = 2_147_483_647;

/** Python's type name, as DRF puts it in "got type" messages. */
function pythonType(value: unknown): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return 'dict';
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

/** DRF CharField: numbers are taken as their text; `maxLength` as the model's max_length. */
export function parseString(value: unknown, attr: string, options: { allowBlank?: boolean; maxLength?: number } = {}): string {
  notNull(value, attr);
  if (typeof value === 'number') value = String(value);
  if (typeof value !== 'string') throw errors.validation('Not a valid string.', attr, 'invalid');
  if (!options.allowBlank && value.trim() === '') throw errors.validation('This field may not be blank.', attr, 'blank');
  if (options.maxLength !== undefined && value.length > options.maxLength) {
    throw errors.validation(`Ensure this field has no more than ${options.maxLength} characters.`, attr, 'max_length');
  }
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
    throw errors.validation(`"${String(value)}" is not a valid choice.`, attr, 'invalid_choice');
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
