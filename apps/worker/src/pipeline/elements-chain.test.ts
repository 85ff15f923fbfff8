import { elementsChainFromElements } from './elements-chain';

describe('elementsChainFromElements', () => {
  it('writes the chain as PostHog does: tag, sorted classes, sorted attributes, clicked element first', () => {
    // posthog-js's $elements for a click on a link inside a nav (attr__* are the element's attributes).
    const chain = elementsChainFromElements([
      { tag_name: 'a', $el_text: 'Buy "now"', attr__class: 'primary btn', attr__href: '/pricing', nth_child: 2, nth_of_type: 1, classes: ['ignored'] },
      { tag_name: 'nav', attr__id: 'main', attr__class: 'top', nth_child: 1, nth_of_type: 1 },
    ]);
    expect(chain).toBe(
      'a.btn.primary:attr__class="primary btn"attr__href="/pricing"href="/pricing"nth-child="2"nth-of-type="1"text="Buy \\"now\\""' +
        ';nav.top:attr__class="top"attr__id="main"attr_id="main"nth-child="1"nth-of-type="1"',
    );
  });

  it('takes classes from attr__class split on single spaces, and writes numbers and booleans as text', () => {
    expect(elementsChainFromElements([{ tag_name: 'div', attr__class: 'b  a', 'attr__data-n': 5, attr__hidden: true, nth_child: '3' }])).toBe(
      'div..a.b:attr__class="b  a"attr__data-n="5"attr__hidden="true"nth-child="3"nth-of-type="0"',
    );
  });

  it('adds no class for an empty attr__class (PostHog’s extractAttrClass reads it as none), keeping the attribute', () => {
    expect(elementsChainFromElements([{ tag_name: 'body', attr__class: '', nth_child: 1, nth_of_type: 1 }])).toBe(
      'body:attr__class=""nth-child="1"nth-of-type="1"',
    );
    expect(
      elementsChainFromElements([
        { tag_name: 'div', attr__class: null },
        { tag_name: 'p', attr__class: [] },
      ]),
    ).toBe('div:nth-child="0"nth-of-type="0";p:nth-child="0"nth-of-type="0"');
  });

  it('orders attribute keys as PostHog’s ingestion does (locale order: "_" before "-")', () => {
    expect(elementsChainFromElements([{ tag_name: 'i', 'attr__data-x': '1', attr__data_x: '2' }])).toBe(
      'i:attr__data_x="2"attr__data-x="1"nth-child="0"nth-of-type="0"',
    );
  });

  it('gives an empty chain for anything but a list of objects, and skips odd items', () => {
    expect(elementsChainFromElements('a.b')).toBe('');
    expect(elementsChainFromElements(null)).toBe('');
    expect(elementsChainFromElements(undefined)).toBe('');
    expect(elementsChainFromElements([1, 'x', { tag_name: 'span' }])).toBe('span:nth-child="0"nth-of-type="0"');
  });

  it('bounds text and href as PostHog does', () => {
    const chain = elementsChainFromElements([{ tag_name: 'a', $el_text: 'x'.repeat(1000), attr__href: 'h'.repeat(5000) }]);
    expect(chain).toContain(`text="${'x'.repeat(400)}"`);
    expect(chain).toContain(`href="${'h'.repeat(2048)}"`);
  });
});
