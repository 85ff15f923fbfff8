import { errorPosition, lineAndColumn } from '../apps/web/src/sql-position';

describe('the SQL page places an error in the query', () => {
  const text = 'SELECT event\nFROM evnts\nLIMIT 10';

  it('reads the offset from the error body, else from the end of its message', () => {
    expect(errorPosition({ start: 18 }, 'Unknown table', text)).toEqual({ start: 18 });
    expect(errorPosition({ position: '18' }, 'Unknown table', text)).toEqual({ start: 18 });
    expect(errorPosition(null, "Unknown table 'evnts' at 18", text)).toEqual({ start: 18 });
    expect(errorPosition({ detail: 'x' }, 'Syntax error at position 7.', text)).toEqual({ start: 7 });
    expect(errorPosition(null, "Unknown table 'evnts' at 18 (tables: events, persons)", text)).toEqual({ start: 18 });
  });

  it('names no position when there is none, or one outside the query', () => {
    expect(errorPosition(null, 'The query took too long (max_execution_time).', text)).toBeNull();
    expect(errorPosition({ start: 999 }, 'x', text)).toBeNull();
    expect(errorPosition({ start: -1 }, 'x', text)).toBeNull();
    // A number inside the message is not a position.
    expect(errorPosition(null, 'LIMIT at most 50000 rows', text)).toBeNull();
    expect(errorPosition(null, 'Runs at 10x the cost', text)).toBeNull();
  });

  it('shows an offset as its line and column and the line itself', () => {
    expect(lineAndColumn(text, 18)).toEqual({ line: 2, column: 6, text: 'FROM evnts' });
    expect(lineAndColumn(text, 0)).toEqual({ line: 1, column: 1, text: 'SELECT event' });
    expect(lineAndColumn(text, text.length)).toEqual({ line: 3, column: 9, text: 'LIMIT 10' });
  });
});
