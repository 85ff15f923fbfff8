import { parse } from 'csv-parse/sync';
import type { TrendResult } from '@sightline/insights';
import { personsCsv } from '../persons';
import { trendResultCsv } from '../insights';
import { csvCell, csvText, objectsCsv } from './csv-response';

/** The cells a spreadsheet would read from the CSV text. */
const cellsOf = (text: string) => parse(text, { relax_column_count: true }) as string[][];

describe('CSV exports neutralise formulas (OWASP CSV injection)', () => {
  const formulas = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1:A2)', '\t=1', '\r=1'];

  it.each(formulas)('writes %j with a leading quote, quoted', (formula) => {
    const cell = csvCell(formula);
    expect(cell.startsWith(`"'`)).toBe(true);
    expect(cellsOf(`${cell}\r\n`)).toEqual([[`'${formula}`]]);
  });

  it('leaves other text, numbers and booleans as they are', () => {
    expect([csvCell('plain'), csvCell('a, b'), csvCell(-5), csvCell(-0.5), csvCell(true), csvCell(null), csvCell(' =x')]).toEqual([
      'plain',
      '"a, b"',
      '-5',
      '-0.5',
      'true',
      '',
      ' =x',
    ]);
    // A list or an object whose text would start a formula is neutralised too.
    expect(csvCell(['=1', 'b'])).toBe(`"'=1::b"`);
  });

  it('applies to list exports, headers included', () => {
    const text = objectsCsv([{ name: '=cmd|" /C calc"!A0', '@key': 1 }]);
    expect(cellsOf(text)).toEqual([
      ['name', "'@key"],
      [`'=cmd|" /C calc"!A0`, '1'],
    ]);
    expect(csvText([['-x', -1]])).toBe(`"'-x",-1\r\n`);
  });

  it('applies to the persons export, whose properties anyone with the project key can set', () => {
    const text = personsCsv([
      {
        type: 'person',
        id: 1,
        uuid: '0188a2d4-0000-0000-0000-000000000001',
        name: '=1+1',
        distinct_ids: ['@me'],
        properties: { plan: '+pro', note: '\tlead', n: -3 },
        is_identified: true,
        created_at: '2024-03-01T00:00:00.000Z',
      },
    ]);
    const [header, row] = cellsOf(text);
    expect(header).toEqual(['id', 'uuid', 'name', 'distinct_ids', 'is_identified', 'created_at', 'properties.n', 'properties.note', 'properties.plan']);
    expect(row).toEqual(['1', '0188a2d4-0000-0000-0000-000000000001', "'=1+1", "'@me", 'true', '2024-03-01T00:00:00.000Z', '-3', "'\tlead", "'+pro"]);
  });

  it('applies to the trend export (event names and breakdown values)', () => {
    const result = {
      result: [{ label: '=evil', breakdown_value: '-1+2', days: ['2024-01-01'], data: [-1], count: 0 }],
      next: null,
      timezone: 'UTC',
      is_cached: false,
      last_refresh: '',
    } as unknown as TrendResult;
    expect(cellsOf(trendResultCsv(result))[1]).toEqual(["'=evil", "'-1+2", '-1']);
  });
});
