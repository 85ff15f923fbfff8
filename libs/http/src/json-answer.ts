import { nextWorkTurn } from './work-turns';
import type { Response } from 'express';

/** About how much JSON text is made between two turns of the event loop. */
const SLICE_CHARS = 64 * 1024;
/** Arrays and objects this deep are split element by element; deeper ones are one JSON.stringify call. */
const SPLIT_DEPTH = 3;

type Piece = { text: string } | { value: unknown; depth: number };

/**
 * An array of a few numbers, texts, booleans and nulls (a row of a HogQL or events answer): made
 * by one JSON.stringify call, as one element of a slice, where walking it made a piece per cell.
 */
function isSmallFlatArray(value: object): boolean {
  if (!Array.isArray(value) || value.length > 256) return false;
  let chars = 0;
  for (const item of value) {
    if (typeof item === 'string') chars += item.length;
    else if (item !== null && typeof item !== 'number' && typeof item !== 'boolean') return false;
  }
  return chars <= SLICE_CHARS;
}

/** `value` as JSON.stringify sees it: after toJSON, and undefined for what it leaves out. */
function jsonValue(value: unknown, key: string): unknown {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON(key: string): unknown }).toJSON(key);
  }
  return typeof value === 'function' || typeof value === 'symbol' ? undefined : value;
}

/**
 * The JSON text of `value` (exactly JSON.stringify's) in slices of about 64 KiB, with a turn of
 * the event loop between slices: a large answer is made while capture, decide and every other
 * request keep being served, where one JSON.stringify call holds the process for its whole
 * length. The outer arrays and objects are walked here, each element then made by
 * JSON.stringify, which stays the fast path for the leaves.
 */
export async function* jsonChunks(value: unknown): AsyncGenerator<string> {
  const stack: Piece[] = [{ value: jsonValue(value, ''), depth: 0 }];
  // An answer often holds one array in many places (a trend's days, labels and ISO days are the
  // same arrays in each of hundreds of series): its text is made once and reused.
  const arrayTexts = new Map<unknown[], string>();
  let slice = '';
  while (stack.length > 0) {
    const piece = stack.pop()!;
    if ('text' in piece) slice += piece.text;
    else if (Array.isArray(piece.value) && piece.depth >= SPLIT_DEPTH) {
      let text = arrayTexts.get(piece.value);
      if (text === undefined) arrayTexts.set(piece.value, (text = JSON.stringify(piece.value)));
      slice += text;
    } else if (piece.depth >= SPLIT_DEPTH || piece.value === null || typeof piece.value !== 'object' || isSmallFlatArray(piece.value)) {
      slice += JSON.stringify(piece.value) ?? 'null';
    } else {
      const depth = piece.depth + 1;
      const parts: Piece[] = [];
      if (Array.isArray(piece.value)) {
        piece.value.forEach((item, i) => {
          const v = jsonValue(item, String(i));
          parts.push(...(i > 0 ? [{ text: ',' }] : []), v === undefined ? { text: 'null' } : { value: v, depth });
        });
        parts.unshift({ text: '[' });
      } else {
        for (const [k, item] of Object.entries(piece.value)) {
          const v = jsonValue(item, k);
          if (v === undefined) continue;
          parts.push({ text: `${parts.length > 0 ? ',' : ''}${JSON.stringify(k)}:` }, { value: v, depth });
        }
        parts.unshift({ text: '{' });
      }
      parts.push({ text: Array.isArray(piece.value) ? ']' : '}' });
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
    }
    if (slice.length >= SLICE_CHARS) {
      yield slice;
      slice = '';
      await nextWorkTurn();
    }
  }
  if (slice) yield slice;
}

/** The UTF-8 length of `value`'s JSON, made as jsonChunks makes it; past `maxBytes` it stops and answers null. */
export async function jsonByteLength(value: unknown, maxBytes = Infinity): Promise<number | null> {
  let bytes = 0;
  for await (const chunk of jsonChunks(value)) {
    bytes += Buffer.byteLength(chunk);
    if (bytes > maxBytes) return null;
  }
  return bytes;
}

/** Resolves once the response can take more, or is gone. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Set on `res.locals` by a handler that replaced `res.json` to answer in another format (a list
 * route's `?format=csv`): sendJson then hands the value to that `res.json`.
 */
export const JSON_ANSWER_REPLACED = 'jsonAnswerReplaced';

/**
 * Writes `chunks` as the body (after the status and headers already set), each as it is made,
 * paced by the socket and with a turn of the event loop between two: a slow reader holds back
 * the making, not the process's memory, and other requests are served between the slices.
 */
export async function sendChunks(res: Response, chunks: AsyncIterable<string> | Iterable<string>): Promise<void> {
  for await (const chunk of chunks) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await drained(res);
    await nextWorkTurn();
  }
  res.end();
}

/**
 * Answers `value` as JSON (res.json's headers and body) made by jsonChunks, written as it is
 * made and paced by the socket: a slow reader holds back the making, not the process's memory.
 */
export async function sendJson(res: Response, value: unknown, status = 200): Promise<void> {
  if (res.locals[JSON_ANSWER_REPLACED]) {
    res.status(status).json(value);
    return;
  }
  res.status(status).type('application/json');
  for await (const chunk of jsonChunks(value)) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await drained(res);
  }
  res.end();
}
