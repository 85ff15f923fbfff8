import type { QueryParams } from '@sightline/properties';

/**
 * Conditions on an event's `elements_chain`: PostHog's autocapture string, the clicked element
 * first and its ancestors after it, separated by `;`. Each element reads
 * `tag.classA.classB:attr__href="/x"attr__id="y"href="/x"nth-child="1"text="Buy"`.
 */
export type TextMatching = 'exact' | 'contains' | 'regex';

const escapeRegex = (text: string) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/** Every `name="…"` value in the chain (texts, hrefs), as PostHog's materialised columns hold them. */
const chainValues = (chain: string, name: 'text' | 'href') => `extractAll(${chain}, '(?::|")${name}="(.*?)"')`;

/** Some element's text or href equals / contains / matches `value`. */
export function chainValueMatch(chain: string, name: 'text' | 'href', value: string, matching: TextMatching, params: QueryParams): string {
  const values = chainValues(chain, name);
  const bound = params.add(value, 'String');
  switch (matching) {
    case 'exact':
      return `has(${values}, ${bound})`;
    case 'contains':
      return `arrayExists(x -> position(x, ${bound}) > 0, ${values})`;
    case 'regex':
      return `arrayExists(x -> match(x, ${bound}), ${values})`;
  }
}

/** The clicked element (the chain's first) has this tag name. */
export function chainTagMatch(chain: string, tagName: string, params: QueryParams): string {
  return `match(${chain}, ${params.add(`^${escapeRegex(tagName)}(\\.|:|;|$)`, 'String')})`;
}

interface SelectorPart {
  tag: string | null;
  classes: string[];
  id: string | null;
  attributes: [string, string][];
}

export class SelectorError extends Error {}

/** Parses the CSS selectors PostHog's action editor produces: tags, .classes, #ids, [attr="value"], descendant and child combinators. */
export function parseSelector(selector: string): SelectorPart[] {
  const parts: SelectorPart[] = [];
  for (const token of selector
    .replace(/\s*>\s*/g, ' ')
    .trim()
    .split(/\s+/)) {
    if (token === '') continue;
    const part: SelectorPart = { tag: null, classes: [], id: null, attributes: [] };
    const re = /([a-zA-Z][\w-]*)|\.([\w-]+)|#([\w-]+)|\[([\w-]+)(?:=["']?([^"'\]]*)["']?)?\]|(\*)/gy;
    let match: RegExpExecArray | null;
    let consumed = 0;
    while ((match = re.exec(token)) !== null) {
      consumed = re.lastIndex;
      if (match[1]) part.tag = match[1];
      else if (match[2]) part.classes.push(match[2]);
      else if (match[3]) part.id = match[3];
      else if (match[4]) part.attributes.push([match[4], match[5] ?? '']);
    }
    if (consumed !== token.length)
      throw new SelectorError(
        `Unsupported selector "${selector.slice(0, 100)}" (supported: tags, .classes, #ids, [attr="value"], descendant and > combinators).`,
      );
    parts.push(part);
  }
  if (parts.length === 0) throw new SelectorError('The selector is empty.');
  return parts;
}

/** One element of the chain (an `el` text) matches a selector part. */
function elementMatch(el: string, part: SelectorPart, params: QueryParams): string {
  const conditions: string[] = [];
  if (part.tag) conditions.push(`match(${el}, ${params.add(`^${escapeRegex(part.tag)}(\\.|:|$)`, 'String')})`);
  for (const cls of part.classes) conditions.push(`match(${el}, ${params.add(`^[^:]*\\.${escapeRegex(cls)}(\\.|:|$)`, 'String')})`);
  if (part.id) conditions.push(`position(${el}, ${params.add(`attr__id="${part.id}"`, 'String')}) > 0`);
  for (const [name, value] of part.attributes) conditions.push(`position(${el}, ${params.add(`attr__${name}="${value}"`, 'String')}) > 0`);
  return conditions.length ? conditions.join(' AND ') : '1';
}

/**
 * The clicked element matches the selector's last part and each earlier part matches one of
 * its ancestors (PostHog checks the ancestors' order too; here each is checked on its own).
 */
export function chainSelectorMatch(chain: string, selector: string, params: QueryParams): string {
  const parts = parseSelector(selector);
  const elements = `splitByChar(';', ${chain})`;
  const last = parts[parts.length - 1]!;
  const conditions = [`notEmpty(${chain})`, elementMatch(`${elements}[1]`, last, params)];
  for (const ancestor of parts.slice(0, -1)) {
    conditions.push(`arrayExists(el -> ${elementMatch('el', ancestor, params)}, arraySlice(${elements}, 2))`);
  }
  return `(${conditions.join(' AND ')})`;
}

/**
 * An `element` property filter (keys text, href, tag_name, selector) on the chain, with the
 * operators PostHog's filter editor offers for them.
 */
export function elementFilterSql(filter: { key: string; value?: unknown; operator?: string | null }, chain: string, params: QueryParams): string {
  const operator = filter.operator ?? 'exact';
  const values = (Array.isArray(filter.value) ? filter.value : [filter.value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const negated = operator.startsWith('not_') || operator === 'is_not';
  const positive = negated ? (operator === 'is_not' ? 'exact' : operator.slice(4)) : operator;
  let sql: string;
  if (filter.key === 'text' || filter.key === 'href') {
    const all = chainValues(chain, filter.key);
    if (positive === 'exact') sql = `hasAny(${all}, ${params.add(values, 'Array(String)')})`;
    else if (positive === 'icontains') sql = `arrayExists(x -> positionCaseInsensitiveUTF8(x, ${params.add(values[0] ?? '', 'String')}) > 0, ${all})`;
    else if (positive === 'regex') sql = `arrayExists(x -> match(x, ${params.add(values[0] ?? '', 'String')}), ${all})`;
    else if (operator === 'is_set' || operator === 'is_not_set') sql = `notEmpty(${all})`;
    else throw new SelectorError(`Operator "${operator}" is not supported for element ${filter.key}.`);
  } else if (filter.key === 'tag_name') {
    if (positive !== 'exact') throw new SelectorError(`Operator "${operator}" is not supported for element tag_name.`);
    sql = `(${values.map((v) => chainTagMatch(chain, v, params)).join(' OR ')})`;
  } else if (filter.key === 'selector') {
    if (positive !== 'exact') throw new SelectorError(`Operator "${operator}" is not supported for element selectors.`);
    sql = `(${values.map((v) => chainSelectorMatch(chain, v, params)).join(' OR ')})`;
  } else throw new SelectorError(`Element filters read text, href, tag_name or selector, not "${filter.key.slice(0, 100)}".`);
  return negated || operator === 'is_not_set' ? `NOT ${sql}` : sql;
}
