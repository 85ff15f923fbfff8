/** Where in a query an error is: a character offset from its start (0-based). */
export interface QueryPosition {
  start: number;
}

/**
 * "… at 14", "… at position 14 (tables: …)": the offset the API wrote into the error's text, a
 * number standing alone after "at" (the last one when several).
 */
const MESSAGE_POSITION = /\bat (?:position |character |offset )?(\d{1,9})(?=$|[\s).,;:])/g;

/**
 * The position of a query error: the API's `start` (or `position`) field when its body has one,
 * else the offset its message ends with ("Unknown table 'evnts' at 14"). Null when it names none,
 * or one outside the query.
 */
export function errorPosition(body: Record<string, unknown> | null, message: string, text: string): QueryPosition | null {
  const field = body?.['start'] ?? body?.['position'];
  const raw =
    typeof field === 'number'
      ? field
      : typeof field === 'string' && /^\d+$/.test(field)
        ? Number(field)
        : Number([...message.matchAll(MESSAGE_POSITION)].at(-1)?.[1] ?? NaN);
  return Number.isInteger(raw) && raw >= 0 && raw <= text.length ? { start: raw } : null;
}

/** A character offset as the editor shows it: line and column (both from 1) and the line's text. */
export function lineAndColumn(text: string, start: number): { line: number; column: number; text: string } {
  const before = text.slice(0, start);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const lineEnd = text.indexOf('\n', lineStart);
  return { line, column: start - lineStart + 1, text: text.slice(lineStart, lineEnd === -1 ? undefined : lineEnd) };
}
