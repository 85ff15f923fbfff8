import { elementsChainFromElements } from './elements-chain';

describe('elementsChainFromElements', () => {
  it('writes the chain as PostHog does: tag, sorted classes, sorted attributes, clicked element first', () => {
    const chain = elementsChainFromElements([
      { tag_name: 'a', $el_text: 'Buy "now"', attr__class: 'btn primary', attr__href: '/pricing', nth_child: 2, nth_of_type: 1 },
      { tag_name: 'div', classes: ['z', 'a'], attr__id: 'main', nth_child: 1, nth_of_type: 1 },
    ]);
    expect(chain).toBe(
      'a.btn.primary:attr__class="btn primary"attr__href="/pricing"href="/pricing"nth-child="2"nth-of-type="1"text="Buy \\"now\\""' +
        ';div.a.z:attr__id="main"attr_id="main"nth-child="1"nth-of-type="1"',
    );
  });

  it('gives an empty chain for anything but a list of objects, and skips odd items', () => {
    expect(elementsChainFromElements('a.b')).toBe('');
    expect(elementsChainFromElements(null)).toBe('');
    expect(elementsChainFromElements([1, 'x', { tag_name: 'span' }])).toBe('span:nth-child="0"nth-of-type="0"');
  });

  it('bounds text and href', () => {
    const chain = elementsChainFromElements([{ tag_name: 'a', $el_text: 'x'.repeat(1000), attr__href: 'h'.repeat(5000) }]);
    expect(chain).toContain(`text="${'x'.repeat(400)}"`);
    expect(chain).toContain(`href="${'h'.repeat(2048)}"`);
  });
});
