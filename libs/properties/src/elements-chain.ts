import type { QueryParams } from './query-params';

/**
 * Conditions on an event's `elements_chain`: autocapture's string, the clicked element first and
 * its ancestors after it, separated by `;`. Each element reads
 * `tag.classA.classB:attr__class="classA classB"attr__id="buy"attr_id="buy"href="/x"nth-child="1"nth-of-type="1"text="Buy"`
 * (classes and attributes sorted, quotes in values escaped as `\"`). PostHog matches it with
 * regular expressions and reads texts, hrefs, ids and tags through materialised columns; the
 * expressions below are those columns' definitions, computed per row.
 */

/** The first `href` in the chain (PostHog's `elements_chain_href`). */
export const chainHrefSql = (chain: string) => `extract(${chain}, '(?::|")href="(.*?)"')`;
/** Every element text in the chain (`elements_chain_texts`). */
export const chainTextsSql = (chain: string) => `arrayDistinct(extractAll(${chain}, '(?::|")text="(.*?)"'))`;
/** Every element id in the chain (`elements_chain_ids`). */
export const chainIdsSql = (chain: string) => `arrayDistinct(extractAll(${chain}, '(?::|")attr_id="(.*?)"'))`;
/** The interactive elements' tags in the chain (`elements_chain_elements`). */
export const chainElementsSql = (chain: string) => `arrayDistinct(extractAll(${chain}, '(?:^|;)(a|button|form|input|select|textarea|label)(?:\\\\.|$|:)'))`;

/** Tags a selector's cheap pre-check looks for among the chain's interactive elements (PostHog's Element.USEFUL_ELEMENTS). */
const USEFUL_ELEMENTS = new Set(['a', 'button', 'input', 'select', 'textarea', 'label']);

/** `text` as a regular expression matching itself (RE2 syntax). */
export const escapeRegex = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** One compound of a CSS selector, as PostHog's `SelectorPart` reads it. */
export interface SelectorPart {
  tagName: string | null;
  classes: string[];
  /** `#id` or `[id="…"]`. */
  id: string | null;
  /** What the chain must carry as `key="value"`: `attr_id`, `nth-child` and `[attr="value"]` attributes. */
  attributes: Record<string, string>;
  /** Written after a `>` (the part before it in the selector is its parent). */
  directDescendant: boolean;
}

