import { chainToElements } from './chain-elements';

describe('chainToElements (PostHog chain_to_elements)', () => {
  it('reads tags, classes and attributes, keeping `;` and `:` inside quoted values', () => {
    const chain = 'a.nav.main:attr__href="/a;b"href="/a;b"nth-child="1"nth-of-type="2"text="Go: now";div:nth-child="0"nth-of-type="1"';
    expect(chainToElements(chain)).toEqual([
      {
        event: null,
        text: 'Go: now',
        tag_name: 'a',
        attr_class: ['nav', 'main'],
        href: '/a;b',
        attr_id: null,
        nth_child: 1,
        nth_of_type: 2,
        attributes: { attr__href: '/a;b' },
        order: 0,
      },
      { event: null, text: null, tag_name: 'div', attr_class: null, href: null, attr_id: null, nth_child: 0, nth_of_type: 1, attributes: {}, order: 1 },
    ]);
  });

  it('keeps escaped quotes, and treats `__proto__` as an ordinary attribute', () => {
    const [element] = chainToElements('button:__proto__="x"text="say \\"hi\\""');
    expect(element!.text).toBe('say \\"hi\\"');
    expect(Object.keys(element!.attributes)).toEqual(['__proto__']);
    expect(element!.attributes['__proto__']).toBe('x');
  });

  it('answers no element for an empty chain and no position for a non-number', () => {
    expect(chainToElements('')).toEqual([]);
    expect(chainToElements('p:nth-child="x"')[0]!.nth_child).toBeNull();
  });
});
