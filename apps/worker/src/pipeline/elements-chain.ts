import { isJsonObject } from '@sightline/json-input';

/** PostHog's bounds when it reads autocapture elements (nodejs extractElements). */
const MAX_TEXT = 400;
const MAX_HREF = 2048;
const MAX_ELEMENTS = 1_000;

const escape = (value: string) => value.replace(/"/g, '\\"');
/** An attribute's value as text (PostHog's `toString()`); null for what has none worth writing. */
const text = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;

/**
 * `attr__class` split on single spaces, as PostHog's extractElements does (plugin-server
 * utils/db/elements-chain.ts, extractAttrClass): an empty or absent value gives no class at all,
 * not one empty class. Other SDK fields such as `classes` are not read.
 */
function classesOf(element: Record<string, unknown>): string[] {
  const raw = element['attr__class'];
  if (raw === '') return [];
  if (typeof raw === 'string') return raw.split(' ');
  if (Array.isArray(raw)) return raw.filter((c): c is string => typeof c === 'string');
  return [];
}

/** Attribute keys in the order PostHog's ingestion writes them (nodejs elementsToString sorts with localeCompare). */
const attributeOrder = new Intl.Collator('en').compare;

/**
 * The `elements_chain` text of autocapture's `$elements` list (the clicked element first), as
 * PostHog's ingestion writes it (nodejs extractElements + elementsToString, after
 * posthog/models/element/element.py elements_to_string): tag, sorted `.classes`, then
 * `key="value"` attributes sorted by key (text, nth-child, nth-of-type, href, attr_id and every
 * `attr__*`), elements joined by `;`. Anything that is not a list of objects gives ''.
 */
export function elementsChainFromElements(elements: unknown): string {
  if (!Array.isArray(elements)) return '';
  const parts: string[] = [];
  for (const element of elements.slice(0, MAX_ELEMENTS)) {
    if (!isJsonObject(element)) continue;
    let out = text(element['tag_name']) ?? '';
    for (const cls of classesOf(element).sort()) out += `.${cls.replace(/"/g, '')}`;
    const attributes: Record<string, string> = {};
    const elText = text(element['$el_text']);
    if (elText) attributes['text'] = elText.slice(0, MAX_TEXT);
    attributes['nth-child'] = text(element['nth_child']) ?? '0';
    attributes['nth-of-type'] = text(element['nth_of_type']) ?? '0';
    const href = text(element['attr__href']);
    if (href) attributes['href'] = href.slice(0, MAX_HREF);
    const id = text(element['attr__id']);
    if (id) attributes['attr_id'] = id;
    for (const [key, value] of Object.entries(element)) {
      const v = text(value);
      if (key.startsWith('attr__') && v !== null) attributes[key] = v;
    }
    out += ':';
    for (const key of Object.keys(attributes).sort(attributeOrder)) out += `${escape(key)}="${escape(attributes[key]!)}"`;
    parts.push(out);
  }
  return parts.join(';');
}
