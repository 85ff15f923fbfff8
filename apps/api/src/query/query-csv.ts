import { csvText } from '../http/csv-response';

/** How much CSV text is made before it is written out (a slice, then a turn for other requests). */
const CSV_SLICE_CHARS = 64 * 1024;

/** A query answer that is rows: its column names and one array per row (EventsQuery, HogQLQuery, ActorsQuery). */
export interface RowsAnswer {
  columns: unknown[];
  results: unknown[][];
}

/** Whether an answer is rows that CSV can hold. */
export function isRowsAnswer(answer: Record<string, unknown>): answer is Record<string, unknown> & RowsAnswer {
  return Array.isArray(answer['columns']) && Array.isArray(answer['results']) && answer['results'].every(Array.isArray);
}

/**
 * The answer as CSV (RFC 4180, through csvCell: quoted when needed, formula-looking text
 * neutralised, objects as JSON): a header of the column names, then one line per row, in slices.
 */
export function* rowsCsvSlices(answer: RowsAnswer): Generator<string> {
  let slice = csvText([answer.columns.map(String)]);
  for (const row of answer.results) {
    slice += csvText([row]);
    if (slice.length >= CSV_SLICE_CHARS) {
      yield slice;
      slice = '';
    }
  }
  if (slice) yield slice;
}
