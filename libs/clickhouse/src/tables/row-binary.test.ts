import { RowBinaryWriter } from './row-binary';

/** A String as RowBinary spells it: the UTF-8 length as a LEB128 varint, then the bytes. */
function expectedString(value: string): string {
  let length = Buffer.byteLength(value, 'utf8');
  const prefix: number[] = [];
  while (length >= 0x80) {
    prefix.push((length & 0x7f) | 0x80);
    length = Math.floor(length / 128);
  }
  prefix.push(length);
  return Buffer.concat([Buffer.from(prefix), Buffer.from(value, 'utf8')]).toString('hex');
}

describe('RowBinaryWriter.string', () => {
  // Lengths around each path (short ASCII, ≤ 42 units, longer) and each varint size, with
  // text whose room for the most bytes needs a longer length than the text itself.
  const cases: [string, string][] = [
    ['empty', ''],
    ['short ASCII', 'x'.repeat(127)],
    ['42 two-byte units', 'é'.repeat(42)],
    ['43 two-byte units (room 129 bytes, written 86)', 'é'.repeat(43)],
    ['long ASCII (room and length two bytes)', 'x'.repeat(200)],
    ['ASCII whose room needs three bytes but length two', 'x'.repeat(6000)],
    ['three-byte length', 'y'.repeat(20_000)],
    ['four-byte characters and a lone surrogate', `😀${'a'.repeat(60)}\ud800中`],
  ];
  it.each(cases)('%s', (_, value) => {
    const writer = new RowBinaryWriter(8);
    writer.string(value);
    writer.int8(7); // what follows lands right after the text
    expect(writer.bytes().toString('hex')).toBe(expectedString(value) + '07');
  });

  it('writes strings back to back in a growing buffer', () => {
    const writer = new RowBinaryWriter(4);
    const values = ['a', 'é'.repeat(100), 'b'.repeat(300), ''];
    for (const value of values) writer.string(value);
    expect(writer.bytes().toString('hex')).toBe(values.map(expectedString).join(''));
  });
});

describe('RowBinaryWriter.zeros', () => {
  it('writes that many zero bytes after what is there', () => {
    const writer = new RowBinaryWriter(2);
    writer.int8(1);
    writer.zeros(45);
    expect(writer.bytes()).toEqual(Buffer.concat([Buffer.from([1]), Buffer.alloc(45)]));
  });
});

describe('RowBinaryWriter.uuid', () => {
  /** ClickHouse's UUID in RowBinary: the text's first and last 8 bytes, each half reversed (little-endian UInt64s). */
  const expectedUuid = (text: string) => {
    const bytes = Buffer.from(text.replaceAll('-', ''), 'hex');
    return Buffer.concat([bytes.subarray(0, 8).reverse(), bytes.subarray(8).reverse()]).toString('hex');
  };

  it.each([
    '00000000-0000-0000-0000-000000000000',
    '0190a6f0-1234-7abc-8def-0123456789ab',
    'FFFFFFFF-EEEE-4DDD-8CCC-BBBBBBBBBBBB',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
  ])('%s', (text) => {
    const writer = new RowBinaryWriter(4);
    writer.uuid(text);
    writer.int8(1);
    expect(writer.bytes().toString('hex')).toBe(expectedUuid(text) + '01');
  });

  it('refuses a text that is not a UUID, whichever digit is wrong, and writes nothing', () => {
    const good = '0190a6f0-1234-7abc-8def-0123456789ab';
    const bad = [
      good.slice(0, 35),
      `${good}0`,
      good.replace('-', '0'),
      ...[...good].flatMap((c, i) => (c === '-' ? [] : [`${good.slice(0, i)}g${good.slice(i + 1)}`, `${good.slice(0, i)}é${good.slice(i + 1)}`])),
    ];
    for (const text of bad) {
      const writer = new RowBinaryWriter(4);
      expect(() => writer.uuid(text)).toThrow(TypeError);
      expect(writer.bytes().length).toBe(0);
    }
  });
});

describe('RowBinaryWriter.jsonObjectBytes', () => {
  // A message's bytes with the object at its end, as the worker hands them over.
  const cases: [string, string, string | null][] = [
    ['an object as it is', '{"a":1,"b":"é😀"}', null],
    ['an object with a member added', '{"a":1}', '"$ip":"10.0.0.1"'],
    ['the empty object with a member added', '{}', '"$ip":"::1"'],
    ['the empty object', '{}', null],
    ['a long object (two-byte length) gaining a non-ASCII member', `{"x":"${'y'.repeat(300)}"}`, '"k":"中"'],
    ['a long object (three-byte length)', `{"x":"${'y'.repeat(20_000)}"}`, '"$ip":"1.2.3.4"'],
  ];
  it.each(cases)('%s: the String of its text', (_, json, lastMember) => {
    const message = Buffer.concat([Buffer.from([2, 0, 0x5c, 0x75]), Buffer.from(json, 'utf8')]);
    const writer = new RowBinaryWriter(4);
    writer.string('before');
    writer.jsonObjectBytes(message, 4, lastMember);
    writer.int8(7);
    const text = lastMember === null ? json : JSON.stringify({ ...(JSON.parse(json) as object), ...(JSON.parse(`{${lastMember}}`) as object) });
    expect(writer.bytes().toString('hex')).toBe(expectedString('before') + expectedString(text) + '07');
  });
});

describe('RowBinaryWriter.jsonObjectBytes, one writer for many rows', () => {
  it('writes each row with its own member, whichever member the row before had', () => {
    const writer = new RowBinaryWriter(4);
    const rows: [string, string | null][] = [
      ['{"a":1}', '"$ip":"10.0.0.1"'],
      ['{"a":2}', '"$ip":"10.0.0.1"'],
      ['{}', '"$ip":"2001:db8::1"'],
      [`{"b":"${'z'.repeat(400)}"}`, '"$ip":"10.0.0.1"'],
      ['{"c":"é"}', null],
      ['{"d":4}', '"k":"中"'],
    ];
    let expected = '';
    for (const [json, member] of rows) {
      writer.jsonObjectBytes(Buffer.from(`xx${json}`, 'utf8'), 2, member);
      const text = member === null ? json : JSON.stringify({ ...(JSON.parse(json) as object), ...(JSON.parse(`{${member}}`) as object) });
      expected += expectedString(text);
    }
    expect(writer.bytes().toString('hex')).toBe(expected);
  });
});

describe('RowBinaryWriter.int64', () => {
  it('writes safe integers as little-endian two’s complement, as writeBigInt64LE does', () => {
    const values = [
      0,
      1,
      -1,
      255,
      256,
      2 ** 31 - 1,
      2 ** 31,
      -(2 ** 31),
      2 ** 32 - 1,
      2 ** 32,
      -(2 ** 32),
      -(2 ** 32) - 1,
      1_795_000_000_000_123,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
    ];
    const writer = new RowBinaryWriter(4);
    for (const value of values) writer.int64(value);
    const expected = Buffer.alloc(8 * values.length);
    values.forEach((value, i) => expected.writeBigInt64LE(BigInt(value), 8 * i));
    expect(writer.bytes().toString('hex')).toBe(expected.toString('hex'));
    expect(() => writer.int64(2 ** 53)).toThrow(RangeError);
    expect(() => writer.int64(1.5)).toThrow(RangeError);
  });
});
