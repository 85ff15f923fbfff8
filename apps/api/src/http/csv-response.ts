import type { RequestHandler, Response } from 'express';
import { JSON_ANSWER_REPLACED } from '@sightline/http';

/**
 * Characters that make a spreadsheet read a cell as a formula (OWASP's CSV injection list: `=`,
 * `+`, `-`, `@`, tab and carriage return). Person and event properties are anyone's to set with
 * the public project key, so a cell starting with one is neutralised.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A CSV cell (RFC 4180): lists joined by `::`, objects as JSON text, quoted when needed. Text that
 * a spreadsheet would run as a formula gets a leading `'` and quotes, as OWASP recommends; numbers
 * and booleans are written as they are (a negative number is not a formula).
 */
export function csvCell(value: unknown): string {
  const text =
    value === null || value === undefined
      ? ''
      : Array.isArray(value) && value.every((v) => typeof v !== 'object' || v === null)
        ? value.join('::')
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
  const literal = typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
  if (!literal && FORMULA_START.test(text)) return `"'${text.replace(/"/g, '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvText(rows: readonly (readonly unknown[])[]): string {
  return rows.map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/** Objects as CSV: the columns are every key in first-seen order. */
export function objectsCsv(objects: readonly Record<string, unknown>[]): string {
  const columns = [...new Set(objects.flatMap((o) => Object.keys(o)))];
  return csvText([columns, ...objects.map((o) => columns.map((c) => o[c]))]);
}

function sendCsv(res: Response, body: unknown): void {
  const results = Array.isArray(body) ? body : (body as { results?: unknown } | null)?.results;
  const rows = (Array.isArray(results) ? results : []).filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null);
  res.type('text/csv; charset=utf-8').send(objectsCsv(rows));
}

/**
 * `?format=csv` on a list route: the page's `results` go out as CSV (one row per item, one column
 * per field) instead of JSON; an error still answers the DRF JSON body.
 */
export const csvListResponder: RequestHandler = (req, res, next) => {
  if (req.query['format'] !== 'csv') return next();
  const json = res.json.bind(res);
  res.locals[JSON_ANSWER_REPLACED] = true;
  res.json = (body: unknown) => {
    if (res.statusCode >= 400) return json(body);
    sendCsv(res, body);
    return res;
  };
  next();
};
