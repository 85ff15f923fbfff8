import { ActionStepError, actionPropertyFilters, MAX_ACTION_STEPS, parseActionSteps } from './action-steps';

const problem = (value: unknown) => {
  try {
    parseActionSteps(value, 'steps');
  } catch (error) {
    if (error instanceof ActionStepError) return { attr: error.attr, code: error.code, message: error.message };
    throw error;
  }
  throw new Error('no error');
};

describe('parseActionSteps', () => {
  it('answers every field in PostHog’s order, url_matching defaulting to contains when absent', () => {
    expect(parseActionSteps([{ event: '$pageview', url: '/pricing' }], 'steps')).toEqual([
      {
        tag_name: null,
        text: null,
        text_matching: null,
        href: null,
        href_matching: null,
        selector: null,
        url: '/pricing',
        url_matching: 'contains',
        event: '$pageview',
        properties: null,
      },
    ]);
    // An explicit null stays null (and compares as contains); text and href matchings have no default.
    expect(parseActionSteps([{ url: 'x', url_matching: null, text: 'Buy' }], 'steps')[0]).toMatchObject({
      url_matching: null,
      text: 'Buy',
      text_matching: null,
    });
  });

  it('takes numbers as text, blanks as no condition, and ignores keys it does not know', () => {
    expect(parseActionSteps([{ event: 42, url: '', selector: null, isNew: true, id: 'x' }], 'steps')[0]).toEqual(
      expect.objectContaining({ event: '42', url: null, selector: null }),
    );
    expect(Object.keys(parseActionSteps([{ isNew: true }], 'steps')[0]!)).not.toContain('isNew');
    expect(parseActionSteps(null, 'steps')).toEqual([]);
  });

  it('keeps a step’s property filters as sent once they are checked', () => {
    const properties = [
      { key: 'plan', value: 'pro', type: 'event' },
      { key: 'email', value: '@x.io', operator: 'icontains', type: 'person' },
      { key: 'text', value: 'Buy', type: 'element' },
    ];
    const [step] = parseActionSteps([{ event: '$autocapture', properties }], 'steps');
    expect(step!.properties).toEqual(properties);
    expect(actionPropertyFilters({ id: 1, name: 'a', steps: [step!] }).map((f) => f.type)).toEqual(['event', 'person', 'element']);
  });

  it('accepts any selector, as PostHog does (an unsupported one matches nothing)', () => {
    expect(parseActionSteps([{ selector: 'div:has(a) ~ p' }], 'steps')[0]!.selector).toBe('div:has(a) ~ p');
  });

  it.each<[string, unknown, { attr: string; code: string }]>([
    ['steps that are not a list', { event: 'x' }, { attr: 'steps', code: 'not_a_list' }],
    ['a step that is not an object', ['x'], { attr: 'steps__0', code: 'invalid' }],
    ['a field that is not text', [{}, { event: true }], { attr: 'steps__1__event', code: 'invalid' }],
    ['an unknown matching', [{ url: 'x', url_matching: 'sometimes' }], { attr: 'steps__0__url_matching', code: 'invalid_choice' }],
    ['a URL regex RE2 cannot compile', [{ url: '(', url_matching: 'regex' }], { attr: 'steps__0__url', code: 'invalid_value' }],
    ['a text regex with a lookahead', [{ text: 'a(?=b)', text_matching: 'regex' }], { attr: 'steps__0__text', code: 'invalid_value' }],
    ['properties that are not a list', [{ properties: { key: 'a' } }], { attr: 'steps__0__properties', code: 'not_a_list' }],
    ['an unknown operator', [{ properties: [{ key: 'a', operator: 'near', value: 1 }] }], { attr: 'steps__0__properties__0', code: 'invalid_operator' }],
    [
      'an element filter on an unknown key',
      [{ properties: [{ key: 'class', value: 'x', type: 'element' }] }],
      { attr: 'steps__0__properties__0', code: 'invalid_input' },
    ],
    [
      'a session filter',
      [{ properties: [{ key: '$session_duration', value: 1, type: 'session' }] }],
      { attr: 'steps__0__properties__0', code: 'not_supported' },
    ],
    ['too many steps', Array.from({ length: MAX_ACTION_STEPS + 1 }, () => ({})), { attr: 'steps', code: 'max_length' }],
  ])('refuses %s, naming the field', (_name, value, expected) => {
    expect(problem(value)).toMatchObject(expected);
  });

  it('does not check a pattern that is not used as one', () => {
    expect(parseActionSteps([{ url: '(', url_matching: 'contains' }], 'steps')[0]!.url).toBe('(');
  });
});
