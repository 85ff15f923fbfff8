import { createHogQLCompiler, HogQLError, type HogQLCompiler } from '../hogql-compiler';
import { compileSelect, quoteIdentifier } from './select-compiler';

describe('SELECT compiler (PostHog AST → ClickHouse SQL bound to one project)', () => {
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    compiler = await createHogQLCompiler();
  });
  afterAll(() => compiler.close());

  const compile = async (text: string, values = {}, timezone?: string) =>
    compileSelect(await compiler.parseSelect(text), { teamId: 42, text, values, timezone, limits: { default: 100, max: 50_000 } });
  const refusal = async (text: string) => {
    try {
      await compile(text);
    } catch (error) {
      if (error instanceof HogQLError) return { message: error.message, start: error.start };
      throw error;
    }
    return null;
  };

  it.each([
    "SELECT event, count() FROM events WHERE properties.$browser = 'Chrome' GROUP BY event WITH ROLLUP ORDER BY count() DESC",
    'SELECT e.person.properties.email, p.properties.plan FROM events e LEFT JOIN persons p ON p.id = e.person_id',
    'WITH v AS (SELECT distinct_id FROM events) SELECT count() FROM v UNION ALL SELECT count() FROM person_distinct_ids',
    'SELECT distinct_id, row_number() OVER (PARTITION BY event ORDER BY timestamp) FROM events WHERE distinct_id IN (SELECT distinct_id FROM person_distinct_ids) LIMIT 5 OFFSET 10',
  ])('pins the SQL of %s', async (text) => {
    const { sql, params, columns } = await compile(text);
    expect({ sql, params, columns }).toMatchSnapshot();
  });

  it.each([
    "SELECT count() FROM events WHERE event = 'a' AND properties.$browser = 'Chrome' AND distinct_id = 'd' AND timestamp > toDateTime('2024-01-01 00:00:00') AND now() - toIntervalDay(7) <= timestamp",
    "SELECT count() FROM events e RIGHT JOIN persons p ON p.id = e.person_id WHERE e.event = 'a'",
  ])('pins which conditions of %s the events subquery of a project in Europe/Berlin applies before FINAL', async (text) => {
    const { sql, params } = await compile(text, {}, 'Europe/Berlin');
    expect({ sql, params }).toMatchSnapshot();
  });

  it('applies before FINAL only the sort-key conditions: not those on properties or distinct_id, nor under an outer join', async () => {
    const subqueryWhere = (sql: string) => sql.match(/FROM events AS src FINAL\s+WHERE ([^\n]*)\) AS __t0/)![1]!;
    const keyed = await compile(
      "SELECT count() FROM events WHERE event IN ('a', 'b') AND properties.$browser = 'Chrome' AND distinct_id = 'd' AND timestamp BETWEEN toDateTime('2024-01-01 00:00:00') AND now()",
      {},
      'Europe/Berlin',
    );
    const where = subqueryWhere(keyed.sql);
    expect(where).toMatch(/src\.event IN tuple\(/);
    expect(where).toMatch(
      /toDate\(src\.timestamp\) >= toDate\(toDateTime64\(\{h\d+:String\}, 6, \{h\d+:String\}\), 'UTC'\)\) AND \(toDate\(src\.timestamp\) <= toDate\(now\(\), 'UTC'\)\)/,
    );
    expect(where).not.toMatch(/properties|distinct_id/);
    // A UTC project's timestamp is read as stored: ClickHouse's key analysis uses the outer condition itself.
    const utc = subqueryWhere((await compile("SELECT count() FROM events WHERE event = 'a' AND timestamp > toDateTime('2024-01-01 00:00:00')")).sql);
    expect(utc).toMatch(/^src\.team_id = \{h\d+:Int64\} AND \(src\.event = \{h\d+:String\}\)$/);
    // A condition on the timestamp against a text or a date is left outside: its reading depends on a time zone.
    const loose = await compile("SELECT count() FROM events WHERE timestamp > '2024-01-01' AND timestamp < today() OR event = 'a'", {}, 'Europe/Berlin');
    expect(subqueryWhere(loose.sql)).toMatch(/^src\.team_id = \{h\d+:Int64\}$/);
    const outer = await compile("SELECT count() FROM events e FULL OUTER JOIN persons p ON p.id = e.person_id WHERE e.event = 'a'");
    expect(outer.sql).not.toMatch(/src\.event =/);
  });

  it('does not test again outside the events subquery a condition it applies exactly before FINAL', async () => {
    const outerWhere = (sql: string) => sql.match(/\) AS __t\d+\n(WHERE [^\n]*)/)?.[1] ?? '';
    // bench:sql "window: running total": one filter per row fewer than before.
    const window = await compile(
      "SELECT d, n, sum(n) OVER (ORDER BY d) FROM (SELECT toDate(timestamp) AS d, count() AS n FROM events WHERE event = 'signup' GROUP BY d) ORDER BY d",
    );
    expect(window.sql).toMatch(/src\.event = \{h\d+:String\}/);
    expect(window.sql).not.toMatch(/__t\d+\.`event`/);
    expect(window.sql).not.toMatch(/\nWHERE/);
    // What is not applied exactly stays: properties, distinct_id, a non-UTC project's widened days.
    const berlin = await compile(
      "SELECT count() FROM events WHERE event = 'a' AND properties.x = 'y' AND timestamp > toDateTime('2024-01-01 00:00:00')",
      {},
      'Europe/Berlin',
    );
    expect(outerWhere(berlin.sql)).toMatch(/^WHERE .*JSONExtract\(__t0\.`properties`, .* AND \(\(__t0\.`timestamp` > toDateTime64\(/);
    expect(outerWhere(berlin.sql)).not.toMatch(/`event`/);
    // Under an outer join the condition is not applied first, so it stays.
    const outer = await compile("SELECT count() FROM events e FULL OUTER JOIN persons p ON p.id = e.person_id WHERE e.event = 'a'");
    expect(outer.sql).toMatch(/WHERE \(__t0\.`event` = \{h\d+:String\}\)/);
    // An OR is not split: it stays whole.
    const or = await compile("SELECT count() FROM events WHERE event = 'a' OR event = 'b'");
    expect(outerWhere(or.sql)).toMatch(/`event`.*OR.*`event`/);
  });

  it('binds every table reference to the project, at any depth', async () => {
    const { sql, params } = await compile(
      'WITH c AS (SELECT distinct_id FROM events) SELECT count() FROM c JOIN (SELECT distinct_id FROM person_distinct_ids) d ON d.distinct_id = c.distinct_id WHERE c.distinct_id IN (SELECT key FROM groups) UNION ALL SELECT count() FROM persons',
    );
    const team = Object.entries(params).find(([, v]) => v === 42)![0];
    // events, person_distinct_ids, groups and persons: each read once, each bound to the project.
    expect(sql.match(/FROM (events|person|person_distinct_id2|groups) AS src/g)).toHaveLength(4);
    expect(sql.match(new RegExp(`src\\.team_id = \\{${team}:Int64\\}`, 'g'))).toHaveLength(4);
  });

  it('quotes names and binds values: nothing of the query is pasted into the SQL', async () => {
    const { sql, params } = await compile("SELECT properties.`we'ird` AS `a``b\\\\c`, 'x'' OR 1=1 --' AS s FROM events WHERE event = {e}", { e: "'; DROP" });
    expect(sql).not.toContain('OR 1=1');
    expect(sql).not.toContain('DROP');
    expect(sql).toContain('AS `a\\`b\\\\c`');
    expect(Object.values(params)).toEqual(expect.arrayContaining(["we'ird", "x' OR 1=1 --", "'; DROP"]));
    expect(quoteIdentifier('a`b')).toBe('`a\\`b`');
    expect(() => quoteIdentifier('a\u0000b')).toThrow(HogQLError);
  });

  it.each([
    ['SELECT * FROM evnts', "Unknown table 'evnts' at 14", 14],
    ['SELECT 1 FROM events e JOIN evnts x ON 1', "Unknown table 'evnts' at 28", 28],
    ["SELECT * FROM file('x')", "Table functions are not allowed: 'file' at 14", 14],
    ['SELECT nope FROM events', "Unknown field 'nope' at 7", 7],
    ['SELECT event FROM events a JOIN events b ON 1', "Field 'event' is ambiguous: name its table at 7", 7],
    ['SELECT 1 AS __t0', "The name '__t0' is reserved at 7", 7],
    ['SELECT count() FROM events GROUP BY event WITH TOTALS', 'WITH TOTALS is not supported at 0', 0],
    ['SELECT 1 FROM events PREWHERE 1', 'PREWHERE (use WHERE) is not supported at 0', 0],
    ['SELECT 1 LIMIT {n}', 'LIMIT must be a whole number at 15', 15],
  ])('refuses %s', async (text, message, start) => {
    expect(await refusal(text)).toEqual({ message: expect.stringContaining(message), start });
  });

  it('names a column by the text of its expression, line breaks read as spaces', async () => {
    expect((await compile('SELECT count(\n)\t+ 1 FROM events')).columns).toEqual(['count( ) + 1']);
  });

  it('asks for one row past the limit, at most the maximum', async () => {
    expect((await compile('SELECT 1 LIMIT 1000000')).limit).toBe(50_000);
    const { params, limit, offset } = await compile('SELECT 1 LIMIT 7 OFFSET 3');
    expect([limit, offset]).toEqual([7, 3]);
    expect(Object.values(params)).toEqual(expect.arrayContaining([8, 3]));
  });

  it('refuses a query nested past its bound before parsing it', async () => {
    await expect(compiler.parseSelect(`SELECT ${'('.repeat(13)}1${')'.repeat(13)}`)).rejects.toThrow(/at most 12 deep/);
    // A quote inside a comment does not hide the brackets after it.
    await expect(compiler.parseSelect(`SELECT 1 -- '\n + ${'('.repeat(13)}1${')'.repeat(13)}`)).rejects.toThrow(/at most 12 deep/);
  });
});
