import { encodeIngestMessage, FORMAT2_FLAGS, type IngestMessage } from '@sightline/ingestion';
import { normalizeStep, type PreparedEvent } from './normalize.step';
import { parseStep } from './parse.step';
import { prepareCommonFormat2 } from './prepare-format2.step';
import { ok, type StepResult } from './step-result';

/** The project a token resolves to when the message has none (the team step's answer). */
const RESOLVED_TEAM = 7;

/** What the general steps make of a bus value: parseStep, the team step, normalizeStep, as events.consumer runs them. */
function generalPath(value: Buffer): StepResult<PreparedEvent> {
  const reading = parseStep(value);
  if (reading.kind !== 'ok') return reading;
  const { message } = reading.value;
  return normalizeStep(message, typeof message.team_id === 'number' ? message.team_id : RESOLVED_TEAM, false, reading.value.knownClean, reading.value);
}

const base: IngestMessage = {
  uuid: '0190a6f0-0000-7000-8000-000000000001',
  distinct_id: 'user-1',
  ip: '10.0.0.1',
  data: { event: '$pageview', distinct_id: 'user-1', properties: { $current_url: 'https://example.com/', $lib: 'web' } },
  now: '2024-01-10T15:00:00.000Z',
  sent_at: null,
  token: 'phc_test',
  team_id: 1,
  event: '$pageview',
  timestamp: '2024-01-10T14:59:00.000Z',
  historical_migration: false,
};

const withProperties = (m: IngestMessage, properties: unknown, extra: Record<string, unknown> = {}): IngestMessage => ({
  ...m,
  data: { event: m.event, distinct_id: m.distinct_id, properties, ...extra },
});

/** Properties of many kinds, each of which the fast path takes or leaves to the general steps. */
const propertySets: [string, unknown][] = [
  ['personless', { $current_url: 'https://example.com/', $process_person_profile: false, $lib: 'web' }],
  ['person', { $current_url: 'https://example.com/', $set: { plan: 'pro' } }],
  ['empty', {}],
  ['absent', undefined],
  ['own $ip', { $ip: '1.2.3.4', a: 1 }],
  ['$ip null', { $ip: null }],
  [
    'every JSON kind',
    { s: 'x"\\\n\t/', n: -1.5e-300, big: 1e21, z: 0, t: true, f: false, nul: null, arr: [1, 'a', null, [], {}], obj: { deep: [{}] }, 10: 'k' },
  ],
  ['unicode values', { ключ: 'значение 😀', emoji: '\u{1f600}', '': '' }],
  ['a NUL in a value and a key', { 'k\u0000': ['v\u0000'] }],
  ['a lone surrogate', { s: 'a\ud800b', [`k\udc00`]: 1 }],
  ['a surrogate pair escaped', { s: '\ud83d\ude00' }],
  ['$groups', { $groups: { company: 'acme' } }],
  ['$groups null', { $groups: null }],
  ['$elements', { $elements: [{ tag_name: 'a', attr__class: 'x y', $el_text: 'go' }] }],
  ['$elements_chain', { $elements_chain: 'a.x:text="go"' }],
  ['empty $elements_chain', { $elements_chain: '' }],
  ['$process_person_profile true', { $process_person_profile: true }],
  ['$process_person_profile "false"', { $process_person_profile: 'false' }],
  ['own __proto__ key', JSON.parse('{"__proto__":{"x":1},"a":2}') as unknown],
  ['properties an array', [1, 2]],
  ['properties a string', 'text'],
  ['properties null', null],
];

/** Message variants: every flag the encoder can write, and the plain strings it can carry. */
const variants: [string, (m: IngestMessage) => IngestMessage][] = [
  ['as is', (m) => m],
  ['no team', (m) => ({ ...m, team_id: null })],
  ['no ip', (m) => ({ ...m, ip: null })],
  ['empty ip', (m) => ({ ...m, ip: '' })],
  ['historical', (m) => ({ ...m, historical_migration: true })],
  ['historical, no ip', (m) => ({ ...m, historical_migration: true, ip: null })],
  ['sent_at', (m) => ({ ...m, sent_at: '2024-01-10T14:58:00.000Z' })],
  ['unicode distinct id', (m) => ({ ...m, distinct_id: 'ü😀' })],
  ['unicode event name', (m) => ({ ...m, event: 'événement 中文' })],
  ['unicode token', (m) => ({ ...m, token: 'phc_ü' })],
  ['lone surrogate in the distinct id', (m) => ({ ...m, distinct_id: 'u\ud800' })],
  ['NUL in the distinct id', (m) => ({ ...m, distinct_id: 'u\u00001' })],
  ['NUL in the event name', (m) => ({ ...m, event: 'sign\u0000up' })],
  ['NUL in the token', (m) => ({ ...m, token: 'phc\u0000' })],
  ['event name of 200', (m) => ({ ...m, event: 'e'.repeat(200) })],
  ['event name of 201', (m) => ({ ...m, event: 'e'.repeat(201) })],
  ['long distinct id', (m) => ({ ...m, distinct_id: 'd'.repeat(200) })],
  ['timestamp on the 29th', (m) => ({ ...m, timestamp: '2024-02-29T10:00:00.000Z' })],
  ['timestamp not ISO', (m) => ({ ...m, timestamp: '2024-01-10 14:59:00' })],
  ['timestamp not a date', (m) => ({ ...m, timestamp: 'yesterday' })],
  ['now not ISO', (m) => ({ ...m, now: 'Wed, 10 Jan 2024 15:00:00 GMT' })],
  ['now not a date', (m) => ({ ...m, now: 'soon' })],
  ['empty uuid', (m) => ({ ...m, uuid: '' })],
  ['top-level $set', (m) => ({ ...m, data: { ...(m.data as object), $set: { plan: 'pro', a: 1 } } })],
  ['top-level $set_once', (m) => ({ ...m, data: { ...(m.data as object), $set_once: { first: 'x' } } })],
  ['top-level $set not an object', (m) => ({ ...m, data: { ...(m.data as object), $set: 'x' } })],
  ['a \\u escape in the event, none in the properties', (m) => ({ ...m, data: { ...(m.data as object), other: 'a\u0001b' } })],
  ['a NUL in the event json', (m) => ({ ...m, data: { ...(m.data as object), other: 'a\u0000b' } })],
];

