/**
 * An autocapture elements chain read back into elements, as PostHog's `chain_to_elements`
 * (posthog/models/element/element.py) reads it and its ElementSerializer
 * (posthog/models/event/util.py) answers each one. The chain is the clicked element first, then
 * its ancestors, separated by `;` outside quotes; each element is `tag.classA.classB:` followed by
 * `key="value"` pairs.
 */
export interface ChainElement {
  event: null;
  text: string | null;
  tag_name: string | null;
  attr_class: string[] | null;
  href: string | null;
  attr_id: string | null;
  nth_child: number | null;
  nth_of_type: number | null;
  attributes: Record<string, string>;
  order: number;
}

/** One element: runs of anything but whitespace, `;` and quotes, or quoted text (escapes kept). */
const ELEMENT = /(?:[^\s;"]|"(?:\\.|[^"])*")+/g;
/** The tag and classes, then the attributes after the first `:` that starts a `key=` (classes may hold `:`). */
const TAG_AND_ATTRIBUTES = /^(.*?)($|:([a-zA-Z\-_0-9]*=.*))/;
/** `key="value"`, the value ending at the first quote not escaped by a backslash. */
const ATTRIBUTE = /(.*?)="(.*?[^\\])"/g;

export function chainToElements(chain: string): ChainElement[] {
  const elements: ChainElement[] = [];
  for (const [text] of chain.matchAll(ELEMENT)) {
    const element: ChainElement = {
      event: null,
      text: null,
      tag_name: null,
      attr_class: null,
      href: null,
      attr_id: null,
      nth_child: null,
      nth_of_type: null,
      // No prototype: a chain is client text, and `__proto__` is a key like any other here.
      attributes: Object.create(null) as Record<string, string>,
      order: elements.length,
    };
    const [, tagPart = '', , attributePart = ''] = TAG_AND_ATTRIBUTES.exec(text) ?? [];
    if (tagPart) {
      const dot = tagPart.indexOf('.');
      element.tag_name = dot === -1 ? tagPart : tagPart.slice(0, dot);
      if (dot !== -1)
        element.attr_class = tagPart
          .slice(dot + 1)
          .split('.')
          .filter((c) => c !== '');
    }
    for (const [, key = '', value = ''] of attributePart.matchAll(ATTRIBUTE)) {
      if (key === 'href') element.href = value;
      else if (key === 'nth-child') element.nth_child = toInteger(value);
      else if (key === 'nth-of-type') element.nth_of_type = toInteger(value);
      else if (key === 'text') element.text = value;
      else if (key === 'attr_id') element.attr_id = value;
      else if (key) element.attributes[key] = value;
    }
    elements.push(element);
  }
  return elements;
}

/** PostHog's int(); a chain written by hand may carry anything, which reads as no position here. */
function toInteger(value: string): number | null {
  return /^-?\d{1,15}$/.test(value.trim()) ? Number(value) : null;
}
