/**
 * A writer of ClickHouse's RowBinary input format, for the column types the worker writes
 * (https://clickhouse.com/docs/interfaces/formats/RowBinary): values are written back to back
 * with no names and no escaping, so the server reads them without parsing text. Only the
 * types our tables use are here; row-binary.int.test has ClickHouse read every one back.
 */
export class RowBinaryWriter {
  private buffer: Buffer;
  private position = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(initialBytes);
  }

  /** The bytes written so far (a view: valid until the next write). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.position);
  }

  private reserve(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.position + bytes));
    this.buffer.copy(grown, 0, 0, this.position);
    this.buffer = grown;
  }

  private varUInt(value: number): void {
    this.reserve(10);
    while (value >= 0x80) {
      this.buffer[this.position++] = (value & 0x7f) | 0x80;
      value = Math.floor(value / 128);
    }
    this.buffer[this.position++] = value;
  }

  /** String: its UTF-8 length as a LEB128 varint, then the bytes (a lone surrogate becomes U+FFFD). */
  string(value: string): void {
    // Most strings are short ASCII (names, ids, small JSON): copied unit by unit here, which
    // costs less than a call into the native UTF-8 encoder per string.
    const units = value.length;
    if (units < 128) {
      this.reserve(1 + units * 3);
      const buffer = this.buffer;
      const start = this.position + 1;
      let i = 0;
      for (; i < units; i++) {
        const code = value.charCodeAt(i);
        if (code >= 0x80) break;
        buffer[start + i] = code;
      }
      if (i === units) {
        buffer[this.position] = units;
        this.position = start + units;
        return;
      }
    }
    // At most 3 bytes per UTF-16 unit: a string of up to 42 units has a one-byte length,
    // written after the text (no second pass over it to measure it first).
    if (value.length <= 42) {
      this.reserve(1 + value.length * 3);
      const written = this.buffer.write(value, this.position + 1, 'utf8');
      this.buffer[this.position] = written;
      this.position += 1 + written;
      return;
    }
    // Longer strings (the properties JSON) are encoded once, after room for the length of the
    // most bytes they can take; the text moves back only when its real length is shorter.
    const most = value.length * 3;
    const room = varUIntSize(most);
    this.reserve(room + most);
    const written = this.buffer.write(value, this.position + room, 'utf8');
    const size = varUIntSize(written);
    if (size < room) this.buffer.copyWithin(this.position + size, this.position + room, this.position + room + written);
    this.varUInt(written);
    this.position += written;
  }

  /**
   * String: a JSON object's UTF-8 text, `bytes` from `start` to their end, with `lastMember` (a
   * `"key":value` JSON text) added before the closing brace when set: copied, never decoded.
   */
  jsonObjectBytes(bytes: Buffer, start: number, lastMember: string | null): void {
    const end = bytes.length;
    if (lastMember === null) {
      this.varUInt(end - start);
      this.reserve(end - start);
      this.position += bytes.copy(this.buffer, this.position, start, end);
      return;
    }
    const isEmpty = end - start === 2;
    const memberBytes = Buffer.byteLength(lastMember, 'utf8');
    // The object less its closing brace, a comma unless it was empty, the member, the brace.
    this.varUInt(end - start + (isEmpty ? 0 : 1) + memberBytes);
    this.reserve(end - start + 1 + memberBytes);
    this.position += bytes.copy(this.buffer, this.position, start, end - 1);
    if (!isEmpty) this.buffer[this.position++] = COMMA;
    this.position += this.buffer.write(lastMember, this.position, 'utf8');
    this.buffer[this.position++] = CLOSING_BRACE;
  }

  /** Int64 / DateTime64 ticks, from a safe integer. */
  int64(value: number): void {
    if (!Number.isSafeInteger(value)) throw new RangeError(`RowBinary Int64: ${value} is not a safe integer`);
    this.reserve(8);
    // Two's complement in two 32-bit halves (no BigInt per value): the floor keeps the low half
    // non-negative, so a negative value carries its sign in the high half.
    const high = Math.floor(value / 4294967296);
    this.buffer.writeUInt32LE(value - high * 4294967296, this.position);
    this.buffer.writeInt32LE(high, this.position + 4);
    this.position += 8;
  }

  /** `count` zero bytes: an empty String is one, a zero Int64 or DateTime64 eight. */
  zeros(count: number): void {
    this.reserve(count);
    this.buffer.fill(0, this.position, this.position + count);
    this.position += count;
  }

  int8(value: number): void {
    this.reserve(1);
    this.buffer.writeInt8(value, this.position);
    this.position += 1;
  }

  /**
   * DateTime64(precision) from epoch milliseconds (fractions of a millisecond kept to the
   * precision). ClickHouse does not check binary ticks: a time outside the type's range
   * (1900-01-01 to 2299-12-31) is refused here, as the server refuses its text.
   */
  dateTime64(epochMs: number, precision: 3 | 6): void {
    if (!(epochMs >= MIN_DATETIME64_MS && epochMs < END_DATETIME64_MS))
      throw new RangeError(`RowBinary DateTime64: ${epochMs} ms is outside 1900-01-01 to 2299-12-31`);
    this.int64(precision === 3 ? Math.floor(epochMs) : Math.round(epochMs * 1000));
  }

  /**
   * UUID: ClickHouse stores it as two UInt64 (the first and the last 8 bytes of the text form,
   * each read as a big-endian number) and writes each little-endian, so each half is reversed.
   */
  uuid(value: string): void {
    if (value.length !== 36 || value[8] !== '-' || value[13] !== '-' || value[18] !== '-' || value[23] !== '-') {
      throw new TypeError(`RowBinary UUID: ${JSON.stringify(value.slice(0, 64))} is not a UUID`);
    }
    this.reserve(16);
    const start = this.position;
    let nibbles = 0;
    for (let i = 0; i < 36; i++) {
      if (i === 8 || i === 13 || i === 18 || i === 23) continue;
      const high = hexValue(value.charCodeAt(i));
      const low = hexValue(value.charCodeAt(++i));
      if (high < 0 || low < 0) throw new TypeError(`RowBinary UUID: ${JSON.stringify(value)} is not a UUID`);
      const byte = nibbles >> 1;
      // byte 0..7 → start+7..start+0, byte 8..15 → start+15..start+8
      this.buffer[start + (byte < 8 ? 7 - byte : 23 - byte)] = (high << 4) | low;
      nibbles += 2;
    }
    this.position += 16;
  }
}

const COMMA = 0x2c;
const CLOSING_BRACE = 0x7d;

/** Bytes of a LEB128 varint of the value. */
function varUIntSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

const MIN_DATETIME64_MS = Date.UTC(1900, 0, 1);
const END_DATETIME64_MS = Date.UTC(2300, 0, 1);

/** Each ASCII code's hex digit value, -1 for the rest. */
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUES[48 + i] = i;
for (let i = 0; i < 6; i++) HEX_VALUES[97 + i] = HEX_VALUES[65 + i] = 10 + i;

const hexValue = (code: number): number => (code < 128 ? HEX_VALUES[code]! : -1);
