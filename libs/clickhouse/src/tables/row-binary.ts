/**
 * A writer of ClickHouse's RowBinary input format, for the column types the worker writes
 * (https://clickhouse.com/docs/interfaces/formats/RowBinary): values are written back to back
 * with no names and no escaping, so the server reads them without parsing text. Only the
 * types our tables use are here; row-binary.int.test has ClickHouse read every one back.
 */
export class RowBinaryWriter {
  private buffer: Buffer;
  private position = 0;
  /** The last `lastMember` of jsonObjectBytes and its UTF-8 bytes. */
  private memberText = '';
  private memberBytes = Buffer.alloc(0);

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
      this.copyBytes(bytes, start, end);
      return;
    }
    const isEmpty = end - start === 2;
    // Runs share one member text (the `$ip` of few clients): its bytes are made once for them.
    if (lastMember !== this.memberText) {
      this.memberText = lastMember;
      this.memberBytes = Buffer.from(lastMember, 'utf8');
    }
    const member = this.memberBytes;
    // The object less its closing brace, a comma unless it was empty, the member, the brace.
    this.varUInt(end - start + (isEmpty ? 0 : 1) + member.length);
    this.reserve(end - start + 1 + member.length);
    this.copyBytes(bytes, start, end - 1);
    if (!isEmpty) this.buffer[this.position++] = COMMA;
    this.copyBytes(member, 0, member.length);
    this.buffer[this.position++] = CLOSING_BRACE;
  }

  /** Copies bytes[start, end) in (room reserved): short runs byte by byte, for Buffer#copy's checks cost more than they do. */
  private copyBytes(bytes: Buffer, start: number, end: number): void {
    if (end - start > SHORT_COPY_BYTES) {
      this.position += bytes.copy(this.buffer, this.position, start, end);
      return;
    }
    const buffer = this.buffer;
    let at = this.position;
    for (let i = start; i < end; i++) buffer[at++] = bytes[i]!;
    this.position = at;
  }

  /** Int64 / DateTime64 ticks, from a safe integer. */
  int64(value: number): void {
    if (!Number.isSafeInteger(value)) throw new RangeError(`RowBinary Int64: ${value} is not a safe integer`);
    this.reserve(8);
    // Two's complement in two 32-bit halves (no BigInt per value): the floor keeps the low half
    // non-negative, so a negative value carries its sign in the high half. Written byte by byte:
    // writeUInt32LE checks its arguments again on every call.
    const high = Math.floor(value / 4294967296);
    const low = value - high * 4294967296;
    const buffer = this.buffer;
    const at = this.position;
    buffer[at] = low;
    buffer[at + 1] = low >>> 8;
    buffer[at + 2] = low >>> 16;
    buffer[at + 3] = low >>> 24;
    buffer[at + 4] = high;
    buffer[at + 5] = high >>> 8;
    buffer[at + 6] = high >>> 16;
    buffer[at + 7] = high >>> 24;
    this.position = at + 8;
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
    const buffer = this.buffer;
    const start = this.position;
    // Two hex digits per lookup: byte 0..7 → start+7..start+0, byte 8..15 → start+15..start+8.
    for (let byte = 0; byte < 16; byte++) {
      const at = UUID_BYTE_AT[byte]!;
      const high = value.charCodeAt(at);
      const low = value.charCodeAt(at + 1);
      const pair = (high | low) < 128 ? HEX_PAIR_VALUES[(high << 7) | low]! : -1;
      if (pair < 0) throw new TypeError(`RowBinary UUID: ${JSON.stringify(value)} is not a UUID`);
      buffer[start + (byte < 8 ? 7 - byte : 23 - byte)] = pair;
    }
    this.position += 16;
  }
}

const COMMA = 0x2c;
/** Up to this many bytes a loop copies faster than Buffer#copy (measured with events' properties of ~100 bytes). */
const SHORT_COPY_BYTES = 256;
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

/** Where each of a UUID's 16 bytes is in its text: two hex digits, the dashes skipped. */
const UUID_BYTE_AT = Uint8Array.from([0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]);

/** The byte two hex digits spell, by their ASCII codes (high << 7 | low); -1 for any other pair. */
const HEX_PAIR_VALUES = new Int16Array(128 * 128).fill(-1);
{
  const digits: [number, number][] = [];
  for (let i = 0; i < 10; i++) digits.push([48 + i, i]);
  for (let i = 0; i < 6; i++) digits.push([97 + i, 10 + i], [65 + i, 10 + i]);
  for (const [highCode, high] of digits) for (const [lowCode, low] of digits) HEX_PAIR_VALUES[(highCode << 7) | lowCode] = (high << 4) | low;
}
