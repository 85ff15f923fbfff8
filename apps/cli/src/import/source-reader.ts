import { createHash } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse';
import { readZipEntries } from './zip-entries';

/**
 * One record of a source: its position for checkpoints (`line`, 1-based and increasing through
 * the whole source; for CSV the line a record starts on), and, for a zip archive, where it is
 * for a person reading the report (`where`: the file inside the archive and its line there).
 */
export type SourceRecord = ({ record: Record<string, unknown> } | { invalid: 'invalid_json' }) & {
  line: number;
  where?: { file: string; line: number };
};

/** Where a source is: a path, or `-` for standard input. */
export interface Source {
  path: string;
  /** Content identity (size and the hashes of its first and last MiB); null for stdin. */
  identity: string | null;
  size: number | null;
}

const EDGE_BYTES = 1 << 20;
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/**
 * What identifies a file's content for resuming: its size and the SHA-256 of its first and last
 * MiB, so a 5 GB file is recognised without reading it all, and an append, a truncation or an
 * edit near either end is refused.
 */
export function describeSource(path: string): Source {
  if (path === '-') return { path, identity: null, size: null };
  const size = fs.statSync(path).size;
  const fd = fs.openSync(path, 'r');
  try {
    const hash = createHash('sha256').update(String(size));
    const read = (position: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const n = fs.readSync(fd, buffer, 0, length, position);
      hash.update(buffer.subarray(0, n));
    };
    read(0, Math.min(EDGE_BYTES, size));
    if (size > EDGE_BYTES) read(Math.max(EDGE_BYTES, size - EDGE_BYTES), Math.min(EDGE_BYTES, size - EDGE_BYTES));
    return { path, identity: hash.digest('hex').slice(0, 32), size };
  } finally {
    fs.closeSync(fd);
  }
}

/** A zip archive (Amplitude's export) is recognised by its first bytes, whatever the file is called. */
function isZipFile(path: string): boolean {
  if (path === '-') return false;
  const fd = fs.openSync(path, 'r');
  try {
    const head = Buffer.alloc(4);
    return fs.readSync(fd, head, 0, 4, 0) === 4 && head.equals(ZIP_MAGIC);
  } finally {
    fs.closeSync(fd);
  }
}

/** The stream's bytes, gunzipped when they start with gzip's magic bytes (whatever the file is called). */
async function gunzipIfGzip(raw: Readable): Promise<Readable> {
  const counted = new PassThrough();
  raw.on('error', (error) => counted.destroy(error));
  raw.pipe(counted);
  // Peek at the first two bytes without losing them.
  const first: Buffer = await new Promise((resolve, reject) => {
    const onReadable = () => {
      const chunk = counted.read() as Buffer | null;
      if (chunk === null) return;
      counted.off('readable', onReadable);
      counted.off('end', onEnd);
      counted.unshift(chunk);
      resolve(chunk);
    };
    const onEnd = () => resolve(Buffer.alloc(0));
    counted.on('readable', onReadable);
    counted.once('end', onEnd);
    counted.once('error', reject);
  });
  if (first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b) return counted.pipe(createGunzip());
  return counted;
}

const BOM = '\ufeff';

/** JSON lines: blank lines skipped, unparseable ones reported; a byte-order mark before the first is not part of it. */
async function* jsonLines(bytes: Readable): AsyncGenerator<{ line: number; record: Record<string, unknown> } | { line: number; invalid: 'invalid_json' }> {
  let line = 0;
  for await (let text of readline.createInterface({ input: bytes, crlfDelay: Infinity })) {
    line++;
    if (line === 1 && text.startsWith(BOM)) text = text.slice(1);
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, invalid: 'invalid_json' };
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) yield { line, record: value as Record<string, unknown> };
    else yield { line, invalid: 'invalid_json' };
  }
}

/** Line breaks inside a record's text once the blank lines before it and its own line end are left out. */
function innerLineBreaks(raw: string): number {
  const text = raw.replace(/^(?:\r?\n|\r)+/, '').replace(/(?:\r?\n|\r)$/, '');
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** CSV with a header row; each record numbered by the line it starts on, quoted line breaks counted. */
async function* csvRecords(bytes: Readable): AsyncGenerator<{ line: number; record: Record<string, unknown> }> {
  const parser = bytes.pipe(parseCsv({ columns: true, info: true, raw: true, relax_column_count: true, skip_empty_lines: true, bom: true }));
  for await (const { record, info, raw } of parser as AsyncIterable<{ record: Record<string, unknown>; info: { lines: number }; raw: string }>) {
    // csv-parse counts the line a record ends on.
    yield { line: info.lines - innerLineBreaks(raw), record };
  }
}

/**
 * Streams a source's records in order, never holding the file: JSON lines or CSV, gzip or not,
 * or a zip archive of such files (Amplitude's export: gzipped JSON lines per hour), read entry
 * by entry in name order. `countBytes` hears the bytes read from the source.
 */
export async function* readSource(path: string, kind: 'jsonl' | 'csv', countBytes: (n: number) => void = () => undefined): AsyncGenerator<SourceRecord> {
  const records = (bytes: Readable) => (kind === 'csv' ? csvRecords(bytes) : jsonLines(bytes));
  if (isZipFile(path)) {
    let before = 0;
    for await (const entry of readZipEntries(path)) {
      let last = 0;
      for await (const item of records(await gunzipIfGzip(entry.stream))) {
        last = item.line;
        yield { ...item, line: before + item.line, where: { file: `${path}:${entry.name}`, line: item.line } };
      }
      countBytes(entry.compressedSize);
      before += last;
    }
    return;
  }
  const raw: Readable = path === '-' ? process.stdin : fs.createReadStream(path);
  raw.on('data', (chunk: Buffer) => countBytes(chunk.length));
  yield* records(await gunzipIfGzip(raw));
}