const ATTRIBUTE = /([a-zA-Z]*)\[(.*)=['|"](.*)['|"]\]/;
/** Dots that are not inside brackets (Tailwind classes such as `shadow-[0_4px_rgba(0,0,0,0.1)]`). */
const CLASS_SEPARATOR = /\.(?![^[]*\])/;

function parsePart(text: string, directDescendant: boolean): SelectorPart {
  const part: SelectorPart = { tagName: null, classes: [], id: null, attributes: {}, directDescendant };
  let tag = text;
  const attribute = ATTRIBUTE.exec(tag);
  if (attribute && tag.includes('[id=')) {
    part.id = attribute[3]!;
    part.attributes['attr_id'] = attribute[3]!;
    tag = attribute[1]!;
  }
  if (attribute && tag.includes('[')) {
    part.attributes[attribute[2]!] = attribute[3]!;
    tag = attribute[1]!;
  }
  if (tag.includes('nth-child(')) {
    const [before, after] = tag.split(':nth-child(');
    part.attributes['nth-child'] = (after ?? '').replaceAll(')', '');
    tag = before!;
  }
  if (tag.includes('.')) {
    const pieces = tag.split(CLASS_SEPARATOR);
    part.classes = pieces.slice(1);
    tag = pieces[0]!;
  }
  if (tag.includes('#')) {
    const pieces = tag.split('#');
    part.id = pieces[1]!;
    part.attributes['attr_id'] = pieces[1]!;
    tag = pieces[0]!;
  }
  if (tag) part.tagName = tag;
  return part;
}

/** Splits on spaces outside `[…]` and quotes. */
function splitSelector(selector: string): string[] {
  const pieces: string[] = [];
  let inAttribute = false;
  let quote: string | null = null;
  let current = '';
  for (const char of selector) {
    if (char === '[' && quote === null) inAttribute = true;
    if (char === ']' && quote === null) inAttribute = false;
    if (char === '"' || char === "'") {
      if (quote === null) quote = char;
      else if (quote === char) quote = null;
    }
    if (char === ' ' && !inAttribute) {
      pieces.push(current);
      current = '';
    } else current += char;
  }
  pieces.push(current);
  return pieces;
}

/**
 * A CSS selector's compounds, the targeted (last written) one first, as PostHog reads selectors
 * (posthog/models/event/event.py `Selector`): tags, `.classes`, `#ids`, one `[attr="value"]`,
 * `:nth-child(n)`, descendant and `>` combinators. Anything else is kept as text and simply
 * matches no element, as in PostHog; no selector is refused.
 */
export function parseSelector(selector: string): SelectorPart[] {
  const pieces = splitSelector(selector.replaceAll('> * > ', '').replaceAll('> *', '').replaceAll('\\:', ':').trim()).reverse();
  const parts: SelectorPart[] = [];
  pieces.forEach((piece, index) => {
    if (piece === '>' || piece === '') return;
    parts.push(parsePart(piece, index > 0 && pieces[index - 1] === '>'));
  });
  return parts;
}

/** An attribute value as the chain writes it: double quotes escaped as `\"`, whether or not the selector escaped them. */
const chainEscaped = (value: string) => value.replaceAll('\\"', '"').replaceAll('"', '\\"');
/** Code-point order, as PostHog sorts classes and attributes. */
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The regular expression over the chain for a selector (PostHog's `build_selector_regex`, which
 * its API also answers as a step's `selector_regex`): the targeted element's compound at the
 * start of some element, each ancestor compound after it. '' for a selector with no compound.
 */
export function selectorRegex(selector: string): string {
  let regex = '';
  for (const part of parseSelector(selector)) {
    if (part.tagName && part.tagName !== '*') regex += escapeRegex(part.tagName);
    if (part.classes.length) regex += '.*?\\.' + [...part.classes].sort(byCodePoint).map(escapeRegex).join('\\..*?');
    const attributes = Object.entries(part.attributes).sort(([a], [b]) => byCodePoint(a, b));
    if (attributes.length) {
      regex += '.*?';
      for (const [key, value] of attributes) regex += `${escapeRegex(key)}="${escapeRegex(chainEscaped(value))}".*?`;
    }
    // The rest of the element, whatever characters its classes carry, up to the `;` separator.
    regex += '[^;]*?($|;|:([^;^\\s]*(;|$|\\s)))';
    if (part.directDescendant) regex += '.*';
  }
  return regex ? `(^|;)${regex}` : '';
}

/**
 * SQL for "the chain matches the selector" (PostHog's `selector_to_expr`): the selector's
 * regular expression, plus the id and interactive-tag checks PostHog adds (an id-only
 * selector is the id check alone).
 */
export function selectorMatchSql(chain: string, selector: string, params: QueryParams): string {
  const parts = parseSelector(selector);
  const only = parts.length === 1 ? parts[0]! : null;
  if (only && only.id !== null && !only.tagName && only.classes.length === 0 && Object.keys(only.attributes).length === 1) {
    return `has(${chainIdsSql(chain)}, ${params.add(only.id, 'String')})`;
  }
  const conditions = [`match(${chain}, ${params.add(selectorRegex(selector), 'String')})`];
  for (const part of parts) if (part.id !== null) conditions.push(`has(${chainIdsSql(chain)}, ${params.add(part.id, 'String')})`);
  const usefulTags = parts.flatMap((part) => (part.tagName && USEFUL_ELEMENTS.has(part.tagName) ? [part.tagName] : []));
  if (usefulTags.length) conditions.push(`hasAny(${chainElementsSql(chain)}, ${params.add(usefulTags, 'Array(String)')})`);
  return conditions.length === 1 ? conditions[0]! : `(${conditions.join(' AND ')})`;
}

/** SQL for "some element of the chain has this tag" (PostHog's `tag_name_to_expr`). */
export function tagNameMatchSql(chain: string, tagName: string, params: QueryParams): string {
  return `match(${chain}, ${params.add(`(^|;)${escapeRegex(tagName)}(\\.|$|;|:)`, 'String')})`;
}
