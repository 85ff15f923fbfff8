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
