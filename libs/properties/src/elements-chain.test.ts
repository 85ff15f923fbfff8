import { parseSelector, selectorMatchSql, selectorRegex, tagNameMatchSql } from './elements-chain';
import { QueryParams } from './query-params';

/** What every compound ends with: the rest of the element, up to the separator. */
const END = '[^;]*?($|;|:([^;^\\s]*(;|$|\\s)))';

describe('parseSelector', () => {
  it('reads compounds from the targeted element outwards, as PostHog does', () => {
    expect(parseSelector('nav > a.btn#buy')).toEqual([
      { tagName: 'a', classes: ['btn#buy'], id: null, attributes: {}, directDescendant: false },
      { tagName: 'nav', classes: [], id: null, attributes: {}, directDescendant: true },
    ]);
    expect(parseSelector('a#buy.btn')).toEqual([{ tagName: 'a', classes: ['btn'], id: 'buy', attributes: { attr_id: 'buy' }, directDescendant: false }]);
    expect(parseSelector(`li:nth-child(2) [data-attr="x y"]`)).toEqual([
      { tagName: null, classes: [], id: null, attributes: { 'data-attr': 'x y' }, directDescendant: false },
      { tagName: 'li', classes: [], id: null, attributes: { 'nth-child': '2' }, directDescendant: false },
    ]);
    expect(parseSelector(`[id='main']`)).toEqual([{ tagName: null, classes: [], id: 'main', attributes: { attr_id: 'main' }, directDescendant: false }]);
    expect(parseSelector('div.shadow-[0_4px_rgba(0,0,0,0.1)].p-2')).toEqual([
      { tagName: 'div', classes: ['shadow-[0_4px_rgba(0,0,0,0.1)]', 'p-2'], id: null, attributes: {}, directDescendant: false },
    ]);
    expect(parseSelector('  ')).toEqual([]);
  });
});

describe('selectorRegex', () => {
  it.each([
    ['div', `(^|;)div${END}`],
    ['div > div', `(^|;)div${END}div${END}.*`],
    // As PostHog stores it for this selector in a step's selector_regex.
    ['a > .relative', `(^|;).*?\\.relative${END}a${END}.*`],
    ["a[href='boo']", `(^|;)a.*?href="boo".*?${END}`],
    ['.class', `(^|;).*?\\.class${END}`],
    ['#withid', `(^|;).*?attr_id="withid".*?${END}`],
    ['button.primary.btn', `(^|;)button.*?\\.btn\\..*?primary${END}`],
    ['li:nth-child(2)', `(^|;)li.*?nth-child="2".*?${END}`],
    [`[title='say "hi"']`, `(^|;).*?title="say \\\\"hi\\\\"".*?${END}`],
    ['div.w-1/2.a+b', `(^|;)div.*?\\.a\\+b\\..*?w-1/2${END}`],
    ['*', `(^|;)${END}`],
    ['', ''],
  ])('%s', (selector, regex) => {
    expect(selectorRegex(selector)).toBe(regex);
  });
});

describe('selector and tag SQL', () => {
  it('adds the id and interactive-tag checks PostHog adds, and binds every value', () => {
    const params = new QueryParams();
    expect(selectorMatchSql('e.elements_chain', 'form button#buy', params)).toMatchSnapshot();
    expect(params.values).toEqual({ p0: `(^|;)button.*?attr_id="buy".*?${END}form${END}`, p1: 'buy', p2: ['button'] });
  });

  it('answers an id-only selector with the id check alone', () => {
    const params = new QueryParams();
    expect(selectorMatchSql('elements_chain', '#buy', params)).toBe(`has(arrayDistinct(extractAll(elements_chain, '(?::|")attr_id="(.*?)"')), {p0:String})`);
  });

  it('matches a tag name literally at the start of any element', () => {
    const params = new QueryParams();
    expect(tagNameMatchSql('elements_chain', 'h1.x', params)).toBe('match(elements_chain, {p0:String})');
    expect(params.values['p0']).toBe('(^|;)h1\\.x(\\.|$|;|:)');
  });
});