function corpus(): [string, Buffer][] {
  const values: [string, Buffer][] = [];
  for (const [propertiesName, properties] of propertySets)
    for (const [variantName, variant] of variants)
      values.push([`${propertiesName}, ${variantName}`, encodeIngestMessage(variant(withProperties(base, properties)))]);
  return values;
}

/** Bytes the encoder never writes: a bus may still hold them (another writer, a corrupted copy). */
function odd(): [string, Buffer][] {
  const common = encodeIngestMessage(withProperties(base, { a: 1 }));
  const propertiesAt = common.length - '{"a":1}'.length;
  const replaceProperties = (json: string) => Buffer.concat([common.subarray(0, propertiesAt), Buffer.from(json)]);
  const withFlags = (set: number, clear = 0) => {
    const copy = Buffer.from(common);
    copy[1] = (copy[1]! | set) & ~clear;
    return copy;
  };
  const highBytes = Buffer.from(common);
  highBytes[highBytes.indexOf('user-1') + 4] = 0xe9; // "user-1" → "useré1" in latin1, flagged ASCII
  const longerThanValue = Buffer.from(common);
  longerThanValue.writeUInt32LE(10_000, 38);
  return [
    ['properties not JSON', replaceProperties('{"a":')],
    ['properties JSON with trailing text', replaceProperties('{"a":1} x')],
    ['properties with a \\u escape', replaceProperties('{"a":"\\u0041"}')],
    ['properties with a NUL escape', replaceProperties('{"a":"\\u0000"}')],
    ['properties with a lone surrogate escape', replaceProperties('{"a":"\\ud800"}')],
    ['properties with whitespace', replaceProperties('{ "a" : 1 }')],
    ['properties with a raw NUL byte', replaceProperties('{"a":"\u0000"}')],
    ['truncated header', common.subarray(0, 20)],
    ['field lengths past the end', longerThanValue],
    ['ASCII flag over latin1 bytes', highBytes],
    ['historical flag set', withFlags(FORMAT2_FLAGS.HISTORICAL)],
    ['no team flag', withFlags(0, FORMAT2_FLAGS.HAS_TEAM)],
    ['no ip flag', withFlags(0, FORMAT2_FLAGS.HAS_IP)],
    ['top-level flag without a $set', withFlags(FORMAT2_FLAGS.TOP_LEVEL_UPDATES)],
    ['ASCII flag cleared', withFlags(0, FORMAT2_FLAGS.ASCII_STRINGS)],
    ['format 1', Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(base))])],
    ['format 0', Buffer.from(JSON.stringify({ ...base, data: JSON.stringify(base.data) }))],
    ['unknown version', Buffer.from([3, 0, 0])],
    ['empty value', Buffer.alloc(0)],
  ];
}

describe('prepareCommonFormat2', () => {
  const all = [...corpus(), ...odd()];

  it.each(all)('%s: what the general steps make, or null', (_, value) => {
    const fast = prepareCommonFormat2(value);
    if (fast !== null) expect(generalPath(value)).toStrictEqual(ok(fast));
  });

  it('takes the common messages itself', () => {
    const taken = all.filter(([, value]) => prepareCommonFormat2(value) !== null).map(([name]) => name);
    for (const name of [
      'personless, as is',
      'personless, no ip',
      'personless, empty ip',
      'personless, historical',
      'personless, sent_at',
      'personless, long distinct id',
      'personless, event name of 200',
      'person, as is',
      'empty, as is',
      'absent, as is',
      'own $ip, as is',
      '$ip null, as is',
      'every JSON kind, as is',
      'unicode values, as is',
      'a surrogate pair escaped, as is',
      '$process_person_profile true, as is',
      '$process_person_profile "false", as is',
      'own __proto__ key, as is',
      'properties with whitespace',
      'ASCII flag over latin1 bytes',
      'historical flag set',
    ])
      expect(taken).toContain(name);
    // Sanity: the corpus is mostly messages the general steps accept.
    expect(taken.length).toBeGreaterThan(100);
  });

  /** Names of messages the fast path must leave to the general steps (the first variant's or property set's name decides). */
  const uncommon =
    /^(\$groups|\$elements|empty \$elements_chain|a NUL in a value|a lone surrogate|properties (an array|a string|null|not JSON|JSON with|with a)|truncated|field lengths|format [01]|unknown version|empty value|no team flag|top-level flag|ASCII flag cleared)|, (no team|top-level|NUL in the (distinct id|event name)|event name of 201|timestamp|now not|unicode (distinct id|event name|token)|lone surrogate in|a \\u escape|a NUL in the event json)/;

  it('leaves the uncommon ones to the general steps', () => {
    const left = all.filter(([name]) => uncommon.test(name));
    expect(left.length).toBeGreaterThan(300);
    for (const [name, value] of left) expect([name, prepareCommonFormat2(value)]).toEqual([name, null]);
  });
});
