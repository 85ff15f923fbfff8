import { RE2JS } from 're2js';
import { SemVer, satisfies } from 'semver';
import { narrowDateMargin, parseDateString, parsePropertyDate, type DateMargin } from './dates';
import type { PropertyFilter } from './types';

/**
 * One property filter against a property map, with the flag service's semantics
 * (rust/feature-flags/src/properties/property_matching.rs; docs/flags.md#property-operators): a missing key is "absent" (never inconclusive), negative operators match
 * absent keys, numeric operators compare numbers only, an invalid regex matches nothing.
 */

const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** A JSON string keeps its raw text; anything else becomes its JSON text. */
export function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}

const asciiLower = (s: string) => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

const RUST_FLOAT = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;

/** Rust's `str::parse::<f64>` (no whitespace, no hex) over the string form; null when not numeric. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return value;
  const text = stringify(value);
  if (!RUST_FLOAT.test(text)) return null;
  const lower = text.toLowerCase().replace(/^\+/, '');
  if (lower === 'nan' || lower === '-nan') return NaN;
  if (lower.endsWith('inf') || lower.endsWith('infinity')) return lower.startsWith('-') ? -Infinity : Infinity;
  return Number(text);
}

function isTruthyOrFalsy(value: unknown): boolean {
  if (typeof value === 'boolean') return true;
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    return lower === 'true' || lower === 'false';
  }
  if (Array.isArray(value)) return value.every(isTruthyOrFalsy);
  return false;
}

function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.toLowerCase() === 'true';
  if (Array.isArray(value)) return value.every(isTruthy);
  return false;
}

function exactMatch(filterValue: unknown, propertyValue: unknown): boolean {
  if (isTruthyOrFalsy(filterValue)) return isTruthy(filterValue) === isTruthy(propertyValue);
  const target = stringify(propertyValue).toLowerCase();
  if (Array.isArray(filterValue)) return filterValue.some((v) => stringify(v).toLowerCase() === target);
  return stringify(filterValue).toLowerCase() === target;
}

/** A compiled pattern: only whether it matches somewhere in a value is ever asked. */
export interface CompiledPattern {
  test(value: string): boolean;
}

/**
 * Thrown when matching one value would take more steps than one flag may spend: the flag that
 * asked fails alone (its answer is left out and the response says errorsWhileComputingFlags).
 */
export class RegexBudgetExceededError extends Error {
  constructor(patternSize: number, valueLength: number) {
    super(`matching a ${valueLength}-character value against a ${patternSize}-instruction pattern exceeds the matching budget`);
    this.name = 'RegexBudgetExceededError';
  }
}

/**
 * RE2 matches in time proportional to value length × pattern size in the worst case (when its
 * DFA gives up and it simulates the NFA, about 10^8 steps a second here). Values reach 2 MiB
 * in a decide body, so a crafted pattern of a few hundred instructions could still hold the
 * process for seconds on one request; past this product the match is refused instead.
 */
export const MAX_REGEX_MATCH_STEPS = 20_000_000;

const regexCache = new Map<string, CompiledPattern | null>();
const REGEX_CACHE_LIMIT = 10_000;

/**
 * Compiled once per pattern with RE2 semantics, as PostHog's flag service (Rust `regex` crate)
 * matches: linear time in the value's length whatever the pattern, so `^(a+)+$` cannot stall the
 * process; inline flags such as `(?i)` are part of the syntax; look-arounds and back-references
 * are invalid there too. Null for a pattern that does not compile.
 */
export function compileRegex(pattern: string): CompiledPattern | null {
  const cached = regexCache.get(pattern);
  if (cached !== undefined) return cached;
  let compiled: CompiledPattern | null;
  try {
    const re2 = RE2JS.compile(pattern);
    const size = re2.programSize();
    compiled = {
      test: (value) => {
        if (value.length * size > MAX_REGEX_MATCH_STEPS) throw new RegexBudgetExceededError(size, value.length);
        // test() asks for no capture groups, which lets re2js use its DFA (a matcher's find() runs the NFA).
        return re2.test(value);
      },
    };
  } catch {
    compiled = null; // an invalid pattern matches nothing, for regex and not_regex alike
  }
  if (regexCache.size >= REGEX_CACHE_LIMIT) regexCache.clear();
  regexCache.set(pattern, compiled);
  return compiled;
}

function stripLeadingZeros(part: string): string {
  if (part === '' || !/^\d+$/.test(part)) return part;
  return part.replace(/^0+/, '') || '0';
}

function normalizeVersion(text: string): string {
  return (text.startsWith('v') ? text.slice(1) : text).trim();
}

/** `3.08` → `3.8.0`: missing components padded, leading zeros dropped; suffixes kept. */
function canonicalVersion(text: string): string {
  const cut = text.search(/[-+]/);
  const core = cut === -1 ? text : text.slice(0, cut);
  const suffix = cut === -1 ? '' : text.slice(cut);
  const parts = core.split('.').map(stripLeadingZeros);
  while (parts.length < 3) parts.push('0');
  return parts.join('.') + suffix;
}

const STRICT_SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export function parseVersion(value: unknown): SemVer | null {
  const canonical = canonicalVersion(normalizeVersion(stringify(value)));
  if (!STRICT_SEMVER.test(canonical)) return null;
  return new SemVer(canonical);
}

