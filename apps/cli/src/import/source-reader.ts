import { createHash } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse';

/** One record of a source file: its line (1-based; for CSV the line a record starts on) and value. */
export type SourceRecord = { line: number; record: Record<string, unknown> } | { line: number; invalid: 'invalid_json' };

/** Where a source is: a path, or `-` for standard input. */
export interface Source {
  path: string;
  /** Content identity (size and the hashes of its first and last MiB); null for stdin. */
  identity: string | null;
  size: number | null;
}

const EDGE_BYTES = 1 << 20;

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

/** The bytes of a source, gunzipped when they start with gzip's magic bytes (whatever the file is called). */
async function openBytes(path: string, countBytes: (n: number) => void): Promise<Readable> {
  const raw: Readable = path === '-' ? process.stdin : fs.createReadStream(path);
  const counted = new PassThrough();
  raw.on('data', (chunk: Buffer) => countBytes(chunk.length));
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

/**
 * Streams a source's records in order, never holding the file: JSON lines (blank lines skipped,
 * unparseable ones reported) or CSV with a header row. `countBytes` hears the raw bytes read.
 */
export async function* readSource(path: string, kind: 'jsonl' | 'csv', countBytes: (n: number) => void = () => undefined): AsyncGenerator<SourceRecord> {
  const bytes = await openBytes(path, countBytes);
  if (kind === 'csv') {
    const parser = bytes.pipe(parseCsv({ columns: true, info: true, relax_column_count: true, skip_empty_lines: true, bom: true }));
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, unknown>; info: { lines: number } }>) {
      yield { line: info.lines, record };
    }
    return;
  }
  let line = 0;
  for await (const text of readline.createInterface({ input: bytes, crlfDelay: Infinity })) {
    line++;
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
