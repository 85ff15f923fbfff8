import { reasonOf, type FlagResult } from '@sightline/flags';
import { buildFlagsResponse, configFields, DEFAULT_SDK_SETTINGS, flagsResponseParts, flagsResponseText, type ShapeChoice } from './decide-response';

const result = (key: string, payload: unknown): FlagResult => ({
  key,
  enabled: payload !== null,
  variant: null,
  reason: { code: payload !== null ? 'condition_match' : 'no_condition_match', condition_index: payload !== null ? 0 : null, description: 'x' },
  payload,
  id: 1,
  version: 2,
  description: null,
});

describe('/flags v2 metadata', () => {
  const flags = (r: FlagResult) => (buildFlagsResponse([r], false, { shape: 'flags-v2', withConfig: false })['flags'] as Record<string, any>)[r.key];

  it('leaves payload out when the flag has none, as PostHog does (posthog-node then reports no payload)', () => {
    const metadata = flags(result('off', null)).metadata;
    expect(metadata).toEqual({ id: 1, version: 2, description: null });
    expect('payload' in metadata).toBe(false);
  });

  it('sends a payload as stored (a JSON string)', () => {
    expect(flags(result('on', '{"a":1}')).metadata).toEqual({ id: 1, version: 2, description: null, payload: '{"a":1}' });
  });
});

describe('decide config', () => {
  it('carries the project settings and the legacy decide-only fields', () => {
    const fields = configFields({ ...DEFAULT_SDK_SETTINGS, autocapture_opt_out: true });
    expect(fields).toMatchObject({ autocapture_opt_out: true, config: { enable_collect_everything: true }, isAuthenticated: false, sessionRecording: false });
    expect(fields).not.toHaveProperty('token');
  });
});

describe('flagsResponseText', () => {
  /** The answer's per-request stamps, the same in both texts. */
  const stamped = (text: string) => text.replace(/"requestId":"[0-9a-f-]{36}"/, '"requestId":"R"').replace(/"evaluatedAt":\d+/, '"evaluatedAt":0');
  const expectSameText = (results: FlagResult[], failed: boolean, choice: ShapeChoice, settings = DEFAULT_SDK_SETTINGS) => {
    const byKey = new Map(results.map((r) => [r.key, r]));
    const text = flagsResponseText(byKey, failed, choice, settings);
    expect(stamped(text)).toBe(stamped(JSON.stringify(buildFlagsResponse(byKey.values(), failed, choice, settings))));
    return text;
  };
  const flag = (key: string, over: Partial<FlagResult> = {}): FlagResult => ({
    key,
    enabled: true,
    variant: null,
    reason: reasonOf('condition_match', 0),
    payload: null,
    id: 7,
    version: 3,
    description: 'A flag',
    ...over,
  });
  const varied: FlagResult[] = [
    flag('plain'),
    flag('off', { enabled: false, reason: reasonOf('no_condition_match', null), description: null }),
    flag('variant', { variant: 'test-2', payload: '{"color":"green"}', reason: reasonOf('condition_match', 2) }),
    flag('payload object', { payload: { nested: ['a', 1, null, true] } }),
    flag('payload number', { payload: 0 }),
    flag('payload undefined', { payload: undefined }),
    flag('quotes "and" \\ backslash \u2028 \u0000 é 🚀', { variant: 'v"\n', payload: '"\ud800"' }),
    flag('__proto__', { version: 0 }),
    flag('constructor', { id: NaN, version: Infinity }),
    flag('failed', { enabled: false, failed: true, reason: reasonOf('database_error', null) }),
    flag('super', { reason: reasonOf('super_condition_value', 0), payload: 'on' }),
    flag('hand-made reason', { reason: { code: 'condition_match', condition_index: 5, description: 'Matched condition set 6' } }),
  ];

  it('writes exactly what JSON.stringify writes of the built answer, for every kind of result', () => {
    const text = expectSameText(varied, true, { shape: 'flags-v2', withConfig: false });
    expect(Object.keys(JSON.parse(text).flags)).toHaveLength(varied.length - 1);
  });

  it('is the same text with the config, for every shape, and for no flags at all', () => {
    const settings = { ...DEFAULT_SDK_SETTINGS, capture_performance_opt_in: true };
    for (const shape of ['flags-v2', 'v3', 'v2', 'v1'] as const) {
      expectSameText(varied, false, { shape, withConfig: true }, settings);
      expectSameText(varied, false, { shape, withConfig: false });
      expectSameText([], true, { shape, withConfig: true });
    }
  });

  it("keeps an object's key order when a flag key is an array index", () => {
    const text = expectSameText([flag('b'), flag('10'), flag('2'), flag('4294967295')], false, { shape: 'flags-v2', withConfig: false });
    expect(Object.keys(JSON.parse(text).flags)).toEqual(['2', '10', 'b', '4294967295']);
  });

  it('answers a flag changed since its text was kept (new version, id or description) with its new values', () => {
    expectSameText([flag('changing')], false, { shape: 'flags-v2', withConfig: false });
    for (const change of [{ version: 4 }, { id: 8 }, { description: null }, { description: 'Renamed' }]) {
      const text = expectSameText([flag('changing', change)], false, { shape: 'flags-v2', withConfig: false });
      expect(JSON.parse(text).flags.changing.metadata).toMatchObject(change);
    }
  });
});

describe('flags-v2 answer in parts', () => {
  const v2: ShapeChoice = { shape: 'flags-v2', withConfig: false };
  const results = new Map([
    ['on', result('on', '{"a":1}')],
    ['off', result('off', null)],
  ]);

  it('is the text flagsResponseText writes, its repeating bytes kept per results map', () => {
    const parts = flagsResponseParts(results, false, v2);
    if (typeof parts === 'string') throw new Error('expected parts');
    const joined = JSON.parse(`${parts.head.toString('utf8')}${parts.tail}`);
    const text = JSON.parse(flagsResponseText(results, false, v2));
    expect({ ...joined, requestId: null, evaluatedAt: null }).toEqual({ ...text, requestId: null, evaluatedAt: null });
    expect(Object.keys(joined)).toEqual(Object.keys(text));
    expect(joined.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const again = flagsResponseParts(results, false, v2) as { head: Buffer; tail: string };
    expect(again.head).toBe(parts.head);
    expect(again.tail).not.toBe(parts.tail);
    expect(
      JSON.parse(`${(flagsResponseParts(results, true, v2) as { head: Buffer }).head.toString('utf8')}x","evaluatedAt":1}`).errorsWhileComputingFlags,
    ).toBe(true);
  });

  it('is plain text for the other shapes, with config, or keys an object would reorder', () => {
    expect(typeof flagsResponseParts(results, false, { shape: 'v3', withConfig: false })).toBe('string');
    expect(typeof flagsResponseParts(results, false, { shape: 'flags-v2', withConfig: true })).toBe('string');
    expect(typeof flagsResponseParts(new Map([['7', result('7', null)]]), false, v2)).toBe('string');
  });
});
