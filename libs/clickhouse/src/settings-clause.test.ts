import { withSettingsClause } from './settings-clause';

const settings: Record<string, unknown> = {
  max_execution_time: 60,
  max_result_rows: '500000',
  wait_end_of_query: 1,
  readonly: true,
  log_comment: `{"kind":"a","x":"it's \\ here"}`,
};

describe('withSettingsClause', () => {
  it("puts a read's settings in a clause before the client's FORMAT, HTTP-only ones left out, text escaped", () => {
    expect(withSettingsClause('SELECT 1 \nFORMAT JSONEachRow', settings as never)).toBe(
      `SELECT 1\nSETTINGS max_execution_time = 60, max_result_rows = '500000', readonly = 1, log_comment = '{"kind":"a","x":"it\\'s \\\\ here"}' \nFORMAT JSONEachRow`,
    );
    expect(withSettingsClause('  with a AS (SELECT 1) SELECT * FROM a UNION ALL SELECT 2', { max_threads: 0 })).toBe(
      '  with a AS (SELECT 1) SELECT * FROM a UNION ALL SELECT 2\nSETTINGS max_threads = 0',
    );
  });

  it.each([
    ['no settings', 'SELECT 1', undefined],
    ['only HTTP-only or undefined settings', 'SELECT 1', { wait_end_of_query: 1, max_threads: undefined }],
    ['a statement other than a read', 'INSERT INTO t SELECT 1', settings],
    ['a text with its own SETTINGS', 'SELECT 1 SETTINGS max_threads = 1', settings],
    ['a text with its own FORMAT', 'SELECT 1 FORMAT CSV \nFORMAT JSONEachRow', settings],
    ['a line comment that could swallow the clause', 'SELECT 1 -- note', settings],
    ['a block comment', 'SELECT 1 /* note', settings],
    ['a hash comment', 'SELECT 1 # note', settings],
    ['several statements', 'SELECT 1; SELECT 2', settings],
    ['INTO OUTFILE', "SELECT 1 INTO OUTFILE 'x'", settings],
    ['a setting name of another shape', 'SELECT 1', { 'max threads': 1 }],
    ['a value of another kind', 'SELECT 1', { max_threads: { a: 1 } as unknown as number }],
  ])('leaves %s to SET statements', (_name, sql, given) => {
    expect(withSettingsClause(sql, given as never)).toBeNull();
  });
});
