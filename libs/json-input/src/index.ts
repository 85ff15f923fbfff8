export { UUID_PATTERN } from './uuid';

/**
 * Limits every value a client sends must respect before any route looks at it. They protect
 * what comes after: recursive validators and serializers (a value nested 10,000 levels
 * overflows the stack), PostgreSQL (a NUL byte is "invalid byte sequence for encoding UTF8",
 * a lone surrogate is stored as U+FFFD), and integer columns (JSON numbers beyond 2^53 lose
 * their digits on parsing, so `9223372036854775808` would silently become another number).
 */
export interface InputLimits {
  /** Levels of lists and objects, the body itself being level 1. */
  maxDepth: number;
  /** Characters in any one string or object key; fields with a tighter column limit check their own. */
  maxStringLength: number;
}

export const DEFAULT_INPUT_LIMITS: Readonly<InputLimits> = Object.freeze({ maxDepth: 64, maxStringLength: 262_144 });

/** What is wrong with a value and where, in DRF's `attr` form (`filters__groups__0__variant`). */
export interface InputProblem {
  attr: string | null;
  detail: string;
  code: string;
}

interface Pending {
  value: unknown;
  depth: number;
  key: string | null;
  parent: Pending | null;
}

const ATTR_KEY_PREVIEW = 64;

function attrOf(node: Pending | null, prefix: string | null): string | null {
  const parts: string[] = [];
  for (let at = node; at; at = at.parent) if (at.key !== null) parts.push(at.key.length > ATTR_KEY_PREVIEW ? `${at.key.slice(0, ATTR_KEY_PREVIEW)}…` : at.key);
  if (prefix !== null) parts.push(prefix);
  return parts.length === 0 ? null : parts.reverse().join('__');
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Whether a string holds half of a UTF-16 surrogate pair alone (not valid Unicode: UTF-8 and PostgreSQL refuse it). */
export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/** The string with each lone surrogate replaced by U+FFFD, as String.prototype.toWellFormed does. */
export const withoutLoneSurrogates = (text: string): string => (LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATES, '\ufffd') : text);

/** DRF's own messages and codes where DRF has one (ProhibitNullCharactersValidator, ProhibitSurrogateCharactersValidator, CharField max_length). */
function stringProblem(text: string, limits: InputLimits): Omit<InputProblem, 'attr'> | null {
  if (text.length > limits.maxStringLength) {
    return { detail: `Ensure this field has no more than ${limits.maxStringLength} characters.`, code: 'max_length' };
  }
  if (text.includes('\u0000')) return { detail: 'Null characters are not allowed.', code: 'null_characters_not_allowed' };
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    const codePoint = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return { detail: `Surrogate characters are not allowed: U+${codePoint}.`, code: 'surrogate_characters_not_allowed' };
  }
  return null;
}

function numberProblem(value: number): Omit<InputProblem, 'attr'> | null {
  if (!Number.isFinite(value)) return { detail: 'Number out of range: not a finite number.', code: 'invalid' };
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return { detail: `Number out of range: integers must lie between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}.`, code: 'max_value' };
  }
  return null;
}

/**
 * The first problem in a parsed JSON value (or query object), or null. Walks with an explicit
 * stack, so the walk itself cannot overflow however deep the value is. `prefix` names the whole
 * value in `attr` (null for a request body, whose fields are top-level attrs).
 */
export function findInputProblem(value: unknown, limits: InputLimits = DEFAULT_INPUT_LIMITS, prefix: string | null = null): InputProblem | null {
  const stack: Pending[] = [{ value, depth: 0, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const v = node.value;
    let problem: Omit<InputProblem, 'attr'> | null = null;
    if (typeof v === 'string') problem = stringProblem(v, limits);
    else if (typeof v === 'number') problem = numberProblem(v);
    else if (typeof v === 'object' && v !== null) {
      const depth = node.depth + 1;
      if (depth > limits.maxDepth) {
        problem = { detail: `Nested too deeply: at most ${limits.maxDepth} levels of lists and objects are allowed.`, code: 'max_depth' };
      } else if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], depth, key: String(i), parent: node });
      } else {
        for (const [key, child] of Object.entries(v)) {
          const keyProblem = stringProblem(key, limits);
          if (keyProblem) return { ...keyProblem, attr: attrOf(node, prefix) };
          stack.push({ value: child, depth, key, parent: node });
        }
      }
    }
    if (problem) return { ...problem, attr: attrOf(node, prefix) };
  }
  return null;
}

/** Whether `value` nests lists and objects deeper than `maxDepth` (iteratively: never overflows). */
export function exceedsDepth(value: unknown, maxDepth: number = DEFAULT_INPUT_LIMITS.maxDepth): boolean {
  if (typeof value !== 'object' || value === null) return false;
  // Only containers are stacked (it runs on every captured event): two parallel arrays, no objects per entry.
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(container) ? container : Object.values(container)) {
      if (typeof child === 'object' && child !== null) {
        containers.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** A JSON object (not an array, not null): what `properties`, `$set` or a request body must be. */
export const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