function versionRequirement(operator: string, value: unknown): string | null {
  const normalized = normalizeVersion(stringify(value));
  if (operator === 'semver_tilde') return `~${canonicalVersion(normalized)}`;
  if (operator === 'semver_caret') return `^${canonicalVersion(normalized)}`;
  // Wildcards: `1.*`, `1.2.*`, `1.*.*`, `*`; anything else (`1.*.3`) is not a requirement.
  const parts = normalized.split('.').map(stripLeadingZeros);
  const firstWildcard = parts.findIndex((p) => p === '*' || p === 'x' || p === 'X');
  if (parts.length > 3 || parts.some((p, i) => !(/^\d+$/.test(p) || (firstWildcard !== -1 && i >= firstWildcard && /^[*xX]$/.test(p))))) return null;
  return parts.map((p) => (p === '*' ? 'x' : p)).join('.');
}

function compareVersions(operator: string, property: SemVer, filter: SemVer): boolean {
  const order = property.compare(filter);
  // Build metadata takes part in equality (Rust's semver::Version compares it).
  const sameBuild = property.build.join('.') === filter.build.join('.');
  switch (operator) {
    case 'semver_gt':
      return order > 0;
    case 'semver_gte':
      return order >= 0;
    case 'semver_lt':
      return order < 0;
    case 'semver_lte':
      return order <= 0;
    case 'semver_eq':
      return order === 0 && sameBuild;
    default:
      return !(order === 0 && sameBuild);
  }
}

const NEGATIVE_ON_ABSENT = new Set(['is_not', 'not_icontains', 'not_regex', 'not_starts_with', 'not_ends_with', 'not_icontains_multi', 'not_between']);

/** `margin`, when given, is narrowed by every date comparison (dates.ts narrowDateMargin). */
export function matchProperty(filter: PropertyFilter, properties: Record<string, unknown>, now: Date, margin?: DateMargin): boolean {
  const key = filter.key;
  const operator = filter.operator ?? 'exact';
  const present = hasOwn(properties, key);
  if (operator === 'is_set') return present;
  if (operator === 'is_not_set') return !present;
  const value = filter.value;
  if (value === undefined || value === null) return false;
  if (!present) return NEGATIVE_ON_ABSENT.has(operator);
  const prop = properties[key];

  switch (operator) {
    case 'exact':
      return exactMatch(value, prop);
    case 'is_not':
      return !exactMatch(value, prop);
    case 'icontains':
    case 'not_icontains': {
      const contained = asciiLower(stringify(prop)).includes(asciiLower(stringify(value)));
      return operator === 'icontains' ? contained : !contained;
    }
    case 'starts_with':
    case 'not_starts_with': {
      const prefixed = asciiLower(stringify(prop)).startsWith(asciiLower(stringify(value)));
      return operator === 'starts_with' ? prefixed : !prefixed;
    }
    case 'ends_with':
    case 'not_ends_with': {
      const suffixed = asciiLower(stringify(prop)).endsWith(asciiLower(stringify(value)));
      return operator === 'ends_with' ? suffixed : !suffixed;
    }
    case 'icontains_multi':
    case 'not_icontains_multi': {
      const haystack = asciiLower(stringify(prop));
      const needles = Array.isArray(value) ? value : [value];
      const any = needles.some((v) => haystack.includes(asciiLower(stringify(v))));
      return operator === 'icontains_multi' ? any : !any;
    }
    case 'regex':
    case 'not_regex': {
      const regex = compileRegex(stringify(value));
      if (!regex) return false;
      const found = regex.test(stringify(prop));
      return operator === 'regex' ? found : !found;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const left = toNumber(prop);
      const right = toNumber(value);
      if (left === null || right === null) return false;
      if (operator === 'gt') return left > right;
      if (operator === 'gte') return left >= right;
      if (operator === 'lt') return left < right;
      return left <= right;
    }
    case 'between':
    case 'not_between': {
      if (!Array.isArray(value) || value.length !== 2) return false;
      const low = toNumber(value[0]);
      const high = toNumber(value[1]);
      if (low === null || high === null || Number.isNaN(low) || Number.isNaN(high) || low > high) return false;
      const n = toNumber(prop);
      if (n === null || Number.isNaN(n)) return false;
      const inRange = n >= low && n <= high;
      return operator === 'between' ? inRange : !inRange;
    }
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
    case 'semver_eq':
    case 'semver_neq': {
      const left = parseVersion(prop);
      const right = parseVersion(value);
      if (!left || !right) return false;
      return compareVersions(operator, left, right);
    }
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard': {
      const version = parseVersion(prop);
      const requirement = versionRequirement(operator, value);
      if (!version || requirement === null) return false;
      try {
        return satisfies(version, requirement);
      } catch {
        return false;
      }
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      if (typeof value !== 'string') return false;
      const propDate = parsePropertyDate(prop, now);
      const filterDate = parseDateString(value, now);
      if (!propDate || !filterDate) return false;
      if (margin) narrowDateMargin(margin, value, prop, propDate, filterDate);
      if (operator === 'is_date_before') return propDate.getTime() < filterDate.getTime();
      if (operator === 'is_date_after') return propDate.getTime() > filterDate.getTime();
      return propDate.getTime() === filterDate.getTime();
    }
    default:
      // in / not_in (cohorts) and flag_evaluates_to are handled by their callers; unknown
      // operators never match.
      return false;
  }
}
